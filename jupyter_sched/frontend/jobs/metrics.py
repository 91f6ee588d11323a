"""Reading a job's metrics back: what ``jupyter_sched.track`` wrote in the app's metrics directory.

The reader is pure but for reading files: records of a replica from a cursor (a byte offset; only complete
lines are consumed, so a line being written is read next time), torn or corrupt lines skipped and counted
(never an exception), and the summary each replica rewrote atomically. :class:`JobMetrics` is
``job.metrics``: ``job.metrics()`` a pandas DataFrame in long form (``step, t, key, value, role,
replica``), ``job.metrics(wide=True)`` one column per key, ``job.metrics.summary`` one row per replica and
key (``count, last, last_step, min, min_step, max, max_step, goal``). pandas is imported only by those
calls. It works while the job runs, after it ended and from another process given the handle (the
directory comes from the scheduler: ``Runner.metrics_dir``).

Records that came as marked stderr lines are in the same files: the log followers store them there
(``frontend.logview.metric_lines``); a TorchX backend's app has its directory on this machine for them.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, TypeVar, Union

from jupyter_sched.frontend.jobs.rows import MAX_ROW_METRICS, MetricLast
from jupyter_sched.logs.metric_lines import (
    KEY_RE,
    NON_FINITE,
    MetricRecord,
    encode_number,
    format_record,
    parse_record,
    summarize,
)
from jupyter_sched.track.layout import RECORDS_SUFFIX, SUMMARY_SUFFIX, TRACKER_SUFFIX, parse_stem, replica_stem


class HasHandle(Protocol):
    """What :class:`JobMetrics` needs of a Job (the Job imports this module, so not the class itself)."""

    handle: str
    runner: Any


Replica = Tuple[str, int]
T = TypeVar("T")
MAX_READ = 64 * 1024 * 1024
"""Bytes read from one file per call: a cursor resumes where a big file's read stopped."""


@dataclass
class Chunk:
    """Records read from one replica's file: ``cursor`` is where the next read starts, ``skipped`` counts
    lines that were not valid records (torn, corrupt, or of a newer version)."""

    records: List[MetricRecord] = field(default_factory=list)
    cursor: int = 0
    skipped: int = 0


def replicas(metrics_dir: Optional[str]) -> List[Replica]:
    """The (role, replica) pairs with a metrics file in ``metrics_dir``, in order."""
    if not metrics_dir:
        return []
    try:
        names = os.listdir(metrics_dir)
    except OSError:
        return []
    out = []
    for name in names:
        if name.endswith(RECORDS_SUFFIX) and not name.endswith(TRACKER_SUFFIX):
            parsed = parse_stem(name[: -len(RECORDS_SUFFIX)])
            if parsed is not None:
                out.append(parsed)
    return sorted(out)


def read_records(metrics_dir: str, role: str, replica: int, cursor: int = 0) -> Chunk:
    """The records of ``role``/``replica`` from byte ``cursor`` on (only lines ending in a newline)."""
    path = os.path.join(metrics_dir, replica_stem(role, replica) + RECORDS_SUFFIX)
    try:
        with open(path, "rb") as f:
            f.seek(cursor)
            data = f.read(MAX_READ)
    except OSError:
        return Chunk(cursor=cursor)
    end = data.rfind(b"\n") + 1
    chunk = Chunk(cursor=cursor + end)
    for raw in data[:end].split(b"\n"):
        if not raw.strip():
            continue
        try:
            record = parse_record(raw.decode("utf-8"))
        except UnicodeDecodeError:
            record = None
        if record is None:
            chunk.skipped += 1
        else:
            chunk.records.append(record)
    return chunk


def read_summary(metrics_dir: str, role: str, replica: int) -> Optional[Dict[str, Any]]:
    """The replica's summary file (strict JSON; non-finite values as strings), or None if absent/unreadable."""
    path = os.path.join(metrics_dir, replica_stem(role, replica) + SUMMARY_SUFFIX)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.loads(f.read(), parse_constant=lambda name: None)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class ReplicaMetrics:
    role: str
    replica: int
    records: List[MetricRecord]
    skipped: int
    summary: Dict[str, Dict[str, Any]]
    """Per key: count, last, min, max and their steps, goal (from the summary file, else from the records)."""
    values: Dict[str, Any]
    """What the replica set in ``track.summary``."""


