"""A new backend needs no edit outside its own module: a plugin scheduler whose request offers the neutral
view (``dryrun_view()``) is shown by ``jupyter-sched run --dryrun`` and by ``%sched_run --dryrun``.

The plugin is real: a module and a ``.dist-info`` with an entry point in the ``jupyter_sched.schedulers``
group, put on ``PYTHONPATH`` of a fresh process, as ``pip install`` would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest

PLUGIN = '''
from dataclasses import dataclass
from typing import List

from jupyter_sched.schedulers.api import Scheduler
from jupyter_sched.specs import AppDryRunInfo, DryRunView, ReplicaPlan


@dataclass
class TinyRequest:
    commands: List[List[str]]

    def dryrun_view(self):
        plans = [ReplicaPlan(role="echo", replica_id=k, argv=c, env={"TINY_TOKEN": "s3cret", "A": "$x$"},
                             limits={"slots": "1"}) for k, c in enumerate(self.commands)]
        return DryRunView(plans, notes=[("queue", "tiny-q")], sections=[("tiny script", "run $A\\nend")],
                          warnings=["tiny backend: nothing really runs"])


class TinyScheduler(Scheduler):
    def __init__(self, session_name, **kwargs):
        super().__init__("tiny", session_name)

    def _submit_dryrun(self, app, cfg):
        request = TinyRequest([[r.entrypoint, *r.args] for r in app.roles for _ in range(r.num_replicas)])
        return AppDryRunInfo(request, lambda r: f"TinyRequest with {len(r.commands)} command(s)")

    def schedule(self, dryrun_info):
        raise RuntimeError("tiny runs nothing")

    def describe(self, app_id):
        return None

    def list(self):
        return []

    def _cancel_existing(self, app_id):
        pass


def create_scheduler(session_name, **kwargs):
    return TinyScheduler(session_name, **kwargs)
'''

NOTEBOOK = '''
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_line_magic("load_ext", "jupyter_sched")
info = ip.run_line_magic("sched_run", "--dryrun -s tiny utils.echo --msg hi --num_replicas 2")
formatters = ip.display_formatter.formatters  # a terminal shell has the HTML formatter, disabled
print("===HTML===")
print(formatters["text/html"].lookup(info)(info))
print("===TEXT===")
print(formatters["text/plain"](info))
'''


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    site = tmp_path / "site"
    (site / "tinysched-0.1.dist-info").mkdir(parents=True)
    (site / "tinysched.py").write_text(PLUGIN)
    (site / "tinysched-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tinysched\nVersion: 0.1\n")
    (site / "tinysched-0.1.dist-info" / "entry_points.txt").write_text(
        "[jupyter_sched.schedulers]\ntiny = tinysched:create_scheduler\n"
    )
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    out["IPYTHONDIR"] = str(tmp_path / "ipython")
    out["JUPYTER_SCHED_LOG_DIR"] = str(tmp_path / "logs")
    return out


def test_the_cli_dry_run_shows_a_plugin_backend_and_its_warnings(env: Dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter_sched", "run", "--dryrun", "-s", "tiny", "utils.echo", "--msg", "hi"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "=== SCHEDULER REQUEST ===\nTinyRequest with 1 command(s)" in proc.stdout
    assert "=== WARNINGS ===\nwarning: tiny backend: nothing really runs" in proc.stdout


def test_the_notebook_dry_run_renders_a_plugin_backend_from_its_view(env: Dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(NOTEBOOK)], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    html, text = proc.stdout.split("===HTML===", 1)[1].split("===TEXT===", 1)
    for shown in (html, text):
        assert "s3cret" not in shown and "TINY_TOKEN=********" in shown  # masked like any backend's env
        assert "tiny backend: nothing really runs" in shown and "tiny-q" in shown and "tiny script" in shown
    assert "<b>echo/0</b>" in html and "<b>echo/1</b>" in html and "slots=1" in html
    assert "echo hi" in html and html.count("navigator.clipboard.writeText") >= 5  # argv, env, per replica; script
    assert "  echo/1:" in text and "    argv: echo hi" in text and "    run $A" in text
