"""The Jupyter server extension under a day of sidebars, on a real ``jupyter server`` (issue 31's soak).

    .venv/bin/python benchmarks/bench_server.py [--seconds 180] [--running 30] [--ended 1000] [--clients 20]

30 running apps of 2 silent replicas each, 1,000 ended ones, 20 clients polling ``GET jobs`` once a second,
a job's detail asked four times a second, and 64 job views (live log streams) opened and closed in cycles.
Prints the list latency (median, p99), the detail latency while listings refresh, the server's threads and
open files before, at the peak and after, its CPU under load and idle after. The load is
``tests/server/soak.py``'s, which ``tests/server/test_soak.py`` runs for a minute with checks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.server.conftest import start_server, stop_server  # noqa: E402
from tests.server.soak import cancel_all, make_apps, soak  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--running", type=int, default=30)
    parser.add_argument("--ended", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "server", argv=["--JobsServer.log_stream_linger=1"],
                              log_name="bench-server.log")  # fmt: skip
        os.environ["JUPYTER_SCHED_LOG_DIR"] = str(server.log_dir)
        live, history = make_apps(server, running=args.running, ended=args.ended)
        try:
            report = soak(server, live, history, seconds=args.seconds, clients=args.clients)
        finally:
            cancel_all(live)
            stop_server(server)
    print(json.dumps(report.figures(), indent=1))
    if report.errors:
        print(f"{len(report.errors)} requests failed, e.g.: {report.errors[:5]}")


if __name__ == "__main__":
    main()
