"""parse_run_args: the run verb's parser as a function (shared with the %sched_run magic)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from jupyter_sched.cli.errors import CliExit, CliUsageError
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.frontend.launch.run_args import RunArgs, parse_run_args
from jupyter_sched.frontend.launch.run_options import build_run_parser, split_run_argv

EMPTY = ProjectConfig()


def parse(*argv: str, config: ProjectConfig = EMPTY) -> RunArgs:
    return parse_run_args(list(argv), config=config)


def test_defaults_and_the_component_split() -> None:
    args = parse("utils.sh", "-s", "--cfg", "x", "--", "y")
    assert args == RunArgs(
        scheduler="local_cwd", component="utils.sh", component_args=["-s", "--cfg", "x", "--", "y"]
    )


def test_every_run_option() -> None:
    args = parse(
        "-s", "local_dir", "--cfg", "log_dir=/tmp/x,prepend_cwd=true", "-cfg", "cancel_grace=2",
        "--scheduler_args", "prepend_cwd=false", "--dryrun", "--wait", "--log", "--workspace", "/src",
        "utils.echo", "--msg", "hi",
    )  # fmt: skip
    assert args.scheduler == "local_dir"
    assert args.cfg == {
        "log_dir": "/tmp/x",
        "prepend_cwd": False,
        "cancel_grace": 2.0,
    }  # later --cfg wins
    assert (args.dryrun, args.wait, args.log, args.workspace) == (True, True, True, "/src")
    assert (args.component, args.component_args) == ("utils.echo", ["--msg", "hi"])
    assert parse("--scheduler=local_dir", "-slocal_cwd", "--cfg=prepend_cwd=true", "c").cfg == {
        "prepend_cwd": True
    }
    assert parse("--", "c", "--dryrun").component_args == ["--dryrun"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--frob", "utils.echo"],
            r"unknown option --frob\. Run options are -s, --cfg.*a component's flags go after its name",
        ),
        (
            ["-s", "nope", "utils.echo"],
            r"--scheduler: unknown scheduler 'nope'; available: local_cwd, local_dir",
        ),
        (
            ["--cfg", "cancel_grce=1", "utils.echo"],
            r"Unknown run option 'cancel_grce'\. Did you mean 'cancel_grace'\?.*See `jupyter-sched runopts local_cwd`",
        ),
        (["--cfg", "prepend_cwd=yes", "utils.echo"], r"prepend_cwd='yes' is not a boolean"),
        (["--cfg", "cancel_grace=soon", "utils.echo"], r"cancel_grace='soon' is not a valid float"),
        (
            ["--cfg", "novalue", "utils.echo"],
            r"--cfg 'novalue': run options 'novalue' are not of the form key=value",
        ),
        (
            ["--dryrun"],
            r"which component\? e\.g\. `jupyter-sched run utils.echo --msg hi`.*\nusage: jupyter-sched run",
        ),
        (["-s"], r"argument -s/--scheduler: expected one argument\nusage: jupyter-sched run"),
    ],
)
def test_errors_say_what_was_wrong(argv: list, message: str) -> None:
    with pytest.raises(CliUsageError, match=message):
        parse(*argv)


def test_help_prints_and_raises_cli_exit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CliExit) as info:
        parse("--help")
    assert info.value.status == 0
    assert "Options go before the component" in capsys.readouterr().out


def test_config_defaults_are_typed_and_overridden_by_flags(tmp_path: Path) -> None:
    config = ProjectConfig(
        path=str(tmp_path / "pyproject.toml"),
        default_scheduler="local_dir",
        schedulers={"local_dir": {"log_dir": "logs", "cancel_grace": 3, "prepend_cwd": "true"}},
        components={"utils.echo": {"msg": "from config"}},
    )
    args = parse("--cfg", "prepend_cwd=false", "utils.echo", config=config)
    assert args.scheduler == "local_dir"
    assert args.cfg == {
        "log_dir": str(tmp_path / "logs"),
        "cancel_grace": 3.0,
        "prepend_cwd": False,
    }
    assert args.component_defaults == {"msg": "from config"}
    assert (
        parse("-s", "local_cwd", "utils.echo", config=config).cfg == {}
    )  # other schedulers' defaults don't apply


@pytest.mark.parametrize(
    "schedulers, message",
    [
        (
            {"local_cwd": {"log_dri": "x"}},
            r"\[tool.jupyter_sched.schedulers.local_cwd\]: unknown run option 'log_dri'",
        ),
        ({"local_cwd": {"prepend_cwd": "maybe"}}, r"is not a boolean"),
        ({"local_cwd": {"cancel_grace": [1]}}, r"cancel_grace = \[1\] is not of the option's type"),
        ({"local_cwd": {"log_dir": 5}}, r"log_dir = 5 is not of the option's type str$"),
        (
            {"local_cwdd": {"log_dir": "x"}},
            r"\[tool.jupyter_sched.schedulers.local_cwdd\]: no scheduler named 'local_cwdd'\. Did you mean"
            r" local_cwd\? Schedulers: local_cwd, local_dir",
        ),
    ],
)
def test_config_errors_name_the_file_and_table(
    tmp_path: Path, schedulers: dict, message: str
) -> None:
    config = ProjectConfig(path=str(tmp_path / "pyproject.toml"), schedulers=schedulers)
    with pytest.raises(CliUsageError, match=message) as info:
        parse("utils.echo", config=config)
    assert str(tmp_path / "pyproject.toml") in str(info.value)


def test_unknown_default_scheduler_in_config(tmp_path: Path) -> None:
    config = ProjectConfig(path=str(tmp_path / "pyproject.toml"), default_scheduler="slurmm")
    with pytest.raises(
        CliUsageError, match=r"default_scheduler: unknown scheduler 'slurmm'; available"
    ):
        parse("utils.echo", config=config)


def test_config_is_read_from_the_cwd_when_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jupyter_sched]\ndefault_scheduler = "local_dir"\n'
    )
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert parse_run_args(["utils.echo"]).scheduler == "local_dir"
    (tmp_path / "pyproject.toml").write_text("[tool.jupyter_sched]\nbogus = 1\n")
    with pytest.raises(CliUsageError, match=r"unknown key 'bogus'"):
        parse_run_args(["utils.echo"])


def test_the_parser_and_splitter_are_reusable() -> None:
    parser = build_run_parser()
    assert isinstance(parser, argparse.ArgumentParser)
    assert parser.parse_args(["-s", "local_cwd", "--dryrun"]).dryrun is True
    assert split_run_argv(["--log", "-s", "x", "comp", "--log"]) == (
        ["--log", "-s", "x"],
        "comp",
        ["--log"],
    )
    assert split_run_argv(["--wait"]) == (["--wait"], None, [])


def test_config_tables_of_unknown_components_are_errors(tmp_path: Path) -> None:
    """A misspelt component table would otherwise be ignored without a word."""
    config = ProjectConfig(
        path=str(tmp_path / "pyproject.toml"), components={"utils.ehco": {"msg": "x"}}
    )
    with pytest.raises(CliUsageError) as info:
        parse("utils.echo", config=config)
    assert str(info.value).startswith(
        f'{tmp_path / "pyproject.toml"} [tool.jupyter_sched.components."utils.ehco"]: no component named'
        " 'utils.ehco'. Did you mean utils.echo?"
    )
    files = ProjectConfig(  # a file or module component is only looked up when it runs
        path=str(tmp_path / "pyproject.toml"), components={"comps.py:greet": {"who": "x"}}
    )
    assert parse("utils.echo", config=files).component_defaults == {}


def test_run_args_say_where_the_component_defaults_came_from(tmp_path: Path) -> None:
    path = str(tmp_path / "pyproject.toml")
    config = ProjectConfig(path=path, components={"utils.echo": {"msg": "from config"}})
    args = parse("utils.echo", config=config)
    assert args.defaults_origin == f'{path} [tool.jupyter_sched.components."utils.echo"]'
    assert parse("utils.sh", "x", config=config).defaults_origin is None
