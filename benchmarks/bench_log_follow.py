"""Benchmark: following a replica's log of N lines through each front end's follower, against reading it.

A real ``local_cwd`` job prints N lines; then, each in a fresh Python process (so peak memory is its own):

* ``read``   -- ``Runner.log_lines`` iterated on the calling thread (what the follow costs at the least);
* ``cli``    -- ``jupyter-sched log -f``'s path (``frontend.logview.tail.tail``, the plain-text printer)
  writing to a file, two replicas at once (stdout of the job's two replicas);
* ``server`` -- the Jupyter server's follower (``server.logs.Followers``) reading into its bounded buffer,
  one viewer's cursor asking for what changed until the log has ended.

The notebook pane's follower is measured by ``bench_log_pane.py``. Usage::

    python benchmarks/bench_log_follow.py [--lines 200000] [--modes read,cli,server]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

LINE = "step {i:>7} | loss 0.{i:06d} | lr 3.0e-04 | tokens/s 12345.6 | \x1b[32mok\x1b[0m\n"


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    """CPU seconds of this process, every thread: steadier than wall time on a machine others share."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def make_job(n: int, log_dir: str) -> str:
    from jupyter_sched.runner import get_runner
    from jupyter_sched.specs import AppDef, Role

    os.environ["JUPYTER_SCHED_LOG_DIR"] = log_dir
    code = f"import sys\nw = sys.stdout.write\nfor i in range({n}): w({LINE!r}.format(i=i))\n"
    role = Role("r", image="", entrypoint=sys.executable, args=["-c", code], num_replicas=2)
    with get_runner("bench-follow") as runner:
        handle = runner.run(AppDef("flood", [role]), "local_cwd")
        status = runner.wait(handle, wait_interval=0.2)
        assert status is not None and status.state.name == "SUCCEEDED", status
    return handle


def child(mode: str, handle: str, n: int) -> Dict[str, Any]:
    from jupyter_sched.runner import get_runner

    with get_runner("bench-follow") as runner:
        start, cpu = time.perf_counter(), _cpu_s()
        if mode == "read":
            count = sum(1 for _ in runner.log_lines(handle, "r", 0)) + sum(1 for _ in runner.log_lines(handle, "r", 1))
        elif mode == "cli":
            from jupyter_sched.frontend.logview.follow import TailOptions
            from jupyter_sched.frontend.logview.tail import tail

            with tempfile.TemporaryFile("w+") as out:
                errors = tail(runner, handle, [("r", 0), ("r", 1)], out, TailOptions(follow=True, streams="stdout"))
                assert not errors, errors
                out.seek(0)
                count = sum(1 for _ in out)
        else:
            from jupyter_sched.server.logs import Cursor, Followers

            followers = Followers(max_followers=4, keep_lines=2000)
            count = 0
            for k in (0, 1):
                log = followers.attach(runner, handle, "r", k, "stdout")
                cursor = Cursor()
                while True:
                    event = log.diff(cursor)
                    if event is not None and event["ended"]:
                        count += event["total"]
                        break
                    time.sleep(0.01)  # a viewer asks as often as the server's stream does at most
                followers.detach(log)
            followers.stop_all()
        took, cpu = time.perf_counter() - start, _cpu_s() - cpu
    assert count == 2 * n, (mode, count)
    return {"seconds": took, "cpu_seconds": cpu, "peak_rss_mb": _maxrss_mb()}


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--modes", default="read,cli,server")
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode; the best is reported")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.lines)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        handle = make_job(args.lines, tmp)
        env = dict(os.environ, JUPYTER_SCHED_LOG_DIR=tmp)
        print(f"{args.lines:,} lines per replica, 2 replicas, best of {args.repeat} (wall time and CPU time apart)")
        print(f"{'mode':8} {'seconds':>8} {'lines/s':>10} {'CPU s':>6} {'peak RSS':>9}")
        for mode in args.modes.split(","):
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run([sys.executable, __file__, "--lines", str(args.lines), "--child", mode, handle],
                                     capture_output=True, text=True, env=env)  # fmt: skip
                if out.returncode != 0:
                    print(f"{mode}: failed\n{out.stderr}", file=sys.stderr)
                    return 1
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            best = min(runs, key=lambda r: r["seconds"])
            cpu = min(r["cpu_seconds"] for r in runs)
            print(f"{mode:8} {best['seconds']:8.2f} {2 * args.lines / best['seconds']:10,.0f} {cpu:6.2f} "
                  f"{best['peak_rss_mb']:7.1f}MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
