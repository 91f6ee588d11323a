"""A stand-in for a training script: a progress bar drawn with \r, a warning on stderr, a coloured summary.

    python scripts/train.py [--steps N] [--delay SECONDS] [--fail]

With --fail it prints an error in red on stderr and exits with code 3 instead of finishing; with
--fail-rank R only the replica of rank R does (the rank is $RANK, else the replica id).
"""

import argparse
import os
import sys
import time

GREEN, RED, RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--delay", type=float, default=0.05)
parser.add_argument("--fail", action="store_true")
parser.add_argument("--fail-rank", type=int, default=None)
args = parser.parse_args()

rank = os.environ.get("RANK", os.environ.get("JUPYTER_SCHED_REPLICA_ID", "0"))
print(f"replica {rank}: {args.steps} steps, lr={os.environ.get('LR', '0.01')}", flush=True)
width = 20
for step in range(args.steps + 1):
    bar = "#" * (width * step // args.steps)
    print(f"\rtrain: {100 * step // args.steps:3d}% [{bar:<{width}}]", end="", flush=True)
    time.sleep(args.delay)
print(flush=True)
if args.fail or args.fail_rank == int(rank):
    print(f"{RED}error: loss is NaN at step {args.steps}{RESET}", file=sys.stderr, flush=True)
    sys.exit(3)
print("warning: the dataset is tiny", file=sys.stderr, flush=True)
time.sleep(0.2)  # keep stdout and stderr in a stable order in the combined log
print(f"{GREEN}done{RESET}: loss 0.042", flush=True)