def read_all(metrics_dir: Optional[str]) -> List[ReplicaMetrics]:
    """Every replica's records and summary in ``metrics_dir`` (an absent directory: none)."""
    out = []
    for role, k in replicas(metrics_dir):
        assert metrics_dir is not None
        chunk = read_records(metrics_dir, role, k)
        stored = read_summary(metrics_dir, role, k)
        if stored is not None and isinstance(stored.get("metrics"), dict):
            summary, values = stored["metrics"], dict(stored.get("summary") or {})
        else:
            summary, values = summarize(chunk.records), {}
            for r in chunk.records:
                values.update(r.summary)
        out.append(ReplicaMetrics(role, k, chunk.records, chunk.skipped, summary, values))
    return out


def pandas() -> Any:
    """pandas, imported by the DataFrame calls alone (an optional dependency)."""
    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise ImportError("job.metrics() returns a pandas DataFrame: pip install pandas") from None


LONG_COLUMNS = ["step", "t", "key", "value", "role", "replica"]
SUMMARY_COLUMNS = ["role", "replica", "key", "count", "last", "last_step", "min", "min_step", "max", "max_step",
                   "goal"]  # fmt: skip


def long_frame(data: List[ReplicaMetrics]) -> Any:
    pd = pandas()

    rows = [
        (r.step, r.t, key, value, rep.role, rep.replica)
        for rep in data
        for r in rep.records
        for key, value in r.metrics.items()
    ]
    frame = pd.DataFrame(rows, columns=LONG_COLUMNS)
    frame["t"] = pd.to_datetime(frame["t"], unit="s", utc=True)
    return frame


def wide_frame(data: List[ReplicaMetrics]) -> Any:
    """One row per role, replica and step; one column per key (the last value logged at that step)."""
    long = long_frame(data)
    index = ["role", "replica", "step"]
    if long.empty:
        return long.drop(columns=["key", "value"])
    values = long.pivot_table(index=index, columns="key", values="value", aggfunc="last", dropna=False)
    times = long.groupby(index)["t"].max()
    wide = values.join(times).reset_index()
    wide.columns.name = None
    return wide[index + ["t"] + [c for c in values.columns]]


def summary_frame(data: List[ReplicaMetrics]) -> Any:
    pd = pandas()

    def num(x: Any) -> Any:
        return float(x) if x in ("NaN", "Infinity", "-Infinity") else x

    rows = [
        [rep.role, rep.replica, key] + [num(stats.get(c)) for c in SUMMARY_COLUMNS[3:]]
        for rep in data
        for key, stats in rep.summary.items()
        if isinstance(stats, dict)
    ]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


class JobMetrics:
    """``job.metrics``: call it for the records as a DataFrame, read ``.summary`` for the summaries.

    ``job.metrics()`` -> long form, one row per value: ``step, t`` (UTC), ``key, value, role, replica``;
    ``job.metrics(wide=True)`` -> one row per role, replica and step, one column per key;
    ``job.metrics.summary`` -> one row per role, replica and key; ``job.metrics.values`` -> what each
    replica set in ``track.summary``; ``job.metrics.skipped`` -> lines that were not valid records.
    Each reads the files again (nothing is cached), so it shows what was written by now."""

    def __init__(self, job: HasHandle) -> None:
        self.job = job

    @property
    def directory(self) -> Optional[str]:
        """The app's metrics directory (None for a scheduler that keeps none)."""
        return self.job.runner.metrics_dir(self.job.handle)

    def read(self) -> List[ReplicaMetrics]:
        return read_all(self.directory)

    def __call__(self, wide: bool = False) -> Any:
        data = self.read()
        return wide_frame(data) if wide else long_frame(data)

    @property
    def summary(self) -> Any:
        return summary_frame(self.read())

    @property
    def values(self) -> Dict[Replica, Dict[str, Any]]:
        return {(rep.role, rep.replica): rep.values for rep in self.read()}

    @property
    def skipped(self) -> int:
        return sum(rep.skipped for rep in self.read())

    def __repr__(self) -> str:
        return f"<metrics of {self.job.handle}: call job.metrics() for a DataFrame, .summary for summaries>"


