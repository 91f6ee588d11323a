"""A sweep's runs as data: one row per run (parameters, state, times, peak memory, result fields, why it was
stopped early, error).

The sweep's table (its live view and its record), :func:`to_dataframe` and :func:`best` read runs the
same way, so what the table shows is what the DataFrame holds. A run's returned dict is flattened into
fields (``{"loss": 1, "metrics": {"acc": 0.9}}`` gives ``loss`` and ``metrics.acc``); any other value is
one ``result`` field. A field named like a parameter or a fixed column is ``result.NAME``.

pandas is optional: it is imported by :func:`to_dataframe` alone, and its absence is an ImportError that
says how to install it. Nothing here imports IPython.

A run is anything with the attributes of :class:`jupyter_sched.functions.sweeps.sweep.Run` (``index``,
``params``, ``state``, ``outcome``, ``error``, ``launched``, ``started``, ``ended``, ``status``, ``handle``).
"""

from __future__ import annotations

import importlib
import math
import time
from datetime import datetime
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

SCALARS = (int, float, str, bool)
RESULT_CHARS = 60
"""Characters of a plain (non-dict) result's repr in the table."""
AFTER = ("state", "submitted", "started", "ended", "elapsed_s", "peak_memory_bytes", "cpu_seconds", "stopped",
         "error", "handle")  # fmt: skip
"""The DataFrame's own columns after the results, in order: what a reader compares runs by (the parameters,
then the results and metrics) comes first, on screen; how each run went follows; the long handle last."""
FIXED = ("run", *AFTER)
"""The DataFrame's own columns (besides the parameters and the result fields)."""


def flatten(value: Any, prefix: str = "") -> Dict[str, Any]:
    """A dict with string keys as ``{dotted key: value}``, nested dicts included; else ``{}``."""
    out: Dict[str, Any] = {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return out
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item and all(isinstance(k, str) for k in item):
            out.update(flatten(item, name + "."))
        else:
            out[name] = item
    return out


def returned(run: Any) -> bool:
    return run.outcome is not None and bool(run.outcome.ok)


def result_fields(run: Any) -> Optional[Dict[str, Any]]:
    """The run's returned dict, flattened; None if it returned something else (or nothing)."""
    if not returned(run):
        return None
    value = run.outcome.value
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return flatten(value)
    return None


def param_label(params: Dict[str, Any], limit: int = 40) -> str:
    """``lr=1.0, epochs=4``: how a run is named in errors and menus (values as Python writes them)."""
    parts = []
    for key, value in params.items():
        text = repr(value)
        parts.append(f"{key}={text if len(text) <= limit else text[: limit - 1] + '…'}")
    return ", ".join(parts)


def format_value(value: Any) -> str:
    """A cell's text: floats keep their decimal point (``1.0``, not ``1``) with 6 significant digits."""
    if value is None:
        return ""
    if isinstance(value, float) and not isinstance(value, bool):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        text = f"{value:.6g}"
        return text if any(c in text for c in ".en") else text + ".0"
    return str(value)


def sort_key(value: Any) -> Tuple[int, Any]:
    """Numbers before text; booleans as numbers."""
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value))


def sort_rows(rows: List[List[Any]], column: int, descending: bool = False) -> List[List[Any]]:
    """``rows`` ordered by ``column``; rows without a value there (None, NaN) come last either way."""
    def empty(v: Any) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    present = [r for r in rows if not empty(r[column])]
    present.sort(key=lambda r: sort_key(r[column]), reverse=descending)
    return present + [r for r in rows if empty(r[column])]


Columns = Tuple[List[str], List[str], bool, bool, bool]


def stopped(run: Any) -> Optional[str]:
    """Why early stopping stopped the run (the rule's reason), or None."""
    return getattr(run, "stopped", None) or None


def table_columns(runs: Sequence[Any]) -> Columns:
    """The sweep table's ``(parameter names, result fields, has a plain result column, has an error
    column, has a stopped column)``: a result field is a scalar (number, string, boolean) of a returned
    dict, flattened; the ``stopped`` column (why early stopping stopped a run) is there once a run was."""
    params: Dict[str, None] = {}
    keys: Dict[str, None] = {}
    plain = errors = stops = False
    for run in runs:
        params.update(dict.fromkeys(run.params))
        stops = stops or stopped(run) is not None
        if run.error:
            errors = True
        fields = result_fields(run)
        if fields is not None:
            keys.update(dict.fromkeys(k for k, v in fields.items() if isinstance(v, SCALARS) or v is None))
        elif returned(run):
            plain = True
    return list(params), list(keys), plain, errors, stops


