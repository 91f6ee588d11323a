"""Metric records as text: one JSON object per line, in a replica's metrics file or marked on its stderr.

Pure (standard library and ``jupyter_sched.track.values``, where the key rule and the non-finite names are
defined once for the writer and every reader), so every reader (the notebook, the CLI, the server) parses
them the same way and a torn or corrupt line is one skipped line, never an exception. The format (``docs/metrics.md``)::

    {"v":1,"w":"ab12","seq":3,"t":1700000000.5,"step":3,"metrics":{"loss":0.41,"acc":"NaN"}}
    {"v":1,"w":"ab12","seq":0,"t":1700000000.1,"define":{"loss":"min"}}
    {"v":1,"w":"ab12","seq":9,"t":1700000009.0,"summary":{"best":0.9,"ckpt":"/out/best.pt"}}

``w`` (the writer, optional) and ``seq`` (strictly increasing per writer) identify a record, so one seen in a
file and on stderr counts once. On stderr a record is a line that starts with :data:`MARK` (or has it right
after a ``\\r``, where a progress bar left its line open): ``@@jupyter_sched:metrics {...}``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Optional, Union

from jupyter_sched.track.layout import LINE_MARK, TRACKER_MARK
from jupyter_sched.track.values import KEY_RE, NON_FINITE, decode_number
from jupyter_sched.track.values import json_value as encode_number

MARK = LINE_MARK
WRITER_RE = re.compile(r"[A-Za-z0-9_.-]{0,64}")

SummaryValue = Union[None, bool, float, str]


@dataclass(frozen=True)
class MetricRecord:
    """One parsed record: metric values at a step, goals defined, or summary values set."""

    writer: str
    seq: int
    t: float
    step: Optional[int] = None
    metrics: Dict[str, float] = field(default_factory=dict)
    define: Dict[str, str] = field(default_factory=dict)
    summary: Dict[str, SummaryValue] = field(default_factory=dict)

    @property
    def identity(self) -> tuple:
        return (self.writer, self.seq)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"bare {name} is not JSON")


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def record_from_json(obj: Any) -> Optional[MetricRecord]:
    """A decoded object as a record, or None unless it is a valid one (version 1)."""
    if not isinstance(obj, dict) or obj.get("v") != 1:
        return None
    seq, t, writer = _int(obj.get("seq")), obj.get("t"), obj.get("w", "")
    if seq is None or isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        return None
    if not isinstance(writer, str) or WRITER_RE.fullmatch(writer) is None:
        return None
    if "metrics" in obj:
        step, raw = obj.get("step"), obj["metrics"]
        if (step is not None and _int(step) is None) or not isinstance(raw, dict):
            return None
        metrics: Dict[str, float] = {}
        for k, v in raw.items():
            x = decode_number(v)
            if x is None or KEY_RE.fullmatch(k) is None:
                return None
            metrics[k] = x
        return MetricRecord(writer, seq, float(t), step, metrics=metrics)
    if "define" in obj:
        raw = obj["define"]
        if not isinstance(raw, dict) or not all(KEY_RE.fullmatch(k) and g in ("min", "max") for k, g in raw.items()):
            return None
        return MetricRecord(writer, seq, float(t), define=dict(raw))
    if "summary" in obj:
        raw = obj["summary"]
        if not isinstance(raw, dict):
            return None
        summary: Dict[str, SummaryValue] = {}
        for k, v in raw.items():
            if KEY_RE.fullmatch(k) is None:
                return None
            if v is None or isinstance(v, (bool, str)):
                summary[k] = v if not (isinstance(v, str) and v in NON_FINITE) else NON_FINITE[v]
            else:
                x = decode_number(v)
                if x is None:
                    return None
                summary[k] = x
        return MetricRecord(writer, seq, float(t), summary=summary)
    return None


def parse_record(line: str) -> Optional[MetricRecord]:
    """A line of a metrics file as a record; None for a blank, torn or corrupt one (strict JSON only)."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return record_from_json(obj)


FORWARDER_PREFIX = re.compile(
    r"(?:\x1b\[[0-9;]*m)*\((?:[A-Za-z_][\w.:-]* )?pid=\d+(?:, ip=[0-9A-Fa-f.:]+)?\)(?:\x1b\[[0-9;]*m)* "
)
"""What a log forwarder puts before a worker's line: Ray prints ``(CommandActor pid=5529) `` (and
``(pid=12, ip=10.0.0.2) ``), coloured, before each line of a ``torchx:ray`` replica."""


def _after_mark(line: str, mark: str) -> Optional[str]:
    """The text after ``mark`` when it starts ``line``, follows its last ``\\r`` (a progress bar left the line
    open) or a log forwarder's :data:`FORWARDER_PREFIX` there; else None."""
    start = line.rfind("\r") + 1
    if not line.startswith(mark, start):
        prefix = FORWARDER_PREFIX.match(line, start)
        if prefix is None or not line.startswith(mark, prefix.end()):
            return None
        start = prefix.end()
    return line[start + len(mark) :].rstrip("\r\n")


def marked_payload(line: str) -> Optional[str]:
    """The JSON after :data:`MARK` when ``line`` is a marked line (see :func:`_after_mark`), else None."""
    return _after_mark(line, MARK)


def tracker_payload(line: str) -> Optional[str]:
    """The JSON after :data:`TRACKER_MARK` when ``line`` is a TorchX tracker entry printed on stderr (placed
    as :func:`marked_payload`'s mark), else None."""
    return _after_mark(line, TRACKER_MARK)


def tracker_entry(payload: str) -> Optional[Dict[str, Any]]:
    """A tracker entry's JSON as a dict (``run_id`` text and a ``kind``), else None (strict JSON only)."""
    try:
        obj = json.loads(payload, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("run_id"), str) and isinstance(obj.get("kind"), str):
        return obj
    return None


def parse_marked_line(line: str) -> Optional[MetricRecord]:
    """A stderr line as a record: None unless it is a marked line holding a valid record."""
    payload = marked_payload(line)
    return None if payload is None else parse_record(payload)


def format_record(record: MetricRecord) -> str:
    """``record`` as one line of strict JSON (what :func:`parse_record` reads back)."""
    obj: Dict[str, Any] = {"v": 1, "w": record.writer, "seq": record.seq, "t": record.t}
    if record.define:
        obj["define"] = record.define
    elif record.summary:
        obj["summary"] = {k: encode_number(v) if isinstance(v, float) else v for k, v in record.summary.items()}
    else:
        obj["step"] = record.step
        obj["metrics"] = {k: encode_number(v) for k, v in record.metrics.items()}
    return json.dumps(obj, allow_nan=False, separators=(",", ":"))


def summarize(records: Iterable[MetricRecord]) -> Dict[str, Dict[str, Any]]:
    """Per key: count, last, min, max (NaN never a min or max) with the step of each, and the goal; what a
    replica's summary file holds, for records that came without one (from stderr)."""
    out: Dict[str, Dict[str, Any]] = {}
    goals: Dict[str, str] = {}
    for r in records:
        goals.update(r.define)
        for k, v in r.metrics.items():
            s = out.setdefault(k, {"count": 0, "last": None, "last_step": None, "min": None, "min_step": None,
                                   "max": None, "max_step": None, "goal": None})  # fmt: skip
            s["count"] += 1
            s["last"], s["last_step"] = v, r.step
            if v == v:
                if s["min"] is None or v < s["min"]:
                    s["min"], s["min_step"] = v, r.step
                if s["max"] is None or v > s["max"]:
                    s["max"], s["max_step"] = v, r.step
    for k, s in out.items():
        s["goal"] = goals.get(k)
    return out
