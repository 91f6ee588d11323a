"""The live log pane leaves out the marked metric lines a job prints (``@@jupyter_sched:metrics {...}``, also
after a ``\\r`` progress frame) and its followers store their records, where ``job.metrics()`` reads them."""

from __future__ import annotations

import sys
import time
from typing import Any, List

from nbhelpers import wait_for

from jupyter_sched.frontend.jobs.metrics import read_all
from jupyter_sched.frontend.logview.log_model import ALL, app_sources
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.panes.log_model import HtmlLogMux
from jupyter_sched.notebook.panes.log_pane import LogPane
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role

WRITER = (
    "import json, sys, time\n"
    "for i in range(3):\n"
    "    print(f'epoch {i}', flush=True)\n"
    "    rec = json.dumps({'v': 1, 'w': 'py', 'seq': i, 't': time.time(), 'step': i,\n"
    "                      'metrics': {'loss': 1 / (i + 1)}})\n"
    "    sys.stderr.write(f'{i}/3 \\r@@jupyter_sched:metrics {rec}\\n'); sys.stderr.flush()\n"
    "    time.sleep(0.2)\n"
)


def _shown(pane: LogPane) -> List[str]:
    with pane.lock:
        rows, _ = pane.mux.rows(ALL, 400)
        return [line.text for _, line in rows if line.text]


def test_the_live_pane_does_not_show_marked_lines_and_stores_their_records(tmp_path: Any) -> None:
    settings = PaneSettings(refresh_interval=0.05)
    role = Role("py", image=".", entrypoint=sys.executable, args=["-c", WRITER])
    seen: List[List[str]] = []
    with get_runner("pane-metric-lines") as runner:
        handle = runner.run(AppDef("marked", roles=[role]), "local_cwd", {"log_dir": str(tmp_path)})
        wait_for(lambda: runner.status(handle) and runner.status(handle).roles, 120, "the replica to be listed")
        sources = app_sources(runner.status(handle))
        pane = LogPane(HtmlLogMux(sources, settings.keep_lines, settings.max_line_chars), settings, live=True)
        pane.start(runner, handle)
        try:
            while not pane.done.is_set():
                seen.append(_shown(pane))
                time.sleep(0.01)
            seen.append(_shown(pane))
        finally:
            pane.stop()
        # the last progress frame stays open: its line only ever held the marked line after it
        assert seen[-1] == ["epoch 0", "epoch 1", "epoch 2", "2/3 "]
        assert not any("@@jupyter_sched" in line for shown in seen for line in shown)
        (replica,) = read_all(runner.metrics_dir(handle))
        assert [(r.step, round(r.metrics["loss"], 3)) for r in replica.records] == [(0, 1.0), (1, 0.5), (2, 0.333)]