def table_headers(params: List[str], keys: List[str], plain: bool, errors: bool, stops: bool = False) -> List[str]:
    """Column names; a result field named like a parameter (or a fixed column) is ``key (result)``."""
    taken = {"#", "state", "elapsed", "stopped", *params}
    shown = [f"{k} (result)" if k in taken else k for k in keys]
    return ["#", *params, "state", "elapsed", *shown, *(["result"] if plain else []),
            *(["stopped"] if stops else []), *(["error"] if errors else [])]  # fmt: skip


def table_cells(run: Any, params: List[str], keys: List[str], plain: bool, errors: bool, now: float,
                stops: bool = False) -> List[Any]:  # fmt: skip
    """A run's row of raw (sortable) values: index, params, state, elapsed seconds, results, why it was
    stopped early, error."""
    fields = result_fields(run) or {}
    row: List[Any] = [run.index, *(run.params.get(p) for p in params), run.state, elapsed(run, now)]
    row += [fields.get(k) for k in keys]
    if plain:
        text = repr(run.outcome.value) if returned(run) and result_fields(run) is None else None
        row.append(None if text is None else text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…")
    if stops:
        row.append(stopped(run))
    if errors:
        row.append(run.error or None)
    return row


def table_rows(runs: Sequence[Any], sort: str = "#", descending: bool = False) -> Tuple[List[str], List[List[Any]]]:
    """The sweep table: column names and one row per run, ordered by column ``sort`` (grid order if
    there is no such column yet)."""
    params, keys, plain, errors, stops = table_columns(runs)
    names = table_headers(params, keys, plain, errors, stops)
    now = time.time()
    data = [table_cells(run, params, keys, plain, errors, now, stops) for run in runs]
    if sort in names:
        data = sort_rows(data, names.index(sort), descending)
    return names, data


def column_names(runs: Sequence[Any]) -> List[str]:
    return table_headers(*table_columns(runs))


def elapsed(run: Any, now: Optional[float] = None) -> Optional[float]:
    """Seconds from its start (or launch) to its end, or to now while it runs; None before launch."""
    start = run.started or run.launched
    if start is None:
        return None
    return (run.ended or (time.time() if now is None else now)) - start


def usage_totals(run: Any) -> Tuple[Optional[int], Optional[float]]:
    """``(peak memory in bytes, CPU seconds)`` of the run's replicas as the backend kept them at the
    end (the highest peak, the sum of CPU); None where it knows none."""
    status = getattr(run, "status", None)
    totals = [r.usage for role in (status.roles if status is not None else []) for r in role.replicas if r.usage]
    if not totals:
        return None, None
    return max(t.peak_rss_bytes for t in totals), sum(t.cpu_seconds for t in totals)


def _when(ts: Optional[float]) -> Optional[datetime]:
    """A local time to the second: a run's times are read against each other and the clock, where
    microseconds are noise (``elapsed_s`` keeps the precise duration)."""
    return None if ts is None else datetime.fromtimestamp(ts).replace(microsecond=0)


def records(runs: Sequence[Any], metrics: Optional[Dict[int, Dict[str, Any]]] = None) -> List[Dict[str, Any]]:
    """One dict per run, in order: ``run``, the parameters, the result's fields (or ``result``),
    ``metrics``' cells of the run (``{run index: {"metrics.<key>": value}}``; a result field of the same name
    is then ``result.<name>``), ``output_path`` (a notebook's run: its output notebook), then :data:`AFTER`:
    ``state``, ``submitted``, ``started``, ``ended`` (local datetimes, to the second), ``elapsed_s``,
    ``peak_memory_bytes``, ``cpu_seconds``, ``stopped`` (why early stopping stopped it, or None), ``error``
    and ``handle``."""
    params: Dict[str, None] = {}
    for run in runs:
        params.update(dict.fromkeys(run.params))
    taken = set(FIXED) | set(params)
    for cells in (metrics or {}).values():
        taken.update(cells)
    now = time.time()
    out = []
    for run in runs:
        peak, cpu = usage_totals(run)
        row: Dict[str, Any] = {"run": run.index}
        row.update({p: run.params.get(p) for p in params})
        fields = result_fields(run)
        if fields is not None:
            row.update({(f"result.{k}" if k in taken else k): v for k, v in fields.items()})
        elif returned(run):
            row["result"] = run.outcome.value
        row.update((metrics or {}).get(run.index, {}))
        output = getattr(getattr(run, "job", None), "output_path", None)
        if output:  # a notebook's run: its executed notebook
            row["output_path"] = output
        row.update({
            "state": run.state, "submitted": _when(run.launched), "started": _when(run.started),
            "ended": _when(run.ended), "elapsed_s": elapsed(run, now), "peak_memory_bytes": peak, "cpu_seconds": cpu,
            "stopped": stopped(run), "error": run.error or None, "handle": run.handle or None,
        })  # fmt: skip
        out.append(row)
    return out


def to_dataframe(runs: Sequence[Any], metrics: Optional[Dict[int, Dict[str, Any]]] = None) -> Any:
    """:func:`records` as a pandas DataFrame indexed by ``run``: the parameters, then the results and metrics
    (in the order of first appearance), then :data:`AFTER` (state, times, usage, stopped, error, handle), so
    a wide frame shows what runs are compared by first. Raises ImportError saying how to install pandas if it
    is missing."""
    try:
        pd = importlib.import_module("pandas")  # optional: only this function needs it
    except ImportError as e:
        raise ImportError(
            "sweep.to_dataframe() needs pandas, which is not installed in this environment: pip install pandas"
            " (or use sweep.records(), the same rows as dicts)"
        ) from e
    rows = records(runs, metrics)
    columns: Dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(k for k in row if k not in AFTER))
    columns.update(dict.fromkeys(AFTER))
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.set_index("run")


