"""The local IO loop under many concurrent apps, and sweeps of trivial runs, in one process.

    .venv/bin/python benchmarks/bench_loop.py [--apps 1000] [--threads 2,16] [--sweeps 10] [--sweep-runs 32]

1. start-to-seen-finished: ``--apps`` trivial apps (``true``), N at a time for each N of ``--threads``
   (N threads, each ``runner.run`` then ``runner.wait``); the gap is from the call to ``run`` to ``wait``
   returning. Printed: worst, p99 and median, and how many passed 1 s; against the same number of
   ``subprocess.run(["true"])`` from as many threads, which shows what the machine's own scheduling adds.
   A join or a lock taken on the IO thread shows here as a stall of every app at once (issue 22: pairs of
   trivial apps took exactly 5 s now and then; it showed with 2 at a time, while with 16 the usage
   sampler was never idle).
2. sweep time: ``jupyter_sched.sweep`` of ``--sweep-runs`` trivial function runs, 2 at a time, timed
   ``--sweeps`` times: min, median and max (issue 22: 0.8 s to 20.7 s over five runs of the same code).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import note  # noqa: E402

import jupyter_sched  # noqa: E402
from jupyter_sched.runner import get_runner  # noqa: E402
from jupyter_sched.specs import AppDef, Role  # noqa: E402


def trivial(x: int = 1) -> int:
    return x + 1


def _gaps(total: int, threads: int, one: Callable[[], None]) -> List[float]:
    """Runs ``one`` ``total`` times from ``threads`` threads; each call's duration."""
    gaps: List[float] = []
    left = [total]
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            start = time.perf_counter()
            one()
            gaps.append(time.perf_counter() - start)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return gaps


def _spread(gaps: List[float]) -> str:
    ordered = sorted(gaps)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    median = statistics.median(ordered)
    return (
        f"worst {ordered[-1] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, median {median * 1000:.1f} ms,"
        f" {sum(g > 1.0 for g in ordered)} over 1 s (n={len(ordered)})"
    )


def bench_concurrent_apps(apps: int, threads: int, tmp: str) -> None:
    app = AppDef("trivial", [Role("main", "x", entrypoint="true")])
    with get_runner("bench", log_dir=tmp) as runner:
        runner.wait(runner.run(app, "local_cwd"))  # warm: the IO thread and the reaper

        def one() -> None:
            handle = runner.run(app, "local_cwd")
            status = runner.wait(handle)
            assert status is not None and status.state.name == "SUCCEEDED", status

        ours = _gaps(apps, threads, one)
    raw = _gaps(apps, threads, lambda: subprocess.run(["true"], check=True))
    note(
        f"start-to-seen-finished, {apps} trivial apps, {threads} at a time",
        _spread(ours),
        worst_ms=max(ours) * 1000, median_ms=statistics.median(ours) * 1000, over_1s=sum(g > 1.0 for g in ours),
    )  # fmt: skip
    note(
        f"raw: subprocess.run(['true']), {apps} times, {threads} at a time",
        _spread(raw),
        worst_ms=max(raw) * 1000, median_ms=statistics.median(raw) * 1000,
    )  # fmt: skip


def bench_sweeps(sweeps: int, runs: int) -> None:
    jupyter_sched.sweep(trivial, {"x": [0]}, max_concurrent=2).results()  # warm
    times = []
    for _ in range(sweeps):
        start = time.perf_counter()
        sweep = jupyter_sched.sweep(trivial, {"x": list(range(runs))}, max_concurrent=2)
        results = sweep.results()
        times.append(time.perf_counter() - start)
        assert list(results) == [x + 1 for x in range(runs)], results
    note(
        f"sweep of {runs} trivial runs, 2 at a time, {sweeps} times",
        f"min {min(times):.2f} s, median {statistics.median(times):.2f} s, max {max(times):.2f} s",
        min_s=min(times), median_s=statistics.median(times), max_s=max(times),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--threads", default="2,16", help="comma-separated: how many apps at a time, per pass")
    parser.add_argument("--sweeps", type=int, default=10)
    parser.add_argument("--sweep-runs", type=int, default=32)
    args = parser.parse_args()
    for threads in [int(n) for n in args.threads.split(",") if n.strip()]:
        with tempfile.TemporaryDirectory() as tmp:
            bench_concurrent_apps(args.apps, threads, tmp)
    if args.sweeps > 0:
        bench_sweeps(args.sweeps, args.sweep_runs)


if __name__ == "__main__":
    main()
