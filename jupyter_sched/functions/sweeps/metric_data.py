"""A sweep's metrics as data: what its runs logged with ``jupyter_sched.track``, read back per run.

* :func:`summary_columns` -- ``sweep.to_dataframe(metrics="last"|"min"|"max"|"best")``: one ``metrics.<key>``
  column per key, from each run's rank 0 summary (the first role's replica 0, as the charts show by default).
* :func:`long_frame` -- ``sweep.metrics(key)``: every run's records in long form (``run, step, t, key, value,
  role, replica``), all replicas.
* :func:`best` -- ``sweep.best(metric="loss", mode="min", scope=...)``: the run whose rank 0 values score best,
  with Ray Tune's scopes (``ExperimentAnalysis.get_best_trial``): ``"last"`` the last value logged, ``"all"``
  the best value of all steps (by ``mode``), ``"avg"`` the mean of all values, ``"last-5-avg"`` (any
  ``last-N-avg``; Ray offers 5 and 10) the mean of the last N. NaN values are skipped before scoring, so a
  run that logged NaN at the end is scored on its values before it; a run with none left is left out.

Each call reads the files again (the directory comes from the run's scheduler, ``Runner.metrics_dir``), so
it shows what was written by now, during the sweep or after it. pandas is imported by the DataFrame calls
alone. A run is anything with :class:`jupyter_sched.functions.sweeps.sweep.Run`'s ``index``, ``handle`` and
``job`` (with ``runner`` and ``role``).
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from jupyter_sched.frontend.jobs.metrics import (
    LONG_COLUMNS,
    Replica,
    pandas,
    read_all,
    read_records,
    read_summary,
    replicas,
)
from jupyter_sched.frontend.jobs.metrics import long_frame as job_long_frame
from jupyter_sched.functions.sweeps.table import Best
from jupyter_sched.track.values import decode_number

HOWS = ("last", "min", "max", "best")
"""What ``to_dataframe(metrics=...)`` puts in a run's ``metrics.<key>`` cell."""
SCOPES = ("last", "all", "avg", "last-5-avg", "last-10-avg")
"""Ray Tune's scopes; any ``last-N-avg`` is accepted too."""
LAST_N = re.compile(r"last-([1-9][0-9]*)-avg")
PREFIX = "metrics."


def check_how(how: Any) -> str:
    if how not in HOWS:
        raise ValueError(f"to_dataframe(metrics={how!r}): give metrics=\"last\", \"min\", \"max\", \"best\" (each"
                         " key's min or max by the goal track.define_metric gave it, else its last value) or None"
                         " (no metric columns)")  # fmt: skip
    return str(how)


def check_scope(scope: Any) -> str:
    if not isinstance(scope, str) or (scope not in SCOPES and LAST_N.fullmatch(scope) is None):
        raise ValueError(f"best(scope={scope!r}): give scope=\"last\" (the last value logged), \"all\" (the best"
                         " of every step), \"avg\" (the mean of all values) or \"last-5-avg\" (the mean of the last"
                         " 5; any last-N-avg)")  # fmt: skip
    return scope


def metrics_dir(run: Any) -> Optional[str]:
    """The run's metrics directory (None: never launched, or its scheduler keeps none)."""
    job = getattr(run, "job", None)
    if job is None:
        return None
    try:
        found = job.runner.metrics_dir(run.handle)
    except Exception:  # noqa: BLE001 - an app the scheduler forgot: no metrics, not an error
        return None
    return str(found) if found else None


def rank0(run: Any, directory: Optional[str]) -> Optional[Replica]:
    """The run's rank 0 among the replicas with records in ``directory``: its role's replica 0, else the first
    replica 0, else the first (None: no records). Only the directory is listed; no file is read."""
    found = replicas(directory)
    role = getattr(getattr(run, "job", None), "role", None)
    if (role, 0) in found:
        return (str(role), 0)
    zeros = [r for r in found if r[1] == 0]
    return (zeros or found)[0] if found else None


def rank0_summary(run: Any) -> Dict[str, Any]:
    """The per-key stats of the run's rank 0: its summary file, else made from its records (a replica that
    ended before its first summary was written)."""
    directory = metrics_dir(run)
    which = rank0(run, directory)
    if directory is None or which is None:
        return {}
    stored = read_summary(directory, *which)
    if stored is not None and isinstance(stored.get("metrics"), dict):
        return dict(stored["metrics"])
    return next((dict(r.summary) for r in read_all(directory) if (r.role, r.replica) == which), {})


