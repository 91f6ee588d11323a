"""Benchmark: a flood of N log lines through the notebook log pane, against writing them to a file.

Each measurement runs in a fresh Python process, so peak memory (max RSS) is its own:

* ``file``   -- write the N lines to a file (what "just logging them" costs);
* ``pane``   -- a follower thread (``LogFollower``) reads the N lines for a LogPane, which renders them at a
  few Hz;
* ``nowatch`` -- a real ``local_cwd`` job prints the N lines; wait for it (no pane);
* ``job``    -- the same job watched by the live view ``%sched_run`` shows (status pane + log pane),
  displayed as a cell does it, so the cell's record (its ``text/html`` and ``text/plain``, see
  ``jupyter_sched/notebook/displays/record.py``) is sent too: once when shown, and in place when the job ends (from
  the pane's thread, then after the next cell). Those display messages are counted apart from the widget
  messages: they must not grow with the number of lines.

Widget messages are counted with a comm that records what it would send (no front end needed), so the
numbers are the kernel side of the story: messages and bytes that would go to the browser, wall time,
and peak kernel memory. Usage::

    python benchmarks/bench_log_pane.py [--lines 200000] [--refresh 0.25] [--modes file,pane,nowatch,job]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List

LINE = "step {i:>7} | loss 0.{i:06d} | lr 3.0e-04 | tokens/s 12345.6 | \x1b[32mok\x1b[0m\n"


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _recording_comm() -> Dict[str, int]:
    """Replaces comm.create_comm with one that counts messages and their JSON size."""
    import comm
    from comm.base_comm import BaseComm

    counts = {"messages": 0, "bytes": 0, "max_bytes": 0}

    class Counting(BaseComm):
        def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None,
                        **keys: Any) -> None:  # fmt: skip
            size = len(json.dumps(data, default=str))
            counts["messages"] += 1
            counts["bytes"] += size
            counts["max_bytes"] = max(counts["max_bytes"], size)

    comm.create_comm = lambda *a, **kw: Counting(*a, **kw)
    return counts


def run_file(n: int) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with open(os.path.join(tmp, "out.log"), "w") as f:
            for i in range(n):
                f.write(LINE.format(i=i))
        took = time.perf_counter() - start
    return {"seconds": took}


def run_pane(n: int, refresh: float) -> Dict[str, Any]:
    counts = _recording_comm()
    from jupyter_sched.frontend.logview.log_model import Source
    from jupyter_sched.notebook.kernel.config import PaneSettings
    from jupyter_sched.notebook.panes.log_model import HtmlLogMux
    from jupyter_sched.notebook.panes.log_pane import LogPane

    settings = PaneSettings(refresh_interval=refresh)
    pane = LogPane(HtmlLogMux([Source("bench", 0, "stdout")], settings.keep_lines, settings.max_line_chars),
                   settings, live=True)  # fmt: skip
    idle = (counts["messages"], counts["bytes"])
    start = time.perf_counter()
    clock = time.time
    items = ((clock(), LINE.format(i=i)) for i in range(n))
    pane.follow_items([lambda: items])  # one follower thread and the pane's ticker, as a live pane has
    pane.done.wait()
    took = time.perf_counter() - start
    assert f"{n:,} lines" in pane.html.value
    return {"seconds": took, "messages": counts["messages"] - idle[0], "bytes": counts["bytes"] - idle[1],
            "max_message_bytes": counts["max_bytes"], "ticks": pane.ticker.ticks}  # fmt: skip


def _recording_display() -> Dict[str, int]:
    """An IPython shell whose display publisher counts display and update messages (and their sizes),
    marked as running in a kernel so that displays are tracked and updated as in Jupyter."""
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    counts = {"displays": 0, "updates": 0, "display_bytes": 0}

    class Counting(DisplayPublisher):
        def publish(self, data: Any, metadata: Any = None, source: Any = None, *, transient: Any = None,
                    update: bool = False, **kwargs: Any) -> None:  # fmt: skip
            counts["updates" if update else "displays"] += 1
            counts["display_bytes"] += len(json.dumps(data, default=str))

    shell = InteractiveShell.instance()
    shell.display_pub = Counting(shell=shell)
    shell.kernel = object()  # what record.py checks: displays in a kernel are tracked and updated
    return counts


def _job_code(n: int) -> str:
    return (
        "import sys\nw = sys.stdout.write\n"
        f"for i in range({n}): w({LINE!r}.format(i=i))\n"
    )


def run_job(n: int, refresh: float, watch: bool) -> Dict[str, Any]:
    counts = _recording_comm()
    from jupyter_sched.components.finder import materialize
    from jupyter_sched.frontend.job import Job
    from jupyter_sched.notebook.displays.job_display import track
    from jupyter_sched.notebook.kernel.config import PaneSettings
    from jupyter_sched.notebook.panes import job_view
    from jupyter_sched.runner import get_runner

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["JUPYTER_SCHED_LOG_DIR"] = tmp
        runner = get_runner("bench")
        app = materialize("utils.python", ["-c", _job_code(n)])
        start = time.perf_counter()
        handle = runner.run(app, "local_cwd")
        job = Job(handle, runner)
        track(job, lambda: PaneSettings(refresh_interval=refresh), lambda: True)
        shown: Dict[str, int] = {}
        if watch:
            from IPython.display import display

            from jupyter_sched.notebook.displays import record

            shown = _recording_display()
            from IPython.core.interactiveshell import InteractiveShell

            job_view.register(InteractiveShell.instance())  # what loading the extension registers
            display(job)  # as a cell shows it: the widget and the record as of now
            view = job_view.live_view(job)
            view.log_pane.done.wait()
            final = view.log_pane.html.value
        status = runner.wait(handle, wait_interval=0.5)
        if watch:
            ended = threading.Event()
            view.when_final(ended.set)
            ended.wait(60)
            record.flush()  # what post_run_cell does after the next cell
        took = time.perf_counter() - start
        runner.close()
    assert status is not None and status.state.name == "SUCCEEDED", status
    out: Dict[str, Any] = {"seconds": took}
    if watch:
        assert f"{n:,} lines" in final, final[:300]
        out.update(messages=counts["messages"], bytes=counts["bytes"], max_message_bytes=counts["max_bytes"], **shown)
    return out


def child(mode: str, n: int, refresh: float) -> None:
    base = _maxrss_mb()
    # every mode pays the same imports first, so the memory deltas compare the work alone
    import importlib

    for module in ("ipywidgets", "jupyter_sched.notebook.panes.log_pane", "jupyter_sched.runner"):
        importlib.import_module(module)
    imported = _maxrss_mb()
    if mode == "file":
        result = run_file(n)
    elif mode == "pane":
        result = run_pane(n, refresh)
    else:
        result = run_job(n, refresh, watch=(mode == "job"))
    result.update(mode=mode, peak_rss_mb=_maxrss_mb(), rss_growth_mb=_maxrss_mb() - imported, start_rss_mb=base)
    print(json.dumps(result))


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--refresh", type=float, default=0.25, help="the pane's refresh_interval (s)")
    parser.add_argument("--modes", default="file,pane,nowatch,job")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.lines, args.refresh)
        return 0
    results: Dict[str, Dict[str, Any]] = {}
    for mode in args.modes.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", mode, "--lines", str(args.lines),
                              "--refresh", str(args.refresh)], capture_output=True, text=True)  # fmt: skip
        if out.returncode != 0:
            print(f"{mode}: failed\n{out.stderr}", file=sys.stderr)
            return 1
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    n = args.lines
    print(f"{n:,} lines of {len(LINE.format(i=0))} bytes, refresh_interval {args.refresh}s")
    print(f"{'mode':8} {'seconds':>8} {'lines/s':>10} {'messages':>8} {'bytes sent':>11} {'max msg':>8} "
          f"{'peak RSS':>9} {'RSS growth':>10}")  # fmt: skip
    for mode, r in results.items():
        print(f"{mode:8} {r['seconds']:8.2f} {n / r['seconds']:10,.0f} {r.get('messages', '-'):>8} "
              f"{r.get('bytes', '-'):>11} {r.get('max_message_bytes', '-'):>8} {r['peak_rss_mb']:7.1f}MB "
              f"{r['rss_growth_mb']:8.1f}MB")  # fmt: skip
    if "file" in results and "pane" in results:
        print(f"pane / file time ratio: {results['pane']['seconds'] / results['file']['seconds']:.2f}x")
    if "nowatch" in results and "job" in results:
        print(f"watched job / unwatched job time ratio: {results['job']['seconds'] / results['nowatch']['seconds']:.2f}x")
    if "job" in results and "displays" in results["job"]:
        j = results["job"]
        print(f"job: the cell's record: {j['displays']} display + {j['updates']} updates in place,"
              f" {j['display_bytes']:,} bytes in all (widget messages: {j['messages']})")
    if "pane" in results:
        p = results["pane"]
        print(f"pane: {p['messages']} messages for {n:,} lines ({n / max(p['messages'], 1):,.0f} lines per message),"
              f" {p['bytes'] / max(p['seconds'], 1e-9) / 1e3:,.0f} KB/s to the browser")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