class Best(NamedTuple):
    """The best run by a result field and that field's value."""

    run: Any
    value: Any

    def __repr__(self) -> str:
        return f"Best(run {self.run.index}: {param_label(self.run.params)}, value={format_value(self.value)})"


def best(runs: Sequence[Any], key: Union[str, Callable[[Any], Any]], mode: str = "min") -> Best:
    """The run whose result has the lowest (``mode="min"``) or highest (``"max"``) ``key``: a result field
    (``"loss"``, ``"metrics.acc"``; ``"result"`` for a plain value) or a function of the returned value.
    Runs without a value for it (failed, still running, NaN) are left out; earlier runs win ties."""
    if mode not in ("min", "max"):
        raise ValueError(f'mode={mode!r}: give mode="min" (the lowest {key!r} wins) or mode="max"')
    scored: List[Tuple[Any, Any]] = []
    seen: Dict[str, None] = {}
    for run in runs:
        if not returned(run):
            continue
        value = _score(run, key, seen)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        scored.append((run, value))
    if not scored:
        if callable(key):
            raise ValueError(f"no run has a value for {getattr(key, '__name__', key)!r} yet")
        fields = ", ".join(repr(k) for k in seen) or "none (no run has returned yet)"
        raise ValueError(f"no run has a result field {key!r}; the fields are: {fields}")
    try:
        pick = min if mode == "min" else max
        found = pick(scored, key=lambda pair: pair[1])
    except TypeError as e:
        raise TypeError(f"the values of {key!r} cannot be compared ({e})") from None
    return Best(found[0], found[1])


def has_field(runs: Sequence[Any], key: str) -> bool:
    """Whether a run returned a value for result field ``key`` (``"result"``: a plain value)."""
    for run in runs:
        fields = result_fields(run)
        if (fields is not None and key in fields) or (fields is None and returned(run) and key == "result"):
            return True
    return False


def _score(run: Any, key: Union[str, Callable[[Any], Any]], seen: Dict[str, None]) -> Any:
    value = run.outcome.value
    if callable(key):
        return key(value)
    fields = result_fields(run)
    if fields is None:
        seen["result"] = None
        return value if key == "result" else None
    seen.update(dict.fromkeys(fields))
    return fields.get(key)
