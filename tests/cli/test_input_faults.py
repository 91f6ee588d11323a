"""Hostile or mistaken input to the command line: a clear usage error (exit 2) naming the field, never a
traceback; and job output cannot drive the user's terminal through ``jupyter-sched log``."""

from __future__ import annotations

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

COMPONENT = '''from jupyter_sched.specs import AppDef, Role


def app(num_replicas: int = 1) -> AppDef:
    """An app whose replica count is taken as given.

    Args:
        num_replicas: how many replicas
    """
    return AppDef("a", [Role("r", "img", entrypoint="echo", num_replicas=num_replicas)])
'''


@pytest.mark.parametrize("component", ["utils.echo", "comp.py:app"])
def test_zero_and_negative_replicas_are_the_same_usage_error(cli: Cli, component: str) -> None:
    (cli.cwd / "comp.py").write_text(COMPONENT)
    for count in ("-1", "0"):
        proc = cli("run", "--dryrun", component, "--num_replicas", count)
        assert proc.returncode == 2, (count, proc.stderr)
        assert "num_replicas" in proc.stderr and f"{count}" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("scheduler", ["local_cwd", "local_docker", "slurm"])
def test_more_replicas_than_a_scheduler_runs_is_a_usage_error(cli: Cli, scheduler: str) -> None:
    """A request refused before launch is bad usage (exit 2), like --num_replicas 0; with or without --dryrun."""
    for dryrun in (("--dryrun",), ()):
        proc = cli("run", "-s", scheduler, *dryrun, "utils.echo", "--num_replicas", "99999999999999999999")
        assert proc.returncode == 2, proc.stderr
        assert "roles[0].num_replicas" in proc.stderr and "more than" in proc.stderr and "Traceback" not in proc.stderr
    assert not list(cli.cwd.parent.rglob("state.json"))  # nothing was started


def test_an_app_the_slurm_cluster_cannot_hold_is_a_usage_error(cli: Cli, slurm_cluster: object) -> None:
    proc = cli("run", "-s", "slurm", "--cfg", "partition=no-such-partition", "utils.echo")
    assert proc.returncode == 2, proc.stderr
    assert "cfg.partition: partition 'no-such-partition' does not exist on this cluster" in proc.stderr


def test_a_memory_limit_that_is_not_a_size_is_a_usage_error(cli: Cli) -> None:
    proc = cli("run", "--cfg", "memory_limit=lots", "utils.echo")
    assert proc.returncode == 2, proc.stderr
    assert "memory_limit='lots': give a positive size with a unit" in proc.stderr and "ValueError" not in proc.stderr


@pytest.mark.parametrize("value", ["-5", "nan", "inf"])
def test_cancel_grace_must_be_a_finite_duration(cli: Cli, value: str) -> None:
    proc = cli("run", "--dryrun", "--cfg", f"cancel_grace={value}", "utils.echo")
    assert proc.returncode == 2 and "cancel_grace" in proc.stderr and "finite number, 0 or more" in proc.stderr


def test_cancel_grace_from_the_config_file_is_checked_too(cli: Cli) -> None:
    (cli.cwd / "pyproject.toml").write_text("[tool.jupyter_sched.schedulers.local_cwd]\ncancel_grace = -5\n")
    proc = cli("run", "--dryrun", "utils.echo")
    assert proc.returncode == 2 and "tool.jupyter_sched.schedulers.local_cwd" in proc.stderr
    assert "cancel_grace" in proc.stderr


@pytest.mark.parametrize("flag", ["--since", "--until"])
def test_an_age_beyond_the_calendar_is_a_usage_error(cli: Cli, flag: str) -> None:
    proc = cli("log", f"{flag}=99999999999d", "local_cwd://default/echo-abc")
    assert proc.returncode == 2, proc.stderr
    assert f"{flag} '99999999999d'" in proc.stderr and "Traceback" not in proc.stderr


def test_log_to_a_terminal_drops_titles_and_links_unless_raw(cli: Cli) -> None:
    script = r"printf 'a\033]0;pwned title\007b\n\033]8;;http://evil/\033\\click\033]8;;\033\\ \033[31mred\033[0m\n'"
    handle = cli.run_app("utils.sh", script)
    shown = cli.on_terminal("log", handle)
    assert b"\x1b[0m ab\r\n" in shown and b"\x1b[0m click \x1b[31mred\x1b[0m" in shown  # prefixes and colours kept
    assert b"\x1b]" not in shown and b"pwned" not in shown and b"evil" not in shown
    raw = cli.on_terminal("log", handle, "--raw")
    assert b"\x1b]0;pwned title\x07" in raw and b"\x1b]8;;http://evil/" in raw
    piped = cli("log", handle)  # not a terminal: the bytes as the job wrote them
    assert "\x1b]0;pwned title\x07" in piped.stdout
