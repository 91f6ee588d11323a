"""local_docker against the raw docker SDK, in one process, on the real engine.

    .venv/bin/python benchmarks/bench_docker.py [--runs 7] [--lines 200000] [--apps 50] [--grace 2]

1. submit-to-finished, 1 and 4 replicas: ``runner.run`` + ``runner.wait`` vs SDK ``containers.run(detach=True)``
   per replica + ``wait()`` (on the same user-defined network; the default bridge is shown for reference)
2. cancel of 4 replicas whose PID 1 ignores SIGTERM, from ``runner.cancel`` to CANCELLED seen by
   ``runner.wait``; aim: grace + 1 s (raw: 4 SDK ``stop(timeout=grace)`` in parallel threads)
3. ``log_iter`` throughput after completion vs SDK ``container.logs().splitlines()``, and its scaling with size
4. ``list()`` with N apps on the engine vs one raw label-filtered container list call

Needs a running engine and ``jupyter-sched/busybox:local`` (``bash scripts/setup/docker.sh``). Everything it
creates is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Any, Callable, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import median, note, result, timed  # noqa: E402

from jupyter_sched.runner import get_runner  # noqa: E402
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler  # noqa: E402
from jupyter_sched.specs import AppDef, AppState, Role, random_id  # noqa: E402

IMAGE = "jupyter-sched/busybox:local"
SESSION = f"bench-{random_id()}"
LABEL = "jupyter_sched-bench"


def client() -> Any:
    import docker

    return docker.from_env()


def remove_raw(dc: Any) -> None:
    for c in dc.containers.list(all=True, filters={"label": LABEL}):
        c.remove(force=True)


def bench_submit(runs: int) -> None:
    dc = client()
    with get_runner(SESSION) as runner:
        sched = runner._scheduler("local_docker")
        assert isinstance(sched, DockerScheduler)
        warm = runner.run(AppDef("warm", [Role("r", IMAGE, entrypoint="true")]), "local_docker")  # makes the network
        runner.wait(warm)
        network = sched._network("jupyter_sched")
        for n in (1, 4):
            app = AppDef("true", [Role("r", IMAGE, entrypoint="true", num_replicas=n)])
            ours, raw, bridge = [], [], []

            def ours_once(app: AppDef = app) -> None:
                handle = runner.run(app, "local_docker")
                status = runner.wait(handle, wait_interval=1)
                assert status is not None and status.state == AppState.SUCCEEDED, status
                ours_once.handle = handle  # type: ignore[attr-defined]

            def raw_once(net: str, n: int = n) -> Callable[[], None]:
                def run() -> None:
                    cs = [
                        dc.containers.run(IMAGE, ["true"], detach=True, network=net, labels={LABEL: "1"})
                        for _ in range(n)
                    ]
                    for c in cs:
                        assert c.wait()["StatusCode"] == 0

                return run

            for _ in range(runs):
                ours.append(timed(ours_once))
                sched.cleanup(ours_once.handle.rsplit("/", 1)[1])  # type: ignore[attr-defined]
                raw.append(timed(raw_once(network)))
                remove_raw(dc)
                bridge.append(timed(raw_once("bridge")))
                remove_raw(dc)
            result(f"submit-to-finished, {n} replica(s)", median(ours), median(raw), replicas=n,
                   raw_default_bridge=median(bridge))  # fmt: skip
            note(f"  (raw on the default bridge, {n} replica(s))", f"{median(bridge) * 1000:.0f} ms")
        sched.prune()


def bench_cancel(runs: int, grace: float) -> None:
    dc = client()
    app = AppDef(
        "stubborn", [Role("r", IMAGE, entrypoint="sh", args=["-c", 'trap "" TERM; sleep 100'], num_replicas=4)]
    )
    with get_runner(SESSION) as runner:
        sched = runner._scheduler("local_docker")
        ours, calls, raw = [], [], []
        for _ in range(runs):
            handle = runner.run(app, "local_docker", cfg={"cancel_grace": grace})
            while runner.status(handle).state != AppState.RUNNING:  # type: ignore[union-attr]
                time.sleep(0.01)
            t0 = time.perf_counter()
            runner.cancel(handle)
            calls.append(time.perf_counter() - t0)
            status = runner.wait(handle, wait_interval=1)
            ours.append(time.perf_counter() - t0)
            assert status is not None and status.state == AppState.CANCELLED, status
            sched.cleanup(handle.rsplit("/", 1)[1])

            cs = [
                dc.containers.run(IMAGE, ["sh", "-c", 'trap "" TERM; sleep 100'], detach=True, labels={LABEL: "1"})
                for _ in range(4)
            ]
            t0 = time.perf_counter()
            threads = [threading.Thread(target=c.stop, kwargs={"timeout": int(grace)}) for c in cs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            raw.append(time.perf_counter() - t0)
            remove_raw(dc)
        name = f"cancel 4 SIGTERM-ignoring replicas to CANCELLED (grace {grace:g} s)"
        result(name, median(ours), median(raw), aim=grace + 1, cancel_call=median(calls))
        verdict = "met" if median(ours) <= grace + 1 else "MISSED"
        note(
            "  aim: grace + 1 s",
            f"{median(ours):.2f} s vs {grace + 1:.2f} s -> {verdict};"
            f" runner.cancel() returned in {median(calls) * 1000:.0f} ms",
        )


def bench_logs(runs: int, lines: int) -> None:
    dc = client()
    sched = DockerScheduler(SESSION)
    sizes = sorted({lines // 4, lines // 2, lines, lines * 2})
    per_line: List[float] = []
    vs_raw: List[float] = []
    for n in sizes:
        app_id = sched.submit(AppDef("seq", [Role("r", IMAGE, entrypoint="seq", args=[str(n)])]), {})
        container = dc.containers.get(sched._rows(app_id)[0]["Id"])
        container.wait()
        ours, raw = [], []
        for _ in range(runs if n == lines else max(3, runs // 2)):
            count = [0]

            def read_ours(app_id: str = app_id, count: List[int] = count) -> None:
                count[0] = sum(1 for _ in sched.log_iter(app_id, "r"))

            ours.append(timed(read_ours))
            assert count[0] == n, count
            raw.append(timed(lambda c=container: c.logs().splitlines()))
        if n == lines:
            result(
                f"log_iter throughput, {n:,} lines",
                n / median(ours),
                n / median(raw),
                unit="lines/s",
                higher_is_better=True,
                aim=0.8,
            )
            note("  throughput ratio (ours/raw, aim >= 0.8)", f"{median(raw) / median(ours):.2f}")
            follow: List[float] = []
            for _ in range(3):
                follow.append(timed(lambda a=app_id: sum(1 for _ in sched.log_iter(a, "r", should_tail=True))))
            note(
                f"  log_iter(should_tail=True) on the finished replica, {n:,} lines",
                f"{n / median(follow):,.0f} lines/s",
            )
        per_line.append(median(ours) / n)
        vs_raw.append(median(ours) / median(raw))
        note(
            f"  log_iter {n:,} lines",
            f"{median(ours) * 1000:.0f} ms ({median(ours) / n * 1e6:.2f} us/line; raw {median(raw) / n * 1e6:.2f})",
        )
        sched.cleanup(app_id)
    note(
        "  scaling: us/line at " + "/".join(f"{n // 1000}k" for n in sizes),
        " ".join(f"{x * 1e6:.2f}" for x in per_line)
        + f"; time ours/raw per size: {' '.join(f'{r:.2f}' for r in vs_raw)} (flat = linear, like the raw read)",
    )
    sched.close()


def bench_list(runs: int, apps: int) -> None:
    sched = DockerScheduler(SESSION)
    api = sched._docker().api
    ids = [sched.submit(AppDef(f"a{i}", [Role("r", IMAGE, entrypoint="true")]), {}) for i in range(apps)]
    for app_id in ids:
        while not sched.describe(app_id).state.is_terminal:  # type: ignore[union-attr]
            sched.wait_for_change(app_id, 0.5)
    ours, raw, desc, inspect = [], [], [], []
    for _ in range(runs):
        got = [0]

        def list_ours(got: List[int] = got) -> None:
            got[0] = len(sched.list())

        ours.append(timed(list_ours))
        assert got[0] == apps, got
        raw.append(timed(lambda: api.containers(all=True, filters={"label": [f"jupyter_sched.session={SESSION}"]})))
        desc.append(timed(lambda: sched.describe(ids[0])))
        inspect.append(timed(lambda: api.inspect_container(f"{ids[0]}-r-0")))
    result(f"list() with {apps} apps", median(ours), median(raw), apps=apps)
    result("describe() of one 1-replica app", median(desc), median(inspect))
    sched.prune()
    sched.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=200000)
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--grace", type=float, default=2.0)
    parser.add_argument("--only", choices=["submit", "cancel", "logs", "list"], action="append")
    args = parser.parse_args()
    only = set(args.only or ["submit", "cancel", "logs", "list"])
    try:
        if "submit" in only:
            bench_submit(args.runs)
        if "cancel" in only:
            bench_cancel(max(3, args.runs // 2), args.grace)
        if "logs" in only:
            bench_logs(args.runs, args.lines)
        if "list" in only:
            bench_list(args.runs, args.apps)
    finally:
        dc = client()
        remove_raw(dc)
        for c in dc.containers.list(all=True, filters={"label": f"jupyter_sched.session={SESSION}"}):
            c.remove(force=True)


if __name__ == "__main__":
    main()
