"""The live log pane shows a replica's stdout and stderr in the order they were written (issue 12, item 9).

A real replica writes a tqdm-style bar to stderr (a ``\\r`` frame, then ``\\n``), sleeps, and writes a
line to stdout, a few times; the live pane (followers, ticker, the model) runs in-process over it. At every
render and at the end, the lines shown are a prefix of the order they were written in.
"""

from __future__ import annotations

import sys
import time
from typing import Any, List

from nbhelpers import wait_for

from jupyter_sched.frontend.logview.log_model import ALL, app_sources, read_snapshot
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.panes.log_model import HtmlLogMux
from jupyter_sched.notebook.panes.log_pane import LogPane
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role, resource

EPOCHS = 3
WRITER = (
    "import sys, time\n"
    "for i in range(1, {epochs} + 1):\n"
    "    sys.stderr.write(f'\\repoch {{i}}: 100%'); sys.stderr.flush()\n"
    "    time.sleep(0.05)\n"
    "    sys.stderr.write('\\n'); sys.stderr.flush()\n"
    "    time.sleep({gap})\n"
    "    print(f'epoch {{i}} done', flush=True)\n"
)
WRITTEN = [line for i in range(1, EPOCHS + 1) for line in (f"epoch {i}: 100%", f"epoch {i} done")]


def _shown(pane: LogPane) -> List[str]:
    """The pane's lines as text, without gutters, empty frames dropped."""
    with pane.lock:
        rows, _ = pane.mux.rows(ALL, 400)
        return [line.text for _, line in rows if line.text]


def _watch(scheduler: str, cfg: Any, gap: float, recorder: Any) -> List[List[str]]:
    """Runs the writer on ``scheduler``, follows it with a live pane, and returns every rendering seen."""
    settings = PaneSettings(refresh_interval=0.05)
    role = Role("py", image=".", entrypoint=sys.executable, args=["-c", WRITER.format(epochs=EPOCHS, gap=gap)])
    if scheduler == "slurm":
        role = Role("py", "unused", entrypoint=sys.executable, args=role.args, resource=resource(cpu=1, memMB=128))
    seen: List[List[str]] = []
    with get_runner("log-order") as runner:
        handle = runner.run(AppDef("order", roles=[role]), scheduler, cfg)
        wait_for(lambda: runner.status(handle) and runner.status(handle).roles, 120, "the replica to be listed")
        sources = app_sources(runner.status(handle))
        assert [s.stream for s in sources] == ["stdout", "stderr"]
        pane = LogPane(HtmlLogMux(sources, settings.keep_lines, settings.max_line_chars), settings, live=True)
        pane.start(runner, handle)
        try:
            while not pane.done.is_set():
                seen.append(_shown(pane))
                time.sleep(0.01)
            seen.append(_shown(pane))
        finally:
            pane.stop()
        snapshot = read_snapshot(runner, handle, sources, settings.keep_lines, settings.max_line_chars)
        seen.append([line.text for _, line in snapshot.rows(ALL, 400)[0] if line.text])
    return seen


def _assert_write_order(seen: List[List[str]]) -> None:
    for shown in seen:
        assert shown == WRITTEN[: len(shown)], f"shown out of write order: {shown}"
    assert seen[-1] == WRITTEN and seen[-2] == WRITTEN


def test_live_pane_orders_stdout_and_stderr_by_write_time_local(recorder: Any, tmp_path: Any) -> None:
    _assert_write_order(_watch("local_cwd", {"log_dir": str(tmp_path)}, 1.0, recorder))


def test_live_pane_orders_stdout_and_stderr_by_write_time_slurm(recorder: Any, slurm_cluster: Any) -> None:
    # Slurm's followers poll each file on their own (50-70 ms apart): a stdout line written 100 ms after a
    # stderr one can be read first, and the pane must still order them (its hold is 0.15 s; at 20 ms apart a
    # loaded machine's polling lag once exceeded it)
    _assert_write_order(_watch("slurm", {}, 0.1, recorder))
