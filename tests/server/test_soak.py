"""The soak test of issue 31: 30 running apps (2 silent replicas each), 1,000 ended ones, 20 clients polling
the list each second, a job's detail asked four times a second, and 64 job views opened and closed in
cycles, for a minute, against a real ``jupyter server``. Every request answers, and afterwards the server
holds the threads (but for the thread pool's idle workers) and files it held before, and idles. The
latencies are printed (``-s``), not checked: the README's figures come from ``benchmarks/bench_server.py``,
which runs the same load for longer.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.conftest import start_server, stop_server
from tests.server.soak import at_most, cancel_all, make_apps, soak


def test_the_server_holds_up_under_a_day_of_sidebars(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    server = start_server(tmp_path / "server", argv=["--JobsServer.log_stream_linger=1"],
                          log_name="jupyter-server-soak.log")  # fmt: skip
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(server.log_dir))
    live, history = make_apps(server, running=30, ended=1000)
    try:
        report = soak(server, live, history, seconds=60)
        print(json.dumps(report.figures(), indent=1))
        assert not report.errors, report.errors[:10]
        assert report.streams >= 64 and len(report.list_ms) >= 20 * 30 and report.detail_ms
        # the thread pool's workers (at most c.JobsServer.workers, 4) stay once made; nothing else may
        threads, files = report.before
        assert at_most(report.after, (threads + 3, files)), f"{report.before} before, {report.after} after"
        assert report.idle_cpu <= 0.01, f"the idle server used {report.idle_cpu:.1%} of a core"
    finally:
        cancel_all(live)
        stop_server(server)
