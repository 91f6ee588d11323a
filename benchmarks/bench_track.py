"""The cost of ``jupyter_sched.track.log`` in a training loop: 100,000 calls of two keys against the same
loop without them, alternating in one process (the goal of issue 34: under 0.5 s added).

The process is made a job's replica (the variables a scheduler sets, with a temporary metrics directory), so
every call queues a record and the writer thread writes them as it would in a job, during the loop (it
wakes once a second). ``loop`` is the tracked loop's wall time minus the bare loop's; ``flush`` is the time
of the ``track.flush()`` after it (writing what was still queued), which a job pays at its exit.
Usage: ``python benchmarks/bench_track.py [--calls 100000] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import List

from common import median


def bare(n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        loss, acc = 1.0 / (i + 1), i * 1e-5
        del loss, acc
    return time.perf_counter() - start


def tracked(n: int, log) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for i in range(n):
        loss, acc = 1.0 / (i + 1), i * 1e-5
        log({"loss": loss, "acc": acc})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update({"JUPYTER_SCHED_JOB_ID": "local_cwd://bench/app-1", "JUPYTER_SCHED_ROLE_NAME": "bench",
                           "JUPYTER_SCHED_REPLICA_ID": "0", "JUPYTER_SCHED_METRICS_DIR": tmp})  # fmt: skip
        from jupyter_sched import track

        assert not track.current().is_noop
        added: List[float] = []
        flushes: List[float] = []
        for _ in range(args.rounds):
            b = bare(args.calls)
            t = tracked(args.calls, track.log)
            start = time.perf_counter()
            track.flush()
            flushes.append(time.perf_counter() - start)
            added.append(t - b)
            print(f"bare {b:.3f} s  tracked {t:.3f} s  added {t - b:.3f} s  flush {flushes[-1]:.3f} s", flush=True)
        size = os.path.getsize(os.path.join(tmp, "bench.0.jsonl"))
        print(
            f"{args.calls:,} calls of two keys, median of {args.rounds}: the loop +{median(added):.3f} s"
            f" ({median(added) / args.calls * 1e6:.2f} us a call), then flush {median(flushes):.3f} s;"
            f" {size / 1e6:.1f} MB written"
        )


if __name__ == "__main__":
    main()