def as_float(x: Any) -> Optional[float]:
    """A summary value (a number, or the string of a non-finite one) as a float, else None."""
    return None if x is None else decode_number(x)


def summary_columns(runs: Sequence[Any], how: str) -> Dict[int, Dict[str, Optional[float]]]:
    """``{run index: {"metrics.<key>": value}}`` from each run's rank 0 summary: its last, min or max value,
    or (``"best"``) its min or max by the key's goal, its last where no goal was defined."""
    how = check_how(how)
    out: Dict[int, Dict[str, Optional[float]]] = {}
    for run in runs:
        summary = rank0_summary(run)
        if not summary:
            continue
        cells: Dict[str, Optional[float]] = {}
        for key in sorted(summary):
            stats = summary[key]
            if not isinstance(stats, dict):
                continue
            goal = stats.get("goal")
            field = how if how != "best" else str(goal) if goal in ("min", "max") else "last"
            cells[PREFIX + key] = as_float(stats.get(field))
        out[run.index] = cells
    return out


def long_frame(runs: Sequence[Any], keys: Union[None, str, Sequence[str]] = None) -> Any:
    """Every run's records as one long DataFrame: ``run`` then ``step, t`` (UTC) ``, key, value, role,
    replica``, all replicas, in run order (``keys``: a key or a list of them, only those)."""
    pd = pandas()
    wanted = [keys] if isinstance(keys, str) else None if keys is None else list(keys)
    frames = []
    for run in runs:
        frame = job_long_frame(read_all(metrics_dir(run)))
        if wanted is not None:
            frame = frame[frame["key"].isin(wanted)]
        if not frame.empty:
            frame.insert(0, "run", run.index)
            frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["run", *LONG_COLUMNS])
    return pd.concat(frames, ignore_index=True)


def values(run: Any, metric: str) -> List[float]:
    """The values of ``metric`` the run's rank 0 logged, in the order logged, NaN left out."""
    directory = metrics_dir(run)
    which = rank0(run, directory)
    if directory is None or which is None:
        return []
    chunk = read_records(directory, *which)
    found = [r.metrics[metric] for r in chunk.records if metric in r.metrics]
    return [v for v in found if not math.isnan(v)]


def score(found: List[float], mode: str, scope: str) -> Optional[float]:
    """``found`` (NaN already left out) scored by ``scope``; None if there is nothing to score."""
    if not found:
        return None
    if scope == "last":
        return found[-1]
    if scope == "all":
        return min(found) if mode == "min" else max(found)
    if scope == "avg":
        return sum(found) / len(found)
    match = LAST_N.fullmatch(scope)
    assert match is not None
    tail = found[-int(match.group(1)) :]
    return sum(tail) / len(tail)


def scores(runs: Sequence[Any], metric: str, mode: str, scope: str) -> List[Tuple[Any, float]]:
    """``(run, score)`` of every run that logged a value of ``metric`` (running, stopped and failed ones too)."""
    scope = check_scope(scope)
    out = []
    for run in runs:
        value = score(values(run, metric), mode, scope)
        if value is not None:
            out.append((run, value))
    return out


def logged_keys(runs: Sequence[Any]) -> List[str]:
    """The keys any run's rank 0 logged (for an error that lists them)."""
    keys: Dict[str, None] = {}
    for run in runs:
        keys.update(dict.fromkeys(sorted(rank0_summary(run))))
    return list(keys)


def best(runs: Sequence[Any], metric: str, mode: str = "min", scope: str = "last") -> Best:
    """The run whose rank 0 ``metric`` scores lowest (``mode="min"``) or highest (``"max"``) by ``scope``;
    earlier runs win ties. A ValueError lists the logged keys when no run logged ``metric``."""
    if mode not in ("min", "max"):
        raise ValueError(f'best(mode={mode!r}): give mode="min" (the lowest {metric!r} wins) or mode="max"')
    scored = scores(runs, metric, mode, scope)
    if not scored:
        keys = ", ".join(repr(k) for k in logged_keys(runs)) or "none (no run has logged with jupyter_sched.track)"
        raise ValueError(f"no run has logged a value of {metric!r}; the logged keys are: {keys}")
    pick = min if mode == "min" else max
    found = pick(scored, key=lambda pair: pair[1])
    return Best(found[0], found[1])
