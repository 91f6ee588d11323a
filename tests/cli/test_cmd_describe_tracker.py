"""``jupyter-sched describe`` shows what a job told TorchX's tracker API (``app_run_from_env()``), in the
text and in the JSON, masked like the rest of the CLI's output."""

from __future__ import annotations

import json

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

pytest.importorskip("torchx", reason="needs TorchX (the [torchx] extra)")
pytestmark = pytest.mark.torchx

TRACKED = (
    "from torchx.tracker import app_run_from_env; run = app_run_from_env(); "
    "run.add_metadata(lr=0.1, epochs=3); run.add_metadata(lr=0.01, WANDB_API_KEY='sk-abcdef0123456789'); "
    "run.add_artifact('model', '/out/model.pt', {'acc': 0.9}); run.add_artifact('model', '/out/model-2.pt'); "
    "run.add_source('local_cwd://default/data-prep-1')"
)


def test_describe_shows_the_trackers_metadata_artifacts_and_sources(cli: Cli) -> None:
    proc = cli("run", "--wait", "utils.python", "-c", TRACKED)
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip().splitlines()[-1]

    text = cli("describe", handle)
    assert text.returncode == 0, text.stderr
    assert text.stdout.index("roles:") < text.stdout.index("\ntracker:")  # the AppDef as before, then the tracker
    out = text.stdout[text.stdout.index("\ntracker:"):]  # (the AppDef's args hold the script's text)
    assert f"- run_id: {json.dumps(handle)}" in out  # quoted: a handle has ': '-like text
    assert "lr: 0.01" in out and "epochs: 3" in out and "lr: 0.1" not in out  # merged in order
    assert "path: /out/model-2.pt" in out and "/out/model.pt" not in out  # the last artifact of a name
    assert 'source_id: "local_cwd://default/data-prep-1"' in out
    assert "sk-abcdef0123456789" not in text.stdout

    data = json.loads(cli("describe", handle, "--json").stdout)
    assert data["name"] and data["roles"]  # the AppDef's fields are where they were
    [run] = data["tracker"]
    assert run["run_id"] == handle and run["metadata"]["lr"] == 0.01 and run["metadata"]["epochs"] == 3
    assert run["metadata"]["WANDB_API_KEY"] != "sk-abcdef0123456789"
    assert run["artifacts"] == [{"name": "model", "path": "/out/model-2.pt", "metadata": None}]
    assert run["sources"] == [{"source_id": "local_cwd://default/data-prep-1", "artifact_name": None}]


def test_describe_of_an_app_that_used_no_tracker_has_no_tracker_field(cli: Cli) -> None:
    handle = cli("run", "--wait", "utils.echo", "--msg", "hi").stdout.strip().splitlines()[-1]
    assert "tracker" not in json.loads(cli("describe", handle, "--json").stdout)
    assert "tracker:" not in cli("describe", handle).stdout