# -- downsampling a series for a chart ------------------------------------------------------------------------
MIN_POINTS = 4
"""The fewest points :func:`downsample` keeps: the first, the last and one bucket's min and max."""


def bucket_bounds(n: int, max_points: int) -> List[Tuple[int, int]]:
    """The buckets :func:`downsample` splits a series of ``n`` points into, as ``[start, end)`` index ranges of
    the points between the first and the last: ``(max_points - 2) // 2`` of them, as even as integers allow.
    None (``[]``) when the series fits as it is."""
    if n <= max_points:
        return []
    inner, count = n - 2, (max_points - 2) // 2
    return [(1 + i * inner // count, 1 + (i + 1) * inner // count) for i in range(count)]


def downsample(points: List[T], max_points: int, value: Callable[[T], float]) -> List[T]:
    """At most ``max_points`` of ``points`` (in order) for a chart: all of them if they fit, else the first,
    the last, and the smallest and the largest ``value`` of each bucket of :func:`bucket_bounds` in their
    own order, so a spike or a dip between two kept points is never smoothed away (an average would hide
    a divergence; a stride would miss it). NaN is never a bucket's min or max (as in the summaries); a
    bucket of NaNs alone keeps its first point, so a chart still shows the gap. Pure: ``value`` reads a
    point's number."""
    if max_points < MIN_POINTS:
        raise ValueError(f"max_points={max_points}: give at least {MIN_POINTS} (the first, the last, a min, a max)")
    if len(points) <= max_points:
        return list(points)
    keep = [0]
    for start, end in bucket_bounds(len(points), max_points):
        numbers = [(value(points[i]), i) for i in range(start, end)]
        numbers = [(v, i) for v, i in numbers if not math.isnan(v)]
        if not numbers:
            keep.append(start)
            continue
        low, high = min(numbers)[1], max(numbers)[1]
        keep.extend(sorted({low, high}))
    keep.append(len(points) - 1)
    return [points[i] for i in keep]


# -- the summary as a table, the records as lines: what `jupyter-sched metrics` and %sched_metrics show -------
TABLE_HEADERS = ("ROLE", "REPLICA", "KEY", "LAST", "MIN", "MAX", "COUNT", "STEP", "GOAL")
"""The columns of :func:`summary_table` (``STEP``: the step of the last value)."""
CSV_HEADERS = ("step", "t", "key", "value", "role", "replica")
"""The columns of :func:`csv_rows`: :data:`LONG_COLUMNS`, one row per value."""


def format_value(value: Any) -> str:
    """A summary number as the tables show it: an integral value as an integer, else six significant digits;
    NaN and the infinities as their strict-JSON names; nothing as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value  # "NaN", "Infinity", "-Infinity" as the summary file keeps them
    if isinstance(value, (int, float)):
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            return str(encode_number(x))
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{x:.6g}"
    return str(value)


def summary_table(data: List[ReplicaMetrics], keys: Optional[List[str]] = None) -> List[Tuple[str, ...]]:
    """One row of text cells per role, replica and key (in that order; only ``keys`` when given), under
    :data:`TABLE_HEADERS`: the last value, the min and max (NaN never one), the count, the step of the last
    value and the goal. The one source of the CLI's table and the notebook's, so they cannot disagree;
    the cells are not escaped (each renderer escapes for its medium)."""
    rows: List[Tuple[str, ...]] = []
    for rep in data:
        for key in sorted(rep.summary):
            stats = rep.summary[key]
            if not isinstance(stats, dict) or (keys is not None and key not in keys):
                continue
            count = stats.get("count")
            rows.append((
                rep.role, str(rep.replica), key, format_value(stats.get("last")), format_value(stats.get("min")),
                format_value(stats.get("max")), str(count) if isinstance(count, int) else "-",
                format_value(stats.get("last_step")), str(stats.get("goal") or "-"),
            ))  # fmt: skip
    return rows


def record_line(record: MetricRecord, role: str, replica: int, keys: Optional[List[str]] = None) -> Optional[str]:
    """``record`` as stored (one line of strict JSON: NaN as ``"NaN"``) with its ``role`` and ``replica``
    added, since the lines of several replicas are printed together. With ``keys``: only the metric records
    that hold one of them, cut to those; None for a record left out."""
    if keys is not None:
        if not record.metrics:
            return None
        kept = {k: v for k, v in record.metrics.items() if k in keys}
        if not kept:
            return None
        record = MetricRecord(record.writer, record.seq, record.t, record.step, metrics=kept)
    obj = json.loads(format_record(record))
    obj["role"], obj["replica"] = role, replica
    return json.dumps(obj, allow_nan=False, separators=(",", ":"))


def csv_rows(record: MetricRecord, role: str, replica: int, keys: Optional[List[str]] = None) -> List[List[str]]:
    """The long form's rows of ``record`` (one per value, under :data:`CSV_HEADERS`; ``keys``: only those):
    ``t`` in seconds since the epoch, NaN and the infinities by their strict-JSON names."""
    return [
        ["" if record.step is None else str(record.step), repr(record.t), key, str(encode_number(value)), role,
         str(replica)]
        for key, value in record.metrics.items()
        if keys is None or key in keys
    ]  # fmt: skip


# -- a row's last values, and a replica's series for the server ------------------------------------------------
def last_values(summary: Optional[Dict[str, Any]], limit: int) -> Optional[List[MetricLast]]:
    """A summary file's metrics as a row's last values: those with a goal first, then the others, each group
    alphabetical, at most ``limit``; None when it holds none. Values stay as the file has them (numbers or
    the strings of the non-finite ones); a key outside the key rule (a hand-made file) is left out."""
    stats = (summary or {}).get("metrics")
    if not isinstance(stats, dict):
        return None
    good = {k: s for k, s in stats.items() if isinstance(s, dict) and KEY_RE.fullmatch(str(k))}
    order = sorted(good, key=lambda k: (good[k].get("goal") not in ("min", "max"), k))[:limit]
    out = []
    for key in order:
        s = good[key]
        goal = s.get("goal") if s.get("goal") in ("min", "max") else None
        step = s.get("last_step")
        out.append(MetricLast(key=key, last=_json_number(s.get("last")), step=step if isinstance(step, int) else None,
                              best=_json_number(s.get(goal)) if goal else None, goal=goal))  # fmt: skip
    return out or None


def main_metric_text(metrics: Optional[List[MetricLast]]) -> str:
    """A row's main metric as the lists show it (``%sched_list``, ``jupyter-sched list``): ``loss 0.31``, the
    last value of the first of the row's ``metrics`` (a key with a goal comes first), four significant
    digits; "" when the row has none."""
    if not metrics:
        return ""
    first = metrics[0]
    last = first.last
    if isinstance(last, (int, float)) and not isinstance(last, bool):
        text = "0" if last == 0 else f"{float(last):.4g}"
    else:
        text = "-" if last is None else str(last)  # "NaN", "Infinity", "-Infinity" as strict JSON names them
    return f"{first.key} {text}"


def _json_number(x: Any) -> Union[float, str, None]:
    """A value of a summary file as strict JSON carries it: a number, one of the non-finite strings, or None."""
    if isinstance(x, bool) or x is None:
        return None if x is None else float(x)
    if isinstance(x, (int, float)):
        return encode_number(float(x))
    return x if x in NON_FINITE else None


class LastValues:
    """The rows' last values, read from the first role's replica 0 summary file and kept by the file's
    mtime and size, so a listing of 1,000 apps stats 1,000 files and reads only those that changed (never a
    records file). Each app's metrics directory is asked of its runner once (it does not move). Bounded:
    the least recently used entries go first. Thread-safe."""

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._dirs: "OrderedDict[str, str]" = OrderedDict()
        self._files: "OrderedDict[str, Tuple[Tuple[int, int], Optional[List[MetricLast]]]]" = OrderedDict()
        self.reads = 0
        """Summary files read (not served from the cache): what the tests count."""

    def directory(self, runner: Any, handle: str) -> Optional[str]:
        with self._lock:
            found = self._dirs.get(handle)
        if found is not None:
            return found
        try:
            found = runner.metrics_dir(handle)
        except Exception:  # noqa: BLE001 - a row without metrics beats no row
            return None
        if found:
            with self._lock:
                self._dirs[handle] = found
                while len(self._dirs) > self.limit:
                    self._dirs.popitem(last=False)
        return found

    def of(self, runner: Any, handle: str, first_role: Optional[str]) -> Optional[List[MetricLast]]:
        """The last values of ``handle``'s ``first_role`` replica 0 (None: no role known yet, no metrics
        directory, no summary)."""
        if first_role is None:
            return None
        directory = self.directory(runner, handle)
        if not directory:
            return None
        path = os.path.join(directory, replica_stem(first_role, 0) + SUMMARY_SUFFIX)
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        with self._lock:
            kept = self._files.get(path)
            if kept is not None and kept[0] == key:
                self._files.move_to_end(path)
                return list(kept[1]) if kept[1] else None
        values = last_values(read_summary(directory, first_role, 0), MAX_ROW_METRICS)
        with self._lock:
            self.reads += 1
            self._files[path] = (key, values)
            while len(self._files) > self.limit:
                self._files.popitem(last=False)
        return list(values) if values else None


@dataclass
class Series:
    """New records of one replica as chart series: per key ``{step, t, value}`` points (values as strict JSON
    carries them), each downsampled to at most ``max_points``; ``cursor`` is the byte offset the next read
    starts at; ``skipped`` counts the lines read now that were not records."""

    series: Dict[str, List[Dict[str, Any]]]
    cursor: int
    skipped: int
    points: int
    """Points read before downsampling."""


def read_series(metrics_dir: Optional[str], role: str, replica: int, cursor: int = 0,
                keys: Optional[List[str]] = None, max_points: int = 1000) -> Series:  # fmt: skip
    """``role``/``replica``'s records from byte ``cursor`` on as series per key (``keys``: only those, each
    present even when empty), each cut to ``max_points`` by :func:`downsample`."""
    chunk = read_records(metrics_dir, role, replica, cursor) if metrics_dir else Chunk(cursor=cursor)
    raw: Dict[str, List[Tuple[Optional[int], float, float]]] = {k: [] for k in keys or []}
    for record in chunk.records:
        for key, value in record.metrics.items():
            if keys is None or key in raw:
                raw.setdefault(key, []).append((record.step, record.t, value))
    points = sum(len(v) for v in raw.values())
    series = {
        key: [{"step": s, "t": t, "value": encode_number(v)} for s, t, v in downsample(pts, max_points, _value)]
        for key, pts in sorted(raw.items())
    }
    return Series(series=series, cursor=chunk.cursor, skipped=chunk.skipped, points=points)


def _value(point: Tuple[Optional[int], float, float]) -> float:
    return point[2]


STATS_FIELDS = ("count", "last", "last_step", "min", "min_step", "max", "max_step", "goal")


def stats_json(summary: Optional[Dict[str, Any]], keys: Optional[List[str]] = None) -> Dict[str, Dict[str, Any]]:
    """A summary file's per-key stats (``keys``: only those) with exactly :data:`STATS_FIELDS`, values as
    strict JSON carries them; anything a hand-made file got wrong is None, a bad key left out."""
    stats = (summary or {}).get("metrics")
    out: Dict[str, Dict[str, Any]] = {}
    for key, s in sorted(stats.items()) if isinstance(stats, dict) else []:
        if not isinstance(s, dict) or not KEY_RE.fullmatch(str(key)) or (keys is not None and key not in keys):
            continue
        count, goal = s.get("count"), s.get("goal")
        item: Dict[str, Any] = {"count": count if isinstance(count, int) and not isinstance(count, bool) else 0}
        for name in ("last", "min", "max"):
            step = s.get(f"{name}_step")
            item[name] = _json_number(s.get(name))
            item[f"{name}_step"] = step if isinstance(step, int) and not isinstance(step, bool) else None
        item["goal"] = goal if goal in ("min", "max") else None
        out[key] = {f: item[f] for f in STATS_FIELDS}
    return out
