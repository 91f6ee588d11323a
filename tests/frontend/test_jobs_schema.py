"""One schema for what the server sends: the JSON Schema and the extension's TypeScript types are written
from the row dataclasses, and the checked-in ``labextension/src/model.ts`` is what they write today.

So a field added to a row in Python and not to the TypeScript fails here (rewrite model.ts with the
command the module names); the server side is checked against the same schema with a real server in
``tests/server/test_schema.py``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import jsonschema
import pytest

from jupyter_sched.frontend.jobs import rows, schema
from jupyter_sched.frontend.jobs.order import group
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus

SRC = Path(__file__).resolve().parents[2] / "labextension" / "src"


def test_model_ts_is_what_the_dataclasses_write_today() -> None:
    written = (SRC / "model.ts").read_text()
    assert written == schema.typescript(), (
        "labextension/src/model.ts is out of date with jupyter_sched/frontend/jobs: run\n"
        "  python -m jupyter_sched.frontend.jobs.schema --typescript > labextension/src/model.ts"
    )


def test_every_field_of_a_row_is_a_field_of_its_typescript_interface() -> None:
    """Field by field, from the generated file (not from the generator), so a hand edit is caught too."""
    written = (SRC / "model.ts").read_text()
    for cls in (rows.JobRow, rows.SweepRow, rows.UsageSummary):
        body = re.search(rf"export interface I{cls.__name__} \{{\n(.*?)\n\}}", written, re.S)
        assert body, f"no interface I{cls.__name__} in model.ts"
        declared = [line.strip().split(":")[0].rstrip("?") for line in body.group(1).splitlines()]
        assert declared == [f.name for f in dataclasses.fields(cls)], cls.__name__


def test_the_extension_declares_no_row_of_its_own_and_derives_no_label() -> None:
    api = (SRC / "api.ts").read_text()
    assert "export interface IJobRow" not in api and "from './model'" in api
    for path in SRC.glob("*.ts"):
        text = path.read_text()
        assert "[a-z0-9]{12}" not in text, f"{path.name} spells the sweep names' random id: take the row's label"
        assert "isRunning(" not in text, f"{path.name} decides whether a job runs: take the row's running"


def test_the_schema_is_valid_and_strict_and_rows_made_by_the_model_validate() -> None:
    full = schema.json_schema()
    jsonschema.Draft202012Validator.check_schema(full)
    done = AppStatus(AppState.FAILED, roles=[RoleStatus("t", [
        ReplicaStatus(0, AppState.FAILED, "t", "h", exit_code=1, started=1.0, finished=2.0)])])  # fmt: skip
    made = [
        rows.job_row(
            f"local_cwd://default/s-b3k2x9q0d1xyz-00{i}-x",
            done,
            app_id=f"s-b3k2x9q0d1xyz-00{i}-x",
            name=f"s-b3k2x9q0d1xyz-00{i}",
            scheduler="local_cwd",
            session="default",
            listed_state=AppState.FAILED,
            seen=0.0,
        )  # fmt: skip
        for i in range(2)
    ]
    (sweep,) = group(made)
    jsonschema.validate(sweep.to_json(), schema.schema_for("sweep"), cls=jsonschema.Draft202012Validator)
    jsonschema.validate(made[0].to_json(), schema.schema_for("row"), cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**made[0].to_json(), "extra": 1}, schema.schema_for("row"))
