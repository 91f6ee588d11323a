"""A day of the Jobs sidebar in a few minutes, against a real ``jupyter server``: running apps, a long history,
clients polling the list each second, job views opened and closed in cycles, and a detail asked for all
along. Used by ``test_soak.py`` (a minute) and ``benchmarks/bench_server.py`` (as long as asked), which
report the same figures: list latency (median, p99), detail latency while listings refresh, and the
server's threads, open files and CPU before, during and after.
"""

from __future__ import annotations

import statistics
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import psutil

from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role
from tests.server.conftest import JobsServer, quote


@dataclass
class SoakReport:
    list_ms: List[float] = field(default_factory=list)
    detail_ms: List[float] = field(default_factory=list)
    streams: int = 0
    errors: List[str] = field(default_factory=list)
    before: Tuple[int, int] = (0, 0)
    after: Tuple[int, int] = (0, 0)
    peak: Tuple[int, int] = (0, 0)
    busy_cpu: float = 0.0
    idle_cpu: float = 0.0
    apps: int = 0

    def figures(self) -> Dict[str, Any]:
        def pct(values: List[float], q: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

        return {
            "apps": self.apps,
            "list requests": len(self.list_ms),
            "list median ms": round(statistics.median(self.list_ms), 1) if self.list_ms else None,
            "list p99 ms": round(pct(self.list_ms, 0.99), 1),
            "detail requests": len(self.detail_ms),
            "detail median ms": round(statistics.median(self.detail_ms), 1) if self.detail_ms else None,
            "detail p99 ms": round(pct(self.detail_ms, 0.99), 1),
            "streams opened": self.streams,
            "errors": len(self.errors),
            "threads, files before": self.before,
            "during (peak)": self.peak,
            "after": self.after,
            "CPU under load (of a core)": f"{self.busy_cpu:.0%}",
            "CPU idle after (of a core)": f"{self.idle_cpu:.2%}",
        }


def server_usage(pid: int) -> Tuple[int, int]:
    proc = psutil.Process(pid)
    return proc.num_threads(), proc.num_fds()


def at_most(now: Tuple[int, int], baseline: Tuple[int, int]) -> bool:
    return now[0] <= baseline[0] and now[1] <= baseline[1]


def make_apps(server: JobsServer, running: int, ended: int) -> Tuple[List[str], List[str]]:
    """``running`` apps of 2 silent replicas each (in session ``soak-live``, owned by this process) and
    ``ended`` finished ones (session ``soak-history``), in the server's log dir."""
    idle = AppDef("live", [Role("sh", image="", entrypoint="sh", args=["-c", "echo up; sleep 3600"], num_replicas=2)])
    done = AppDef("old", [Role("main", image="", entrypoint="true", args=[])])
    with get_runner("soak-history") as runner:
        history = [runner.run(done, "local_cwd") for _ in range(ended)]
        for handle in history:
            runner.wait(handle, wait_interval=1)
    with get_runner("soak-live") as runner:  # they outlive this runner: the caller cancels them
        live = [runner.run(idle, "local_cwd", cfg={"outlive_owner": True}) for _ in range(running)]
    return live, history


def cancel_all(handles: List[str]) -> None:
    with get_runner("soak-live") as runner:
        for handle in handles:
            runner.cancel(handle)


def stream_first_event(server: JobsServer, handle: str, k: int) -> None:
    url = server.url(f"jupyter-sched/api/jobs/{quote(handle)}/logs/stream?role=sh&k={k}")
    req = urllib.request.Request(url, headers={"Authorization": f"token {server.token}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        for raw in resp:
            if raw.startswith(b"data: "):
                return


def soak(server: JobsServer, live: List[str], history: List[str], seconds: float, clients: int = 20,
         streams: int = 64, linger: float = 1.0) -> SoakReport:  # fmt: skip
    """The load for ``seconds``; then waits until the server is back to its threads and files (at most a
    minute) and measures its CPU over 5 idle seconds."""
    report = SoakReport(apps=len(live) + len(history))
    pid = server.proc.pid
    proc = psutil.Process(pid)
    # warm-up: the first listing reads every app once; a view opened and let go; the pool's workers
    server.api("GET", "jobs")
    server.api("GET", f"jobs/{quote(history[0])}")
    stream_first_event(server, live[0], 0)
    time.sleep(linger + 1.5)
    report.before = server_usage(pid)
    stop = threading.Event()
    lock = threading.Lock()

    def timed_get(path: str, into: List[float]) -> None:
        started = time.perf_counter()
        try:
            reply = server.request("GET", "jupyter-sched/api/" + path, timeout=60)
            ok = reply.status == 200
            why = f"{path}: {reply.status} {reply.body[:200]!r}"
        except OSError as e:
            ok, why = False, f"{path}: {e}"
        with lock:
            into.append((time.perf_counter() - started) * 1000)
            if not ok:
                report.errors.append(why)

    def poller(i: int) -> None:
        next_at = time.monotonic() + i / clients  # spread over the second, as independent sidebars are
        while not stop.is_set():
            stop.wait(max(0.0, next_at - time.monotonic()))
            next_at += 1.0
            if not stop.is_set():
                timed_get("jobs", report.list_ms)

    def detailer() -> None:
        i = 0
        while not stop.wait(0.25):
            timed_get(f"jobs/{quote(history[i % len(history)])}", report.detail_ms)
            i += 1

    replicas = [(h, k) for h in live for k in (0, 1)]

    def viewers() -> None:
        cycle = 0
        while not stop.is_set():
            batch = [replicas[(cycle * streams + j) % len(replicas)] for j in range(min(streams, len(replicas)))]
            threads = [threading.Thread(target=view, args=(h, k)) for h, k in batch]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            cycle += 1

    def view(handle: str, k: int) -> None:
        try:
            stream_first_event(server, handle, k)
            with lock:
                report.streams += 1
        except (OSError, urllib.error.HTTPError) as e:
            with lock:
                report.errors.append(f"stream {handle}/{k}: {e}")

    workers = [threading.Thread(target=poller, args=(i,)) for i in range(clients)]
    workers += [threading.Thread(target=detailer), threading.Thread(target=viewers)]
    cpu0 = proc.cpu_times()
    started = time.monotonic()
    for t in workers:
        t.start()
    peak = report.before
    while time.monotonic() - started < seconds:
        time.sleep(1.0)
        now = server_usage(pid)
        peak = (max(peak[0], now[0]), max(peak[1], now[1]))
    stop.set()
    for t in workers:
        t.join()
    cpu1 = proc.cpu_times()
    report.busy_cpu = ((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)) / (time.monotonic() - started)
    report.peak = peak
    deadline = time.monotonic() + 60
    while not at_most(server_usage(pid), report.before) and time.monotonic() < deadline:
        time.sleep(0.5)
    report.after = server_usage(pid)
    idle0 = proc.cpu_times()
    time.sleep(5.0)
    idle1 = proc.cpu_times()
    report.idle_cpu = ((idle1.user + idle1.system) - (idle0.user + idle0.system)) / 5.0
    return report
