"""``GET jobs/<handle>``'s ``tracker``: what a real local_cwd job told TorchX's tracker API
(``app_run_from_env()``), its own run first, bounded, secrets masked, valid against the schema; and the
cache that reads a job's tracker files again only when they changed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from jupyter_sched.frontend.jobs.schema import schema_for
from jupyter_sched.frontend.jobs.tracked import MAX_KEYS, TrackedCache
from tests.server.conftest import Cli, JobsServer, quote

pytest.importorskip("torchx", reason="needs TorchX (the [torchx] extra)")
pytestmark = pytest.mark.torchx

SECRET = "sk-abcdef0123456789"
TRACKED = (
    "from torchx.tracker import app_run_from_env; run = app_run_from_env(); "
    f"run.add_metadata(lr=0.1, epochs=3); run.add_metadata(lr=0.01, WANDB_API_KEY={SECRET!r}, "
    f"db='postgres://me:{SECRET}@db/x'); run.add_artifact('model', '/out/model.pt', {{'acc': 0.9}}); "
    "run.add_metadata(**{f'k{i:03d}': i for i in range(60)})"
)


def test_a_jobs_detail_has_its_tracker_block_masked(jobs_server: JobsServer, cli: Cli) -> None:
    proc = cli("run", "--wait", "utils.python", "-c", TRACKED)
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip().splitlines()[-1]

    detail = jobs_server.api("GET", f"jobs/{quote(handle)}")
    jsonschema.validate(detail, schema_for("detail"), cls=jsonschema.Draft202012Validator)
    [run] = detail["tracker"]
    assert run["run_id"] == handle
    metadata = run["metadata"]
    assert list(metadata)[:5] == ["lr", "epochs", "WANDB_API_KEY", "db", "k000"]  # in the order added
    assert metadata["lr"] == 0.01 and metadata["epochs"] == 3  # values as the job stored them
    assert len(metadata) == MAX_KEYS and run["more_metadata"] == 64 - MAX_KEYS
    assert run["artifacts"] == [{"name": "model", "path": "/out/model.pt", "metadata": {"acc": 0.9}}]
    assert run["more_artifacts"] == 0
    assert SECRET not in json.dumps(detail)
    assert metadata["WANDB_API_KEY"] == "********" and metadata["db"].startswith("postgres://")

    echo = cli("run", "--wait", "utils.echo", "--msg", "hi").stdout.strip().splitlines()[-1]
    assert jobs_server.api("GET", f"jobs/{quote(echo)}")["tracker"] == []  # no tracker: an empty list


def test_the_cache_reads_a_directory_again_only_when_a_tracker_file_changed(tmp_path: Path) -> None:
    from torchx.tracker.api import build_trackers

    (tracker,) = build_trackers({"jupyter_sched": str(tmp_path)})
    cache = TrackedCache()
    assert cache.of(str(tmp_path), "local_cwd://s/app-1") == [] and cache.reads == 0  # no file, no read
    tracker.add_metadata("local_cwd://s/app-1", lr=0.1)
    tracker.add_metadata("other", note="x")
    first = cache.of(str(tmp_path), "local_cwd://s/app-1")
    assert [r["run_id"] for r in first] == ["local_cwd://s/app-1", "other"] and cache.reads == 1
    assert cache.of(str(tmp_path), "local_cwd://s/app-1") == first and cache.reads == 1  # unchanged: kept
    (tmp_path / "metrics.txt").write_text("not a tracker file")
    assert cache.of(str(tmp_path), "local_cwd://s/app-1") == first and cache.reads == 1
    tracker.add_metadata("local_cwd://s/app-1", lr=0.01)
    assert cache.of(str(tmp_path), "local_cwd://s/app-1")[0]["metadata"] == {"lr": 0.01} and cache.reads == 2
