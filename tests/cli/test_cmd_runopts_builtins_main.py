"""``runopts``, ``builtins``, the top-level command and ``python -m jupyter_sched``."""

from __future__ import annotations

from cli_helpers import Cli  # type: ignore[import-not-found]

import jupyter_sched


def test_runopts_of_one_and_of_all_schedulers(cli: Cli) -> None:
    one = cli("runopts", "local_cwd")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("local_cwd:\n    usage:\n")
    assert "outlive_owner=OUTLIVE_OWNER (bool, False)" in one.stdout
    every = cli("runopts").stdout
    assert "local_cwd:\n" in every and "local_dir:\n" in every
    bad = cli("runopts", "nope")
    assert (
        bad.returncode == 2
        and "unknown scheduler 'nope'; available: local_cwd, local_dir" in bad.stderr
    )


def test_builtins_lists_names_and_first_docstring_lines(cli: Cli) -> None:
    proc = cli("builtins")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Found 7 builtin components:"
    assert [line.split()[1] for line in lines[1:8]] == [
        "dist.ddp",
        "dist.spmd",
        "utils.booth",
        "utils.echo",
        "utils.python",
        "utils.sh",
        "utils.touch",
    ]
    assert "utils.sh      Runs a shell command with ``sh -c``." in proc.stdout
    source = cli("builtins", "--print", "utils.echo")
    assert source.returncode == 0 and "def echo(" in source.stdout
    missing = cli("builtins", "--print", "utils.nope")
    assert missing.returncode == 2 and "no component named 'utils.nope'" in missing.stderr


def test_version_help_and_usage_errors(cli: Cli) -> None:
    assert cli("--version").stdout == f"jupyter-sched {jupyter_sched.__version__}\n"
    top = cli("--help", module=True)
    assert top.returncode == 0 and all(
        v in top.stdout
        for v in ("run", "status", "log", "list", "cancel", "describe", "runopts", "builtins")
    )
    none = cli()
    assert none.returncode == 2 and none.stderr.startswith(
        "jupyter-sched: error: the following arguments are required: VERB\nusage: jupyter-sched"
    )  # the program is named once
    missing = cli("status")
    assert missing.stderr.startswith(
        "jupyter-sched status: error: the following arguments are required: app_handle"
    )
    unknown = cli("frobnicate")
    assert unknown.returncode == 2 and "invalid choice: 'frobnicate'" in unknown.stderr
    assert cli("status", "--help").stdout.startswith("usage: jupyter-sched status")
    extra = cli("status", "a://b/c", "extra")
    assert extra.returncode == 2 and "unrecognized arguments: extra" in extra.stderr


def test_a_broken_config_file_is_a_usage_error_for_every_verb(cli: Cli) -> None:
    (cli.cwd / "pyproject.toml").write_text(
        "[tool.jupyter_sched]\ndefault_schedulr = 'local_cwd'\n"
    )
    for argv in (("list",), ("run", "utils.echo"), ("builtins",)):
        proc = cli(*argv)
        assert proc.returncode == 2, argv
        assert (
            "unknown key 'default_schedulr'; valid keys: default_scheduler, schedulers, components"
            in proc.stderr
        )


def test_config_log_dir_is_shared_by_every_verb(cli: Cli) -> None:
    """A log_dir in the config (relative to the file) is where run writes and where list/status/log read."""
    (cli.cwd / "pyproject.toml").write_text(
        "[tool.jupyter_sched.schedulers.local_cwd]\nlog_dir = 'job-logs'\n"
    )
    (cli.cwd / "sub").mkdir()
    env = {k: v for k, v in cli.env.items() if k != "JUPYTER_SCHED_LOG_DIR"}
    sub = Cli(cli.cwd / "sub", env)
    handle = sub.run_app("utils.echo", "--msg", "in the project dir")
    assert (cli.cwd / "job-logs" / "default" / handle.rsplit("/", 1)[1]).is_dir()
    assert handle in Cli(cli.cwd, env)("list").stdout
    assert sub("log", handle).stdout == "echo/0 in the project dir\n"
