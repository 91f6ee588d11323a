"""TorchX's tracker API against TorchX 0.7.0 installed: a job's ``app_run_from_env()`` finds our backend by
the entry point the Runner names in ``TORCHX_TRACKERS``, and the backend keeps what TorchX's fsspec reference
backend keeps, with the same answers (metadata merged in order, artifacts by name, sources)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

import jupyter_sched.runner
from jupyter_sched.frontend.job import Job
from jupyter_sched.specs import AppDef, AppState, Role, random_id
from jupyter_sched.track.torchx_tracker import artifacts_by_name, merged_metadata, read_entries

torchx = pytest.importorskip("torchx", reason="needs TorchX (the [torchx] extra)")
pytestmark = pytest.mark.torchx


def exercise(tracker, run_id: str, overwrite: bool) -> tuple:  # type: ignore[no-untyped-def]
    tracker.add_metadata(run_id, lr=0.1, epochs=3)
    tracker.add_metadata(run_id, note="second", **({"lr": 0.01} if overwrite else {}))
    tracker.add_artifact(run_id, "model", "/out/model-1.pt", {"step": 1})
    if overwrite:
        tracker.add_artifact(run_id, "model", "/out/model-2.pt", {"step": 2})
    tracker.add_artifact(run_id, "data", "/in/data.csv")
    tracker.add_source(run_id, "local_cwd://s/parent-1", "model")
    return (
        dict(tracker.metadata(run_id)),
        {k: (a.name, a.path, a.metadata) for k, a in tracker.artifacts(run_id).items()},
        sorted((s.source_run_id, s.artifact_name) for s in tracker.sources(run_id)),
        sorted((s.source_run_id, s.artifact_name) for s in tracker.sources(run_id, artifact_name="data")),
        list(tracker.run_ids()),
        list(tracker.run_ids(parent_run_id="local_cwd://s/parent-1")),
    )


def test_the_backend_answers_as_torchx_fsspec_backend_does(tmp_path: Path) -> None:
    import fsspec
    from torchx.tracker.api import build_trackers
    from torchx.tracker.backend.fsspec import FsspecTracker

    assert torchx.__version__ == "0.7.0"
    (ours,) = build_trackers({"jupyter_sched": str(tmp_path / "ours")})  # found by the entry point
    (tmp_path / "ref").mkdir()
    reference = FsspecTracker(fsspec.filesystem("file"), str(tmp_path / "ref"))
    run_id = "local_cwd://s/app-1"
    assert exercise(ours, run_id, False) == exercise(reference, run_id, False)


def test_a_later_value_and_a_later_artifact_of_a_name_win(tmp_path: Path) -> None:
    """fsspec's backend means the same (entries merged in order) but reads its entries in directory-listing
    order, which the filesystem chooses; ours are in the order they were added."""
    from torchx.tracker.api import build_trackers

    (ours,) = build_trackers({"jupyter_sched": str(tmp_path)})
    metadata, artifacts, *_ = exercise(ours, "local_cwd://s/app-1", True)
    assert metadata == {"lr": 0.01, "epochs": 3, "note": "second"}
    assert artifacts["model"] == ("model", "/out/model-2.pt", {"step": 2})


TRACKED = """
from torchx.tracker import app_run_from_env
run = app_run_from_env()
run.add_metadata(lr=0.1, epochs=3)
run.add_metadata(lr=0.01)
run.add_artifact("model", "/out/model.pt", {"acc": 0.9})
print("id", run.job_id(), [type(b).__name__ for b in run.backends])
"""


def test_a_job_using_app_run_from_env_stores_beside_its_metrics(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TORCHX_TRACKERS", "")  # the user's list is kept; an empty one gets ours alone
    with jupyter_sched.runner.get_runner(f"t-{random_id()}") as runner:
        role = Role("trainer", "unused", entrypoint=sys.executable, args=["-c", textwrap.dedent(TRACKED)],
                    env={"TORCHX_TRACKERS": "my_tracker_module_that_is_absent"})  # fmt: skip
        info = runner.dryrun(AppDef("tracked", [role]), "local_cwd", {"log_dir": str(tmp_path)})
        env = info.request.role_params["trainer"][0].env
        assert env["TORCHX_TRACKERS"] == "my_tracker_module_that_is_absent,jupyter_sched", "appended, not replaced"
        assert env["TORCHX_TRACKER_JUPYTER_SCHED_CONFIG"] == "auto" and "TORCHX_PARENT_RUN_ID" not in env
        role.env = {}
        handle = runner.run(AppDef("tracked", [role]), "local_cwd", {"log_dir": str(tmp_path)})
        job = Job(handle, runner)
        status = job.wait(timeout=120)
        logs = "\n".join(job.logs())
        assert status is not None and status.state == AppState.SUCCEEDED, logs
        assert f"id {handle} ['JupyterSchedTracker']" in logs
        entries = read_entries(job.metrics.directory)
        assert merged_metadata(entries, handle) == {"lr": 0.01, "epochs": 3}
        assert artifacts_by_name(entries, handle) == {
            "model": {"name": "model", "path": "/out/model.pt", "metadata": {"acc": 0.9}}
        }
        assert os.listdir(job.metrics.directory or "") == ["trainer.0.tracker.jsonl"]
