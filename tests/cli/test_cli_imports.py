"""What the command line imports for one verb: ``--help`` and ``status`` load no component, and a verb's
implementation loads only when that verb runs (``cli/verbs.py`` holds every verb's flags).

Each case runs ``run_cli`` in a fresh interpreter (a subprocess, as the console script does) and reports
which of our modules it loaded; the modules are the test, not the time they took (README gives the figures).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Dict, List

from cli_helpers import Cli  # type: ignore[import-not-found]

REPORT = """
import io, json, sys
from contextlib import redirect_stderr, redirect_stdout
from jupyter_sched.cli.main import run_cli
out, err = io.StringIO(), io.StringIO()
with redirect_stdout(out), redirect_stderr(err):
    code = run_cli(sys.argv[1:])
ours = sorted(m for m in sys.modules if m.startswith("jupyter_sched"))
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "modules": ours}))
"""
VERBS = ("status", "log", "list", "cancel", "describe", "runopts", "builtins", "top", "metrics")


def _loads(cli: Cli, *argv: str) -> Dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", REPORT, *argv], cwd=cli.cwd, env=cli.env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _under(modules: object, *packages: str) -> List[str]:
    assert isinstance(modules, list)
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


def test_help_loads_no_component_no_runner_and_no_verb(cli: Cli) -> None:
    for argv in (["--help"], ["--version"], *([verb, "--help"] for verb in VERBS)):
        seen = _loads(cli, *argv)
        assert seen["code"] == 0, seen["err"]
        assert seen["out"] or seen["err"], f"{argv}: printed nothing"
        assert _under(seen["modules"], "jupyter_sched.components") == [], argv
        assert _under(seen["modules"], "jupyter_sched.runner", "jupyter_sched.schedulers", "jupyter_sched.specs") == []
        assert [m for m in _under(seen["modules"], "jupyter_sched.cli") if "cmd_" in m] == [], argv


def test_status_of_a_real_app_loads_no_component_and_only_its_verb(cli: Cli) -> None:
    handle = cli.run_app("utils.echo", "--msg", "hi")
    seen = _loads(cli, "status", handle)
    assert seen["code"] == 0, seen["err"]
    assert "SUCCEEDED" in str(seen["out"])
    assert _under(seen["modules"], "jupyter_sched.components") == []
    assert [m for m in _under(seen["modules"], "jupyter_sched.cli") if "cmd_" in m] == ["jupyter_sched.cli.cmd_status"]
    unknown = _loads(cli, "status", handle + "x")  # an error is classified without loading the components
    assert unknown["code"] == 1 and "no app" in str(unknown["err"])
    assert _under(unknown["modules"], "jupyter_sched.components") == []


def test_run_and_builtins_still_load_every_component(cli: Cli) -> None:
    listed = _loads(cli, "builtins", "--json")
    assert listed["code"] == 0, listed["err"]
    names = {c["name"] for c in json.loads(str(listed["out"]))}
    assert {"utils.echo", "utils.sh", "utils.python", "dist.ddp", "dist.spmd"} <= names
    ran = _loads(cli, "run", "utils.sh", "echo", "from sh")
    assert ran["code"] == 0, ran["err"]
    assert "from sh" in str(ran["out"]) + str(ran["err"])
    assert "jupyter_sched.components.utils" in _under(ran["modules"], "jupyter_sched.components")
    helped = _loads(cli, "run", "utils.echo", "--help")  # a component's --help: ComponentHelp, exit 0, on stdout
    assert helped["code"] == 0 and "--msg" in str(helped["out"]), helped["err"]
    wrong = _loads(cli, "run", "utils.echo", "--nope")  # a ComponentError: a usage error, exit 2
    assert wrong["code"] == 2 and "--nope" in str(wrong["err"]), wrong
