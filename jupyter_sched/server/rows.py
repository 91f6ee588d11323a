"""The jobs list as the server sends it: one row per app, sweeps grouped, ordered, filtered and paged.

Pure functions over plain dicts (no I/O), so the order and the bounds are unit-tested without a server:

- a **row** is one app: handle, name, scheduler, session, state, started, ended, sweep, notebook, why it
  ended (``reason``), its replica counts and usage;
- an **entry** is what the sidebar shows as one line: a job row, or a sweep (apps named
  ``<sweep>-NNN``, see :mod:`jupyter_sched.frontend.jobs.sweep_names`) with its counts and its first runs;
- the order is running first, then newest first (by start, else by when the server first saw the app);
- a page is ``limit`` entries from ``offset``; a sweep entry carries at most :data:`SWEEP_RUNS` runs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, Iterable, List, Mapping, Optional

from jupyter_sched.frontend.jobs.reasons import replica_reason
from jupyter_sched.specs import AppState, AppStatus

Row = Dict[str, Any]

MAX_LIMIT = 500
"""The most entries one page may hold (the default is :data:`DEFAULT_LIMIT`)."""
DEFAULT_LIMIT = 50
SWEEP_RUNS = 20
"""Runs of a sweep sent inside its entry; the rest are counted (``more``) and paged with ``sweep=``."""

STATE_FILTERS = ("running", "ended", *(s.name for s in AppState))


def times(status: Optional[AppStatus]) -> Dict[str, Optional[float]]:
    """``started``: the first replica's start; ``ended``: the last replica's end, once the app has ended."""
    reps = [r for role in (status.roles if status is not None else []) for r in role.replicas]
    starts = [r.started for r in reps if r.started is not None]
    ends = [r.finished for r in reps if r.finished is not None]
    ended = status is not None and status.is_terminal()
    return {"started": min(starts) if starts else None, "ended": max(ends) if ended and ends else None}


def reason(name: str, status: Optional[AppStatus], kernel_pid: Optional[int] = None) -> str:
    """How an app ended, in one line: ``train SUCCEEDED``, ``train FAILED: trainer/1 exit code 1``,
    ``train CANCELLED``; empty while it runs. A failed replica is explained as the panes and ``JobFailed``
    explain it (:func:`~jupyter_sched.frontend.jobs.reasons.replica_reason`: out of memory, its owner's exit, a
    kernel's restart when ``kernel_pid`` launched it, its error file, its exit code)."""
    if status is None or not status.is_terminal():
        return ""
    text = f"{name} {status.state}"
    if status.state == AppState.SUCCEEDED:
        return text
    for role in status.roles:
        for rep in sorted(role.replicas, key=lambda r: r.id):
            if rep.state == AppState.FAILED:
                return f"{text}: {role.role}/{rep.id} {replica_reason(rep, status, kernel_pid=kernel_pid)}"
    return text


def replica_counts(status: Optional[AppStatus]) -> Dict[str, int]:
    reps = [r for role in (status.roles if status is not None else []) for r in role.replicas]
    return {"replicas": len(reps), "running": sum(1 for r in reps if r.state == AppState.RUNNING)}


def usage_totals(status: Optional[AppStatus]) -> Optional[Dict[str, Any]]:
    """What an ended app used, summed over its replicas (peak memory is the largest replica's)."""
    reps = [r for role in (status.roles if status is not None else []) for r in role.replicas if r.usage]
    if not reps:
        return None
    return {
        "cpu_percent": None,
        "cpu_seconds": round(sum(r.usage.cpu_seconds for r in reps if r.usage), 3),
        "rss_bytes": None,
        "peak_rss_bytes": max(r.usage.peak_rss_bytes for r in reps if r.usage),
    }


def usage_now(samples: Iterable[Any]) -> Optional[Dict[str, Any]]:
    """Running replicas' usage samples summed: CPU % (of one core) and resident memory now, and the
    largest peak."""
    samples = list(samples)
    if not samples:
        return None
    return {
        "cpu_percent": round(sum(s.cpu_percent for s in samples), 1),
        "cpu_seconds": round(sum(s.cpu_seconds for s in samples), 3),
        "rss_bytes": sum(s.rss_bytes for s in samples),
        "peak_rss_bytes": max(s.peak_rss_bytes for s in samples),
    }


def is_running(row: Mapping[str, Any]) -> bool:
    return not AppState[row["state"]].is_terminal


def sort_key(row: Mapping[str, Any]) -> Any:
    """Running first; then newest first by start (an app not started yet: when it was first seen)."""
    when = row.get("started") or row.get("seen") or 0.0
    return (not is_running(row), -when, row["handle"])


def matches(row: Mapping[str, Any], filters: Mapping[str, Optional[str]]) -> bool:
    """``notebook``, ``session``, ``scheduler``, ``sweep``: equal; ``state``: running, ended, or a state name."""
    for key in ("notebook", "session", "scheduler", "sweep"):
        want = filters.get(key)
        if want and row.get(key) != want:
            return False
    state = filters.get("state")
    if state:
        if state == "running":
            return is_running(row)
        if state == "ended":
            return not is_running(row)
        return bool(row["state"] == state)
    return True


def group(rows: List[Row], runs_per_sweep: int = SWEEP_RUNS) -> List[Row]:
    """Entries in order: job rows, and one entry per sweep in place of its runs (at the place of its first
    run in the order). A sweep of a single run is shown as that run."""
    rows = sorted(rows, key=sort_key)
    members: Dict[str, List[Row]] = {}
    for row in rows:
        if row.get("sweep"):
            members.setdefault(row["sweep"], []).append(row)
    entries: List[Row] = []
    placed = set()
    for row in rows:
        name = row.get("sweep")
        if not name or len(members[name]) < 2:
            entries.append({"kind": "job", **row})
            continue
        if name in placed:
            continue
        placed.add(name)
        entries.append(sweep_entry(name, members[name], runs_per_sweep))
    return entries


def sweep_entry(name: str, runs: List[Row], runs_shown: int = SWEEP_RUNS) -> Row:
    counts = Counter(r["state"] for r in runs)
    running = sum(1 for r in runs if is_running(r))
    starts = [r["started"] for r in runs if r.get("started")]
    ends = [r["ended"] for r in runs if r.get("ended")]
    notebooks = {r.get("notebook") for r in runs}
    schedulers = sorted({r["scheduler"] for r in runs})
    sessions = sorted({r["session"] for r in runs})
    return {
        "kind": "sweep",
        "sweep": name,
        "name": name,
        "handle": f"sweep:{name}",
        "scheduler": ", ".join(schedulers),
        "session": ", ".join(sessions),
        "state": "RUNNING" if running else _ended_state(counts),
        "started": min(starts) if starts else None,
        "ended": max(ends) if ends and not running else None,
        "notebook": notebooks.pop() if len(notebooks) == 1 else None,
        "counts": dict(counts),
        "total": len(runs),
        "running": running,
        "runs": runs[:runs_shown],
        "more": max(0, len(runs) - runs_shown),
    }


def _ended_state(counts: Mapping[str, int]) -> str:
    for state in ("FAILED", "CANCELLED", "UNKNOWN"):
        if counts.get(state):
            return state
    return "SUCCEEDED"


def page(entries: List[Row], offset: int, limit: int) -> Dict[str, Any]:
    """``limit`` entries from ``offset``, with the totals the sidebar shows (``total``, ``running``)."""
    return {
        "jobs": entries[offset:offset + limit],
        "total": len(entries),
        "running": sum(1 for e in entries if is_running(e)),
        "offset": offset,
        "limit": limit,
    }


def check_query(args: Mapping[str, Optional[str]]) -> Dict[str, Any]:
    """The list's query arguments, checked: ``offset`` and ``limit`` integers in range, ``state`` one of
    :data:`STATE_FILTERS`. Raises ValueError naming the argument and what it accepts."""
    out: Dict[str, Any] = {}
    for key, default, top in (("offset", 0, None), ("limit", DEFAULT_LIMIT, MAX_LIMIT)):
        raw = args.get(key)
        try:
            value = default if raw in (None, "") else int(str(raw))
        except ValueError:
            raise ValueError(f"{key}={raw!r}: give a whole number") from None
        if value < (1 if key == "limit" else 0) or (top is not None and value > top):
            raise ValueError(f"{key}={value}: give {'1' if key == 'limit' else '0'} to {top or 'any'}")
        out[key] = value
    state = args.get("state") or None
    if state and state not in STATE_FILTERS:
        raise ValueError(f"state={state!r}: give one of {', '.join(STATE_FILTERS)}")
    out["filters"] = {k: args.get(k) or None for k in ("notebook", "session", "scheduler", "sweep")}
    out["filters"]["state"] = state
    return out
