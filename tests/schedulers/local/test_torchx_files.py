"""What a local replica finds and what an ended app leaves behind, where tools written for TorchX look:
the ``SUCCESS`` file, and PATH with the working directory placed as ``prepend_cwd`` says."""

from __future__ import annotations

import json
import os

import pytest

from jupyter_sched.schedulers.local_scheduler import LocalScheduler, create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, Role

from ..helpers import sh_app, wait_until


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


def _ended(sched: LocalScheduler, app_id: str) -> AppState:
    wait_until(lambda: sched.describe(app_id).state.is_terminal, 30, f"{app_id} to end")
    return sched.describe(app_id).state


def test_success_file_is_there_as_soon_as_the_app_ended_and_lists_every_replica(
    sched: LocalScheduler, log_dir: str
) -> None:
    script = 'echo out $JUPYTER_SCHED_REPLICA_ID; exit "$JUPYTER_SCHED_REPLICA_ID"'
    app_id = sched.submit(sh_app(script, num_replicas=2), {"log_dir": log_dir})
    app_dir = os.path.join(log_dir, "test", app_id)
    assert _ended(sched, app_id) == AppState.FAILED
    with open(os.path.join(app_dir, "SUCCESS")) as f:  # no wait: it exists once describe says ended
        marker = json.load(f)
    # the name means "logs complete"; final_state says how the app ended
    assert (marker["app_id"], marker["log_dir"], marker["final_state"]) == (app_id, app_dir, "FAILED")
    replicas = marker["roles"]["main"]
    assert [(r["replica_id"], r["exitcode"]) for r in replicas] == [(0, 0), (1, 1)]
    for r in replicas:
        with open(r["stdout"]) as out:
            assert out.read() == f"out {r['replica_id']}\n"
        assert os.path.dirname(r["error_file"]) == os.path.dirname(r["stdout"])
        assert isinstance(r["pid"], int)
    assert isinstance(marker["last_updated"], float)
    assert oct(os.stat(os.path.join(app_dir, "SUCCESS")).st_mode & 0o777) == "0o600"


def test_no_success_file_while_running_and_a_cancelled_app_gets_one(sched: LocalScheduler, log_dir: str) -> None:
    app_id = sched.submit(sh_app("sleep 600"), {"log_dir": log_dir, "cancel_grace": 5.0})
    marker = os.path.join(log_dir, "test", app_id, "SUCCESS")
    wait_until(lambda: sched.describe(app_id).roles_statuses[0].replicas[0].state == AppState.RUNNING)
    assert not os.path.exists(marker)
    sched.cancel(app_id)
    assert _ended(sched, app_id) == AppState.CANCELLED
    with open(marker) as f:
        assert json.load(f)["final_state"] == "CANCELLED"


@pytest.mark.parametrize("prepend_cwd, expected", [(False, "from-path"), (True, "from-cwd")])
def test_cwd_goes_after_the_inherited_path_unless_prepend_cwd(  # type: ignore[no-untyped-def]
    sched: LocalScheduler, log_dir: str, tmp_path, monkeypatch, prepend_cwd: bool, expected: str
) -> None:
    # the option's help promises this; TorchX put the working directory before the inherited PATH
    # either way, so a same-named tool in the working directory always shadowed the installed one
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    for d, word in ((bin_dir, "from-path"), (work, "from-cwd")):
        d.mkdir()
        tool = d / "mytool"
        tool.write_text(f"#!/bin/sh\necho {word}\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(work)
    app = AppDef("p", [Role("r", "x", entrypoint="mytool")])
    app_id = sched.submit(app, {"log_dir": log_dir, "prepend_cwd": prepend_cwd})
    assert _ended(sched, app_id) == AppState.SUCCEEDED
    assert list(sched.log_iter(app_id, "r", 0)) == [f"{expected}\n"]
