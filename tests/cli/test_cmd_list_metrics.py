"""``jupyter-sched list`` shows each app's main metric: a real function job on local_cwd logs with
``jupyter_sched.track`` (``loss``, goal min, and ``odd``), another logs nothing, and the real command lists
the first with ``loss 0.01`` (its main metric: the key with a goal, its last value) in a METRIC column and
the second with nothing there; ``--json`` carries the row's ``metrics`` the column is rendered from."""

from __future__ import annotations

import json
import os

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

import jupyter_sched
from tests.track.metric_jobs import logs, logs_nothing


@pytest.fixture(scope="module")
def session_cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """A Cli in this test session's state directory, where ``jupyter_sched.submit`` records its apps."""
    return Cli(tmp_path_factory.mktemp("list_metrics_cli"), dict(os.environ))


def test_list_has_a_metric_column_with_the_main_metric_and_nothing_for_a_job_without(session_cli: Cli) -> None:
    logged, quiet = jupyter_sched.submit(logs, 100), jupyter_sched.submit(logs_nothing)
    assert logged.result(timeout=180) == 100 and quiet.result(timeout=180) == "quiet"
    proc = session_cli("list", "-s", "local_cwd")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["APP", "HANDLE", "STATE", "METRIC", "NAME"], lines[0]
    at, name_at = lines[0].index("METRIC"), lines[0].index("NAME")
    by_handle = {line.split()[0]: line for line in lines[1:]}
    assert by_handle[str(logged.handle)][at:name_at].strip() == "loss 0.01", proc.stdout
    assert by_handle[str(quiet.handle)][at:name_at].strip() == "", "no metric: nothing in the column"
    rows = {r["app_handle"]: r for r in json.loads(session_cli("list", "-s", "local_cwd", "--json").stdout)}
    assert rows[str(logged.handle)]["metrics"][0] == {"key": "loss", "last": 0.01, "step": 99, "best": 0.01,
                                                      "goal": "min"}  # fmt: skip
    assert rows[str(quiet.handle)]["metrics"] is None
