"""One schema for what the server sends, written from the row dataclasses: JSON Schema and TypeScript.

The rows (:mod:`.rows`) and the server's page and detail (:mod:`.payloads`) are dataclasses with type
hints; :func:`json_schema` turns their fields into a JSON Schema (draft 2020-12, one ``$defs`` entry per
dataclass, no property beyond the fields), and :func:`typescript` into the interfaces of
``labextension/src/model.ts``. The tests check both sides: every answer of a real server validates
against the schema (``tests/server/test_schema.py``), and ``model.ts`` is what :func:`typescript` writes
today (``tests/frontend/test_jobs_schema.py``), so a field added to a row and forgotten in the extension
fails a test. Rewrite the TypeScript with::

    python -m jupyter_sched.frontend.jobs.schema --typescript > labextension/src/model.ts

Hand-written rather than pydantic's: the hints used are few (str, int, float, bool, None, Optional,
Union, List, Dict[str, X], Literal, Any for any JSON, and dataclasses) and the package carries no model
library.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from typing import Any, Dict, List, Tuple, Type

from jupyter_sched.frontend.jobs.payloads import (
    DetailExtra,
    EndedPage,
    GpuJson,
    JobMetricsAnswer,
    JobPage,
    MetricPoint,
    MetricsReplica,
    MetricStats,
    ReplicaJson,
    RoleJson,
    StatusJson,
    TrackerArtifactJson,
    TrackerRunJson,
    UsageJson,
    UsageSampleJson,
)
from jupyter_sched.frontend.jobs.rows import JobRow, MetricLast, SweepRow, UsageSummary

CLASSES: Tuple[Type[Any], ...] = (
    UsageSummary, MetricLast, JobRow, SweepRow, JobPage, EndedPage, GpuJson, UsageJson, ReplicaJson, RoleJson,
    StatusJson, UsageSampleJson, MetricPoint, MetricStats, MetricsReplica, JobMetricsAnswer, TrackerArtifactJson,
    TrackerRunJson,
)  # fmt: skip
"""Every dataclass of the payloads, in the order model.ts declares them; ``JobDetail`` is made from
:class:`JobRow` and :class:`~.payloads.DetailExtra`."""
PAYLOADS = {"page": "JobPage", "detail": "JobDetail", "row": "JobRow", "sweep": "SweepRow",
            "metrics": "JobMetricsAnswer", "ended": "EndedPage"}  # fmt: skip
"""The answers a client reads, by the name of their ``$defs`` entry."""
_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
_TS = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _hints(cls: Type[Any]) -> List[Tuple[dataclasses.Field, Any]]:
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def _optional(f: dataclasses.Field) -> bool:
    """A field whose default is None may be left out of the answer (``gpus``); one with another default
    (``kind``) is always there."""
    return f.default is None


# -- JSON Schema --------------------------------------------------------------------------------------------
def _type_schema(hint: Any) -> Dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:  # a value the job stored as it liked (tracker metadata): any JSON
        return {}
    if hint in _PRIMITIVES:
        if hint is float:  # JSON does not tell 1 from 1.0
            return {"type": "number"}
        return {"type": _PRIMITIVES[hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return {"$ref": f"#/$defs/{hint.__name__}"}
    if origin is typing.Union:
        return {"anyOf": [_type_schema(a) for a in args]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (list, List):
        return {"type": "array", "items": _type_schema(args[0])}
    if origin in (dict, Dict):
        if args[0] is not str:
            raise TypeError(f"{hint}: a JSON object's keys are strings")
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    raise TypeError(f"{hint}: no JSON Schema for this type hint; add it to jupyter_sched.frontend.jobs.schema")


def _object(fields: List[Tuple[dataclasses.Field, Any]], doc: str) -> Dict[str, Any]:
    return {
        "type": "object",
        "description": doc,
        "properties": {f.name: _type_schema(hint) for f, hint in fields},
        "required": [f.name for f, _ in fields if not _optional(f)],
        "additionalProperties": False,
    }


def _detail_fields() -> List[Tuple[dataclasses.Field, Any]]:
    extra = dict((f.name, (f, h)) for f, h in _hints(DetailExtra))
    row = [extra.pop(f.name, (f, h)) for f, h in _hints(JobRow)]
    return row + list(extra.values())


def _doc(cls: Type[Any]) -> str:
    return " ".join((cls.__doc__ or cls.__name__).split())


def json_schema() -> Dict[str, Any]:
    """The JSON Schema of every payload (``$defs``); :func:`schema_for` picks one."""
    defs = {cls.__name__: _object(_hints(cls), _doc(cls)) for cls in CLASSES}
    defs["JobDetail"] = _object(_detail_fields(), _doc(DetailExtra))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}


def schema_for(payload: str) -> Dict[str, Any]:
    """The schema of one answer: ``page``, ``detail``, ``row``, ``sweep``, ``metrics`` or ``ended``
    (:data:`PAYLOADS`)."""
    return {**json_schema(), "$ref": f"#/$defs/{PAYLOADS[payload]}"}


# -- TypeScript ---------------------------------------------------------------------------------------------
def _ts_type(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return "unknown"
    if hint in _TS:
        return _TS[hint]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"I{hint.__name__}"
    if origin is typing.Union:
        return " | ".join(_ts_type(a) for a in args)
    if origin is typing.Literal:
        return " | ".join(f"'{a}'" for a in args)
    if origin in (list, List):
        inner = _ts_type(args[0])
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin in (dict, Dict):
        return f"{{ [key: string]: {_ts_type(args[1])} }}"
    raise TypeError(f"{hint}: no TypeScript for this type hint; add it to jupyter_sched.frontend.jobs.schema")


def _interface(name: str, fields: List[Tuple[dataclasses.Field, Any]], doc: str, extends: str = "") -> str:
    lines = [f"/** {doc} */", f"export interface I{name}{extends} {{"]
    for f, hint in fields:
        lines.append(f"  {f.name}{'?' if _optional(f) else ''}: {_ts_type(hint)};")
    return "\n".join(lines + ["}"])


def typescript() -> str:
    """``labextension/src/model.ts``: one interface per dataclass, ``IJobDetail`` as the row with the
    detail's fields over it."""
    parts = [
        "/**\n * What the jupyter_sched server sends, GENERATED from the row dataclasses: do not edit. Rewrite with\n"
        " *   python -m jupyter_sched.frontend.jobs.schema --typescript > labextension/src/model.ts\n"
        " * (jupyter_sched/frontend/jobs/schema.py; tests/frontend/test_jobs_schema.py checks it is current).\n */"
    ]
    parts += [_interface(cls.__name__, _hints(cls), _doc(cls)) for cls in CLASSES]
    row = {f.name for f in dataclasses.fields(JobRow)}
    over = ", ".join(f"'{f.name}'" for f, _ in _hints(DetailExtra) if f.name in row)
    parts.append(_interface("JobDetail", _hints(DetailExtra), _doc(DetailExtra), f" extends Omit<IJobRow, {over}>"))
    parts.append("/** One line of the jobs list. */\nexport type IEntry = IJobRow | ISweepRow;")
    return "\n\n".join(parts) + "\n"


def main(argv: List[str]) -> int:
    import json

    if argv == ["--typescript"]:
        sys.stdout.write(typescript())
        return 0
    if argv == ["--json"]:
        print(json.dumps(json_schema(), indent=2))
        return 0
    print("usage: python -m jupyter_sched.frontend.jobs.schema --typescript | --json", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover - the command line above
    raise SystemExit(main(sys.argv[1:]))
