"""Function jobs against a bare interpreter, in one process.

    .venv/bin/python benchmarks/bench_functions.py [--runs 15] [--sweep 100]

1. ``jupyter_sched.submit(f).result()`` for a trivial ``f`` on local_cwd vs ``subprocess.run([sys.executable,
   "-c", ...])``, twice: a bare ``print(1 + 1)``, and the same work as a replica does (import cloudpickle,
   unpickle ``f`` from stdin, call it). Both start one Python; ours also pickles the call, dry-runs,
   launches through the scheduler, writes and reads the result file. Alternated run by run; the ratio of
   medians is printed (aim: within 1.5x). Importing cloudpickle (dataclasses, inspect, enum, typing) is
   about as long as starting the interpreter itself, which is why the first ratio cannot reach 1.5x.
2. A sweep of N trivial runs (``max_concurrent=4``): its scheduling overhead per run, i.e. the sweep's wall
   time minus the replicas' own run time (from the scheduler's started/finished records) divided by N,
   and the same N runs as ``subprocess.run`` four at a time for comparison.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import median, note, result, timed  # noqa: E402

import jupyter_sched  # noqa: E402


def trivial(x: int = 1) -> int:
    return x + 1


def bench_submit(runs: int) -> None:
    import cloudpickle

    jupyter_sched.submit(trivial).result()  # warm: the runner, its IO thread and reaper
    bare = "print(1 + 1)"
    same = "import sys, cloudpickle; f = cloudpickle.loads(sys.stdin.buffer.read()); print(f())"
    payload = cloudpickle.dumps(trivial)
    ours, raw, raw_same = [], [], []
    for _ in range(runs):
        ours.append(timed(lambda: jupyter_sched.submit(trivial).result()))
        raw.append(timed(lambda: subprocess.run([sys.executable, "-c", bare], check=True, capture_output=True)))
        raw_same.append(timed(lambda: subprocess.run([sys.executable, "-c", same], input=payload, check=True,
                                                     capture_output=True)))  # fmt: skip
    result("submit(f).result() vs subprocess.run(python -c 'print(1 + 1)')", median(ours), median(raw), aim="<= 1.5x")
    result("submit(f).result() vs subprocess.run(python -c: cloudpickle.loads(f)())", median(ours), median(raw_same))


def bench_sweep(n: int) -> None:
    start = time.perf_counter()
    sweep = jupyter_sched.sweep(trivial, {"x": list(range(n))}, max_concurrent=4)
    sweep.results()
    wall = time.perf_counter() - start
    spans = []
    for run in sweep.runs:
        status = run.job.fetch_status()
        reps = [r for role in status.roles for r in role.replicas]
        spans.append(max(r.finished for r in reps) - min(r.started for r in reps))
    busy = sum(spans) / 4  # four replicas at a time, if the feeder kept every slot full
    code = "import sys; print(1 + 1)"

    def one(_: int) -> None:
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)

    raw_start = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(n)))
    raw_wall = time.perf_counter() - raw_start
    result(f"sweep of {n} runs, 4 at a time: wall", wall, raw_wall, note="raw = subprocess.run x N, 4 threads")
    note(f"sweep of {n} runs: scheduling overhead per run", f"{(wall - busy) / n * 1000:.1f} ms"
         f" (wall {wall:.2f} s, replicas busy {sum(spans):.2f} s over 4 slots)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sweep", type=int, default=100)
    args = parser.parse_args()
    bench_submit(args.runs)
    bench_sweep(args.sweep)


if __name__ == "__main__":
    main()
