"""What a real server sends validates against the one schema (jupyter_sched.frontend.jobs.schema).

A page of the list (jobs, a sweep and its runs), one sweep's runs (``?sweep=``) and each job's detail,
running and ended, succeeded and failed. The schema allows no property beyond the model's fields, so a
field the server adds on its own (not in the model, hence not in the TypeScript types) fails here.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import jsonschema
import pytest

from jupyter_sched.frontend.jobs.schema import schema_for
from tests.server.conftest import Cli, JobsServer, quote
from tests.server.test_api import launch, row_of

SWEEP = "shape-b3k2x9q0d1xyz"


def check(payload: str, body: Any) -> None:
    jsonschema.validate(body, schema_for(payload), cls=jsonschema.Draft202012Validator)


@pytest.fixture
def released(cli: Cli) -> Iterator[None]:
    """The waiting job's GO file made at the end whatever happened: a failed test leaves no job behind."""
    yield
    (cli.cwd / "GO").touch()


def test_every_answer_of_the_list_and_of_a_job_validates(jobs_server: JobsServer, cli: Cli, released: None) -> None:
    handles = [
        launch(cli, "fine", "echo fine"),
        launch(cli, "broken", "echo 'error: loss is NaN' >&2; exit 3"),
        launch(cli, f"{SWEEP}-000", "true"),
        launch(cli, f"{SWEEP}-001", "exit 1"),
        launch(cli, "waiting", "while [ ! -e GO ]; do sleep 0.1; done"),
    ]
    body = jobs_server.wait_for(lambda b: all(row_of(b, h) for h in handles) and b, "every job listed")
    check("page", body)  # one of them still runs
    running = jobs_server.api("GET", f"jobs/{quote(handles[-1])}")
    check("detail", running)
    assert running["running"] and running["state"] == "RUNNING"
    (cli.cwd / "GO").touch()

    def ended(b: Dict[str, Any]) -> Any:
        rows = [row_of(b, h) for h in handles]
        return all(r and not r["running"] for r in rows) and b

    body = jobs_server.wait_for(ended, "every job ended")
    check("page", body)
    sweeps: List[Dict[str, Any]] = [e for e in body["jobs"] if e["kind"] == "sweep" and e["sweep"] == SWEEP]
    assert [(s["label"], s["state"], s["total"]) for s in sweeps] == [("shape", "FAILED", 2)]
    assert [r["label"] for r in sweeps[0]["runs"]] == ["run 001", "run 000"]
    runs = jobs_server.api("GET", "jobs?sweep=" + SWEEP)
    check("page", runs)
    assert (runs["sweep"]["label"], runs["sweep"]["state"], runs["sweep"]["counts"]) == (
        "shape", "FAILED", {"SUCCEEDED": 1, "FAILED": 1}
    )  # fmt: skip
    assert body["sweep"] is None
    for handle in handles:
        detail = jobs_server.api("GET", f"jobs/{quote(handle)}")
        check("detail", detail)
        check("row", {**{k: v for k, v in detail.items() if k not in ("status", "tracker")}, "usage": None})


def test_a_field_the_model_does_not_have_fails_the_schema(jobs_server: JobsServer, cli: Cli) -> None:
    """The server cannot send what the TypeScript types do not declare: the schema says so."""
    handle = launch(cli, "extra", "true")
    body = jobs_server.wait_for(lambda b: row_of(b, handle) and b, f"{handle} listed")
    row = dict(row_of(body, handle) or {})
    check("row", row)
    with pytest.raises(jsonschema.ValidationError, match="progress"):
        check("row", {**row, "progress": 0.5})
    with pytest.raises(jsonschema.ValidationError, match="label"):
        check("row", {k: v for k, v in row.items() if k != "label"})
