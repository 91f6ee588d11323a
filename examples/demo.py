"""A two-replica app on local_cwd: each replica draws a progress bar and prints coloured lines.

Run with ``bash scripts/demo.sh``. It shows the scheduler's request (dry run), runs the app, follows
both replicas' logs as they are written and prints the final status.
"""

from __future__ import annotations

import sys
import threading

from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role, macros

TRAIN = r"""
import os, sys, time
rank = int(os.environ["JUPYTER_SCHED_REPLICA_ID"])
print(f"\033[1;34mreplica {rank}\033[0m starting on {os.environ['JUPYTER_SCHED_RANK0_HOST']}")
for step in range(0, 101, 10):
    sys.stdout.write(f"\rtraining {step:3d}% " + "#" * (step // 10))
    sys.stdout.flush()
    time.sleep(0.05)
print()
print(f"\033[32mreplica {rank} done\033[0m", file=sys.stderr)
"""


def follow(runner, handle: str, k: int, lock: threading.Lock) -> None:  # type: ignore[no-untyped-def]
    """Prints replica ``k``'s log items prefixed with ``trainer/k``, keeping \\r frames in place."""
    for item in runner.log_lines(handle, "trainer", k, should_tail=True):
        body = item.rstrip("\r\n")
        end = item[len(body):]
        with lock:
            sys.stdout.write(f"trainer/{k} {body}{end if end != chr(13) else chr(10)}")
            sys.stdout.flush()


def main() -> int:
    app = AppDef(
        "demo",
        [Role("trainer", "unused", entrypoint=sys.executable, args=["-c", TRAIN, macros.replica_id], num_replicas=2)],
    )
    with get_runner("demo") as runner:
        print("=== dry run: what local_cwd would start ===")
        print(runner.dryrun(app, "local_cwd"))
        handle = runner.run(app, "local_cwd")
        print(f"\n=== running {handle} ===")
        lock = threading.Lock()
        threads = [threading.Thread(target=follow, args=(runner, handle, k, lock)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        status = runner.wait(handle)
        assert status is not None
        print("\n=== final status ===")
        print(status.format())
        return 0 if status.state.name == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
