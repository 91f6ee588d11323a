"""Function jobs against a bare interpreter and against submitit and joblib, in one process, alternating.

    pip install submitit joblib     # the peers, for this benchmark only: not dependencies of jupyter_sched
    .venv/bin/python benchmarks/bench_functions.py [--runs 15] [--sweep 32] [--concurrent 2] [--rounds 3]

1. ``jupyter_sched.submit(f).result()`` for a trivial ``f`` on local_cwd, the replica forked from the warm
   zygote (the default) and exec'd (``JUPYTER_SCHED_ZYGOTE=0``, the fallback), against
   ``subprocess.run([python, "-c", "print(1 + 1)"])`` (aim: within 1.5x), a ``python -c`` that does the
   replica's work (import cloudpickle, unpickle ``f``, call it), submitit's ``LocalExecutor`` (a fresh
   interpreter per job, then polled) and joblib's ``Parallel(n_jobs=2)`` on its warm worker pool (its
   workers stay between calls: no interpreter starts per call). Run by run, alternated; ratios of medians.
2. A sweep of N trivial runs, C at a time (``jupyter_sched.sweep(..., max_concurrent=C)``), against N/C
   times one ``python -c`` (the aim: within that), submitit's ``map_array`` (``LocalExecutor`` has no cap on
   concurrency: it starts all N at once) and joblib's ``Parallel(n_jobs=C)`` over the N calls (warm pool).
   Round by round, alternated; medians over the rounds.

A peer that is not installed is left out, with a note saying how to install it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import median, note, result, timed  # noqa: E402

import jupyter_sched  # noqa: E402
from jupyter_sched.schedulers.local.warm_starts.zygote import ZYGOTE_ENV  # noqa: E402


def trivial(x: int = 1) -> int:
    return x + 1


def peer(name: str) -> Optional[Any]:
    try:
        return __import__(name)
    except ImportError:
        note(name, f"not installed: its columns are left out (pip install {name})")
        return None


class Exec:
    """Within the block, function replicas are exec'd (the fallback path), as with JUPYTER_SCHED_ZYGOTE=0."""

    def __enter__(self) -> None:
        os.environ[ZYGOTE_ENV] = "0"

    def __exit__(self, *exc: object) -> None:
        os.environ.pop(ZYGOTE_ENV, None)


def bench_submit(runs: int, peer_runs: int, tmp: str) -> None:
    import cloudpickle

    submitit, joblib = peer("submitit"), peer("joblib")
    jupyter_sched.submit(trivial).result()  # warm: the runner, its IO thread, reaper and zygote
    with Exec():
        jupyter_sched.submit(trivial).result()
    bare = "print(1 + 1)"
    same = "import sys, cloudpickle; f = cloudpickle.loads(sys.stdin.buffer.read()); print(f())"
    payload = cloudpickle.dumps(trivial)
    times: Dict[str, List[float]] = {k: [] for k in ("warm", "exec", "raw", "raw_same", "submitit", "joblib")}
    executor = pool = None
    if submitit is not None:
        executor = submitit.LocalExecutor(folder=os.path.join(tmp, "submitit"))
        executor.update_parameters(timeout_min=5)
    if joblib is not None:
        pool = joblib.Parallel(n_jobs=2)
        pool(joblib.delayed(trivial)() for _ in range(2))  # its workers start here, once

    def exec_once() -> None:
        with Exec():
            jupyter_sched.submit(trivial).result()

    steps: Dict[str, Callable[[], object]] = {
        "warm": lambda: jupyter_sched.submit(trivial).result(),
        "exec": exec_once,
        "raw": lambda: subprocess.run([sys.executable, "-c", bare], check=True, capture_output=True),
        "raw_same": lambda: subprocess.run([sys.executable, "-c", same], input=payload, check=True,
                                           capture_output=True),  # fmt: skip
    }
    if pool is not None:
        steps["joblib"] = lambda: pool(joblib.delayed(trivial)() for _ in range(1))  # type: ignore[union-attr]
    for i in range(runs):
        for name, step in steps.items():
            times[name].append(timed(step))
        if executor is not None and i < peer_runs:  # about a second each: it polls the job's files
            times["submitit"].append(timed(lambda: executor.submit(trivial).result()))  # type: ignore[union-attr]
    warm = median(times["warm"])
    result("submit(f).result(), forked warm, vs python -c 'print(1 + 1)'", warm, median(times["raw"]), aim="<= 1.5x")
    result("submit(f).result(), exec'd (JUPYTER_SCHED_ZYGOTE=0), vs python -c 'print(1 + 1)'",
           median(times["exec"]), median(times["raw"]))  # fmt: skip
    result("submit(f).result(), forked warm, vs python -c: cloudpickle.loads(f)()", warm, median(times["raw_same"]))
    if times["submitit"]:
        result("submitit LocalExecutor.submit(f).result() vs ours (warm)", median(times["submitit"]), warm)
    if times["joblib"]:
        result("joblib Parallel(n_jobs=2), warm pool, one call, vs ours (warm)", median(times["joblib"]), warm)


def bench_sweep(n: int, concurrent: int, rounds: int, tmp: str) -> None:
    submitit, joblib = peer("submitit"), peer("joblib")
    code = "print(1 + 1)"
    times: Dict[str, List[float]] = {k: [] for k in ("warm", "exec", "one", "submitit", "joblib")}
    executor = pool = None
    if submitit is not None:
        executor = submitit.LocalExecutor(folder=os.path.join(tmp, "submitit-sweep"))
        executor.update_parameters(timeout_min=5)
    if joblib is not None:
        pool = joblib.Parallel(n_jobs=concurrent)
        pool(joblib.delayed(trivial)(x) for x in range(concurrent))  # its workers start here, once

    def ours() -> None:
        values = jupyter_sched.sweep(trivial, {"x": list(range(n))}, max_concurrent=concurrent).results()
        assert values == [x + 1 for x in range(n)], values

    def ours_exec() -> None:
        with Exec():
            ours()

    for _ in range(rounds):
        times["one"].append(timed(lambda: subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)))
        times["warm"].append(timed(ours))
        times["exec"].append(timed(ours_exec))
        if pool is not None:
            times["joblib"].append(timed(lambda: pool(joblib.delayed(trivial)(x) for x in range(n))))  # type: ignore[union-attr]
        if executor is not None:
            times["submitit"].append(
                timed(lambda: [j.result() for j in executor.map_array(trivial, list(range(n)))])  # type: ignore[union-attr]
            )
    floor = median(times["one"]) * n / concurrent
    label = f"sweep of {n} runs, {concurrent} at a time"
    result(f"{label}, forked warm, vs {n // concurrent} x python -c", median(times["warm"]), floor, aim="<= 1x")
    result(f"{label}, exec'd, vs {n // concurrent} x python -c", median(times["exec"]), floor)
    if times["submitit"]:
        result(f"{label}: submitit map_array (all {n} at once) vs ours (warm)", median(times["submitit"]),
               median(times["warm"]))  # fmt: skip
    if times["joblib"]:
        result(f"{label}: joblib Parallel(n_jobs={concurrent}), warm pool, vs ours (warm)", median(times["joblib"]),
               median(times["warm"]))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--peer-runs", type=int, default=5, help="submitit's one-call runs (about 1 s each)")
    parser.add_argument("--sweep", type=int, default=32)
    parser.add_argument("--concurrent", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_submit(args.runs, args.peer_runs, tmp)
        bench_sweep(args.sweep, args.concurrent, args.rounds, tmp)


if __name__ == "__main__":
    main()
