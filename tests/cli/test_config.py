"""The project config: [tool.jupyter_sched] of the nearest pyproject.toml that has it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jupyter_sched.frontend.launch.config import ConfigError, ProjectConfig, find_config, load_config

FULL = """
[project]
name = "demo"

[tool.jupyter_sched]
default_scheduler = "local_dir"

[tool.jupyter_sched.schedulers.local_cwd]
log_dir = "logs"
prepend_cwd = true

[tool.jupyter_sched.components."utils.sh"]
num_replicas = 2
env = { A = "1" }
"""


def test_found_by_walking_up_past_files_without_the_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(FULL)
    inner = tmp_path / "pkg" / "sub"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text(
        "[project]\nname = 'inner'\n"
    )  # no table: skipped
    assert find_config(str(inner)) == str(tmp_path / "pyproject.toml")
    config = load_config(str(inner))
    assert config == ProjectConfig(
        path=str(tmp_path / "pyproject.toml"),
        default_scheduler="local_dir",
        schedulers={"local_cwd": {"log_dir": "logs", "prepend_cwd": True}},
        components={"utils.sh": {"num_replicas": 2, "env": {"A": "1"}}},
    )
    assert config.scheduler_cfg("local_cwd") == {"log_dir": "logs", "prepend_cwd": True}
    assert config.scheduler_cfg("local_docker") == {}


def test_no_config_is_an_empty_config(tmp_path: Path) -> None:
    assert find_config(str(tmp_path)) is None
    assert load_config(str(tmp_path)) == ProjectConfig()


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "[tool.jupyter_sched]\nschedulers = 3\n",
            r"\[tool.jupyter_sched.schedulers\]: must hold one table per name",
        ),
        (
            "[tool.jupyter_sched]\ndefault_scheduler = 1\n",
            r"default_scheduler must be a string, got 1",
        ),
        (
            "[tool.jupyter_sched]\nbogus = 1\n",
            r"unknown key 'bogus'; valid keys: default_scheduler, schedulers, components",
        ),
        (
            "[tool.jupyter_sched.components.utils.sh]\nnum_replicas = 2\n",
            r'must be quoted, e.g. \[tool.jupyter_sched.components."utils.sh"\]',
        ),
        ("[tool.jupyter_sched\n", r"cannot read .*pyproject.toml"),
    ],
)
def test_errors_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(str(tmp_path))
    assert str(tmp_path / "pyproject.toml") in str(info.value)


def test_without_a_toml_reader_the_config_is_ignored_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.10 without tomli: there is no tomllib; importing a module mapped to None fails like a missing one."""
    (tmp_path / "pyproject.toml").write_text(FULL)
    monkeypatch.setitem(sys.modules, "tomllib", None)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "tomli", None)  # type: ignore[arg-type]
    with pytest.warns(
        UserWarning,
        match=r"ignoring .*pyproject.toml: reading \[tool.jupyter_sched\] needs Python 3.11\+ or `pip install tomli`",
    ):
        assert load_config(str(tmp_path)) == ProjectConfig()
