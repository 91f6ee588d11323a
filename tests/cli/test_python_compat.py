"""What differs between the Pythons we declare (3.10 to 3.13; scripts/ci/python_versions.sh runs this there):
project config is read (``tomllib``, or ``tomli`` before 3.11) and ``--since`` takes a ``Z`` time."""

from __future__ import annotations

import warnings
from datetime import datetime, timezone
from pathlib import Path

from jupyter_sched.frontend.launch.config import load_config
from jupyter_sched.frontend.times import parse_time


def test_project_config_is_read_on_every_python(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jupyter_sched]\ndefault_scheduler = "local_dir"\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "ignoring pyproject.toml" would be a failure
        config = load_config(start=str(tmp_path))
    assert config.default_scheduler == "local_dir"


def test_since_takes_a_utc_z_time() -> None:
    want = datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc)
    assert parse_time("2026-11-23T10:00:00Z", "--since") == want
    assert parse_time("2026-11-23T10:00:00z", "--since") == want
    assert parse_time("2026-11-23T10:00:00+00:00", "--since") == want
