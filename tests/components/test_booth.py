"""utils.booth run for real: its result file (TorchX's FsspecResultTracker layout), and its source copied
out with get_builtin_source still running from another file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.components.apps.booth import booth, main, read_result, write_result
from jupyter_sched.specs import AppState
from jupyter_sched.specs.finder import get_builtin_source
from tests.conftest import require_module

RunLocal = Any  # the run_local fixture of conftest.py


def test_booth_runs_and_records_its_value(run_local: RunLocal, tmp_path: Path) -> None:
    base = tmp_path / "tracking"
    args = ["--x1", "2", "--x2", "1", "--trial_idx", "7", "--tracker_base", str(base)]
    _, status, logs = run_local("utils.booth", args)
    assert status.state == AppState.SUCCEEDED, logs
    assert json.loads((base / "7").read_text()) == {"booth_eval": 9.0}  # (2+2-7)^2 + (4+1-5)^2
    assert logs[("booth", 0)] == f"booth(2, 1) = 9 -> {base / '7'}\n"


def test_a_copy_of_its_source_runs_from_another_file(run_local: RunLocal, tmp_path: Path) -> None:
    copy = tmp_path / "booth_copy.py"
    copy.write_text(get_builtin_source("utils.booth"))
    base = tmp_path / "tracking"
    _, status, logs = run_local(f"{copy}:booth", ["--x1=1", "--x2=3", f"--tracker_base={base}"])
    assert status.state == AppState.SUCCEEDED, logs
    assert read_result(str(base), 0) == {"booth_eval": 0.0}  # the minimum, at (1, 3)


def test_results_are_read_back_and_replaced(tmp_path: Path) -> None:
    assert booth(1, 3) == 0 and booth(0, 0) == 74
    assert read_result(str(tmp_path), "missing") == {}
    write_result(str(tmp_path), "trial/a", {"v": 1})
    path = write_result(str(tmp_path), "trial/a", {"v": 2})
    assert path == str(tmp_path / "trial" / "a") and read_result(str(tmp_path), "trial/a") == {"v": 2}
    assert sorted(p.name for p in (tmp_path / "trial").iterdir()) == ["a"]  # no temporary file left


@pytest.mark.torchx
def test_torchx_reads_what_booth_wrote(tmp_path: Path) -> None:
    require_module("torchx", "the cross-check reads the result with TorchX's own tracker")
    from torchx.runtime import tracking

    main(["--x1", "0", "--x2", "0", "--trial_idx", "3", "--tracker_base", str(tmp_path)])
    assert tracking.FsspecResultTracker(str(tmp_path))["3"] == {"booth_eval": 74.0}
