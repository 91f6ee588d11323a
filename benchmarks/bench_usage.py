"""What watching usage costs, as % of one core, against a raw baseline doing the least that gives the
same numbers.

    .venv/bin/python benchmarks/bench_usage.py [--seconds 20] [--local 32] [--docker 8]

1. local: the local scheduler's sampler over N running replicas at 1 Hz (psutil over each process tree,
   peak tracking, the owner's ``usage.json``), against a raw loop that reads ``cpu_times`` and
   ``memory_info`` of the N leader processes once a second (no tree, no file).
2. docker: the docker scheduler's stats streams for N running containers (one connection each), against
   the docker SDK's own ``api.stats(stream=True, decode=True)`` generators, one thread per container.

The cost is the CPU time of exactly the threads doing the work (per-thread, from ``schedstat``), over a window
of ``--seconds``; nothing else in the process counts. The goals: local <= 2 % of one core for 32
replicas, docker <= 5 % for 8 containers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from typing import Callable, List

import psutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import note  # noqa: E402

from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler  # noqa: E402
from jupyter_sched.specs import AppDef, Role, resource  # noqa: E402


def thread_cpu(select: Callable[[threading.Thread], bool]) -> float:
    """CPU seconds used so far by this process's threads that ``select`` picks, from the scheduler's own
    nanosecond account (``/proc/self/task/TID/schedstat``; per-thread user/system times count in 10 ms
    ticks, too coarse for threads that wake once a second)."""
    total = 0
    for t in threading.enumerate():
        if select(t) and t.native_id is not None:
            try:
                with open(f"/proc/self/task/{t.native_id}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
    return total / 1e9


def cost(select: Callable[[threading.Thread], bool], seconds: float) -> float:
    """% of one core the selected threads use over ``seconds``."""
    before, start = thread_cpu(select), time.monotonic()
    time.sleep(seconds)
    return (thread_cpu(select) - before) / (time.monotonic() - start) * 100.0


def report(name: str, ours: float, raw: float, goal: float, **extra: object) -> None:
    ratio = ours / raw if raw else float("nan")
    verdict = "meets" if ours <= goal else "MISSES"
    note(name, f"{ours:.2f} % of one core vs raw {raw:.2f} % -> ratio {ratio:.2f}x ({verdict} the {goal:g} % goal)",
         ours=ours, raw=raw, ratio=ratio, goal=goal, **extra)


def bench_local(n: int, seconds: float) -> None:
    tmp = tempfile.mkdtemp(prefix="bench-usage-")
    sched = create_cwd_scheduler("bench", log_dir=tmp)
    app_id = sched.submit(AppDef("idle", [Role("r", "x", entrypoint="sleep", args=["600"], num_replicas=n)]), {})
    try:
        time.sleep(2.0)  # the first ticks
        ours = cost(lambda t: t.name == "jupyter_sched-usage", seconds)
        pids = [r.pid for rs in sched.describe(app_id).roles_statuses for r in rs.replicas]
        stop = threading.Event()

        def raw_loop() -> None:
            procs = [psutil.Process(p) for p in pids]
            while not stop.is_set():
                for p in procs:
                    p.cpu_times()
                    p.memory_info()
                stop.wait(1.0)
        thread = threading.Thread(target=raw_loop, name="raw-usage", daemon=True)
        thread.start()
        time.sleep(1.0)
        raw = cost(lambda t: t.name == "raw-usage", seconds)
        stop.set()
        report(f"local usage sampling, {n} replicas at 1 Hz", ours, raw, 2.0, replicas=n)
    finally:
        sched.cancel(app_id)
        sched.close()


def bench_docker(n: int, seconds: float) -> None:
    from jupyter_sched.schedulers.docker.labels import LABEL_APP_ID
    from jupyter_sched.schedulers.docker_scheduler import DockerScheduler

    sched = DockerScheduler(f"bench-{os.getpid()}")
    app = AppDef("idle", [Role("r", "jupyter-sched/busybox:local", entrypoint="sleep", args=["600"], num_replicas=n,
                               resource=resource(cpu=1, gpu=0, memMB=64))])
    app_id = sched.submit(app, {})
    try:
        deadline = time.monotonic() + 120
        while len(sched.usage(app_id)) < n and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(2.0)
        ours = cost(lambda t: t.name.startswith("jsched-stats-"), seconds)
        import docker

        api = docker.from_env().api  # a client of its own: the baseline shares no connection pool with ours
        ids = [c["Id"] for c in api.containers(filters={"label": [f"{LABEL_APP_ID}={app_id}"]})]
        assert len(ids) == n, ids
        stop = threading.Event()

        seen = [0] * len(ids)

        def raw_stream(i: int, cid: str) -> None:
            for _ in api.stats(cid, decode=True, stream=True):
                seen[i] += 1
                if stop.is_set():
                    return
        threads: List[threading.Thread] = [
            threading.Thread(target=raw_stream, args=(i, cid), name=f"raw-stats-{i}", daemon=True)
            for i, cid in enumerate(ids)
        ]
        for t in threads:
            t.start()
        time.sleep(2.0)
        before = list(seen)
        raw = cost(lambda t: t.name.startswith("raw-stats-"), seconds)
        stop.set()
        got = [b - a for a, b in zip(before, seen)]
        print(f"baseline records per stream in the window: {got}; {len(threads)} threads")
        report(f"docker stats streams, {n} containers", ours, raw, 5.0, containers=n)
    finally:
        sched.cancel(app_id)
        deadline = time.monotonic() + 120
        while not sched.describe(app_id).state.is_terminal and time.monotonic() < deadline:
            time.sleep(0.5)
        sched.cleanup(app_id, force=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--local", type=int, default=32)
    parser.add_argument("--docker", type=int, default=8)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.local:
        bench_local(args.local, args.seconds)
    if args.docker:
        bench_docker(args.docker, args.seconds)


if __name__ == "__main__":
    main()
