"""Metric record lines (``logs.metric_lines``): what a writer formats parses back, strictly; anything else is
None, never an exception; a marked stderr line is found at a line's start or after a ``\\r``."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from jupyter_sched.logs.metric_lines import (
    MARK,
    MetricRecord,
    format_record,
    marked_payload,
    parse_marked_line,
    parse_record,
    summarize,
    tracker_payload,
)

KEYS = st.from_regex(r"[A-Za-z0-9_./-]{1,128}", fullmatch=True)
VALUES = st.floats(allow_nan=True, allow_infinity=True)
RECORDS = st.builds(
    MetricRecord,
    writer=st.from_regex(r"[a-z0-9-]{0,12}", fullmatch=True),
    seq=st.integers(0, 2**53),
    t=st.floats(0, 4e9),
    step=st.integers(0, 2**40),
    metrics=st.dictionaries(KEYS, VALUES, max_size=5),
)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@given(RECORDS)
def test_a_formatted_record_parses_back_and_is_strict_json(record: MetricRecord) -> None:
    line = format_record(record)
    json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))  # no bare NaN
    back = parse_record(line)
    assert back is not None and (back.writer, back.seq, back.t, back.step) == (
        record.writer, record.seq, record.t, record.step,
    )  # fmt: skip
    assert back.metrics.keys() == record.metrics.keys()
    assert all(same(back.metrics[k], v) for k, v in record.metrics.items())
    assert parse_marked_line(MARK + line) == back
    assert parse_marked_line("50% |####  \r" + MARK + line + "\n") == back


@given(st.text(max_size=200))
def test_any_text_is_a_record_or_none_never_an_exception(text: str) -> None:
    parse_record(text)
    parse_marked_line(text)
    parse_marked_line(MARK + text)


@given(RECORDS, st.integers(0, 200))
def test_a_torn_record_is_none(record: MetricRecord, cut: int) -> None:
    line = format_record(record)
    if cut < len(line) - 1:
        assert parse_record(line[:cut]) is None


def test_lines_that_are_not_records() -> None:
    assert parse_record('{"v":1,"seq":0,"t":1,"step":0,"metrics":{"a":NaN}}') is None, "bare NaN is not JSON"
    assert parse_record('{"v":2,"seq":0,"t":1,"step":0,"metrics":{}}') is None, "a newer version"
    assert parse_record('{"v":1,"seq":-1,"t":1,"step":0,"metrics":{}}') is None
    assert parse_record('{"v":1,"seq":0,"t":1,"step":0,"metrics":{"bad key":1}}') is None
    assert parse_record('{"v":1,"seq":0,"t":1,"step":0,"metrics":{"a":"0.5"}}') is None
    assert parse_record('{"v":1,"seq":0,"t":1,"define":{"a":"best"}}') is None
    assert marked_payload("text " + MARK + "{}") is None, "the mark starts a line (or follows a \\r)"
    ok = parse_record('{"v":1,"seq":0,"t":1,"step":0,"metrics":{"a":"-Infinity","b":true}}')
    assert ok is not None and ok.metrics == {"a": -math.inf, "b": 1.0} and ok.writer == ""


def test_summarize_keeps_the_step_of_last_min_and_max_and_skips_nan() -> None:
    records = [
        MetricRecord("w", 0, 1.0, define={"loss": "min"}),
        MetricRecord("w", 1, 1.0, 0, {"loss": 3.0}),
        MetricRecord("w", 2, 1.0, 1, {"loss": math.nan}),
        MetricRecord("w", 3, 1.0, 2, {"loss": 1.0}),
        MetricRecord("w", 4, 1.0, 3, {"loss": 2.0}),
    ]
    loss = summarize(records)["loss"]
    assert (loss["count"], loss["last"], loss["last_step"]) == (4, 2.0, 3)
    assert (loss["min"], loss["min_step"], loss["max"], loss["max_step"], loss["goal"]) == (1.0, 2, 3.0, 0, "min")


def test_a_mark_after_a_log_forwarders_prefix_is_found() -> None:
    """Ray prints each worker line of a ``torchx:ray`` replica after a coloured ``(Actor pid=N)``."""
    body = '{"v":1,"w":"w","seq":0,"t":1.0,"step":0,"metrics":{"loss":1.0}}'
    for prefix in ("", "\x1b[36m(CommandActor pid=8272)\x1b[0m ", "(pid=12, ip=10.0.0.2) ", "(raylet) x\r"):
        line = f"{prefix}@@jupyter_sched:metrics {body}\n"
        assert marked_payload(line) == body, prefix
        assert tracker_payload(f"{prefix}@@jupyter_sched:tracker {{}}\n") == "{}", prefix
    for other in ("x (pid=12) @@jupyter_sched:metrics {}", "(pid=x) @@jupyter_sched:metrics {}",
                  "(CommandActor pid=1)@@jupyter_sched:metrics {}", "(a b pid=1) @@jupyter_sched:metrics {}"):
        assert marked_payload(other) is None, other  # only a forwarder's prefix, at the start


@given(st.text(max_size=60))
def test_any_prefix_is_a_payload_or_none_never_an_exception(prefix: str) -> None:
    marked_payload(prefix + "@@jupyter_sched:metrics {}")
    tracker_payload(prefix + "@@jupyter_sched:tracker {}")
