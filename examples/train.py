"""A stand-in training script for the demo: a progress bar redrawn with \\r, coloured output, stderr."""

import os
import sys
import time

rank = int(os.environ.get("JUPYTER_SCHED_REPLICA_ID", "0"))
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
print(f"\033[1;34mreplica {rank}\033[0m: {steps} steps, rank 0 is on {os.environ.get('TORCHX_RANK0_HOST')}")
for step in range(1, steps + 1):
    done = step * 20 // steps
    sys.stdout.write(f"\rtrain {step * 100 // steps:3d}% [{'#' * done}{'.' * (20 - done)}]")
    sys.stdout.flush()
    time.sleep(0.05)
print()
print(f"\033[33mwarning\033[0m: replica {rank} used a tiny dataset", file=sys.stderr)
print(f"\033[32mreplica {rank} done\033[0m: loss {0.5 / steps:.3f}")
