"""The front-end layer: one table of run options behind both the parser and the splitter, times, the cfg
coercer, and the notebook's independence from the command line."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.launch.run_args import scheduler_runopts, typed_cfg
from jupyter_sched.frontend.launch.run_options import RUN_OPTIONS, RunOption, build_run_parser, split_run_line
from jupyter_sched.frontend.times import parse_time


def test_the_parser_and_the_splitter_know_the_same_options() -> None:
    parser = build_run_parser()
    for opt in RUN_OPTIONS:
        for flag in opt.flags:
            argv = [flag, "v"] if opt.takes_value else [flag]
            if opt.dest != "help":
                assert split_run_line([*argv, "comp", flag]).options == argv, flag
                assert parser.parse_args(argv) is not None
    spelled = {f for action in parser._actions for f in action.option_strings}  # noqa: SLF001 - checking argparse
    assert spelled == {f for opt in RUN_OPTIONS for f in opt.flags}


def test_a_front_end_switch_is_taken_only_before_the_component() -> None:
    quiet = RunOption(("--quiet",), "quiet", "no view")
    line = split_run_line(["--quiet", "-s", "local_cwd", "utils.sh", "--quiet"], extra=[quiet])
    assert line.flags == {"quiet": True} and line.options == ["-s", "local_cwd"]
    assert line.component() == ("utils.sh", ["--quiet"])
    with pytest.raises(UsageError, match="unknown option --bogus"):
        split_run_line(["--bogus", "x"]).component()


def test_times_iso_with_z_and_ages() -> None:
    assert parse_time("2024-05-01T12:00:00Z", "--since") == datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    assert parse_time("2024-05-01T12:00:00", "--since") == datetime(2024, 5, 1, 12)
    before, got, after = datetime.now(), parse_time("5m", "--since"), datetime.now()
    assert before - timedelta(minutes=5) <= got <= after - timedelta(minutes=5)
    for text in ("99999999999d", "999999999999999999999999s"):
        with pytest.raises(UsageError, match=r"--until .*reaches back before year 1"):
            parse_time(text, "--until")
    with pytest.raises(UsageError, match="not a time"):
        parse_time("yesterday", "--since")


def test_one_coercer_types_checks_and_names_the_source() -> None:
    opts = scheduler_runopts("local_cwd")
    where = "SchedMagics.scheduler_cfg['local_cwd']"
    got = typed_cfg(opts, {"cancel_grace": "3", "prepend_cwd": True, "log_dir": "logs"}, where, "local_cwd", "/p")
    assert got == {"cancel_grace": 3.0, "prepend_cwd": True, "log_dir": "/p/logs"}
    assert typed_cfg(opts, {"cancel_grace": 2}, where, "local_cwd") == {"cancel_grace": 2.0}
    for bad, needle in (
        ({"nosuch": 1}, "unknown run option 'nosuch'"),
        ({"cancel_grace": -5}, "0 or more"),
        ({"cancel_grace": float("nan")}, "finite"),
        ({"prepend_cwd": "yes"}, "not a boolean"),
    ):
        with pytest.raises(UsageError, match=needle) as info:
            typed_cfg(opts, bad, where, "local_cwd")
        assert str(info.value).startswith(where)


def test_the_notebook_never_loads_the_command_line() -> None:
    """Importing every notebook module and parsing and dry-running a magic line loads no ``jupyter_sched.cli``
    module (tests/test_layers.py checks the import statements; this checks what really gets loaded)."""
    code = (
        "import sys, pkgutil, importlib, jupyter_sched.notebook as nb\n"
        "for m in pkgutil.iter_modules(nb.__path__): importlib.import_module('jupyter_sched.notebook.' + m.name)\n"
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython(); ip.run_line_magic('load_ext', 'jupyter_sched')\n"
        "ip.run_line_magic('sched_run', '--dryrun -s local_cwd utils.echo --msg hi')\n"
        "print(sorted(m for m in sys.modules if m.startswith('jupyter_sched.cli')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
