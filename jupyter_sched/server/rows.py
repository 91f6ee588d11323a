"""The jobs list as the server sends it: the model's rows, filtered and paged.

The rows, their order and the sweep grouping are the front-end model's (:mod:`jupyter_sched.frontend.jobs`:
a :class:`~jupyter_sched.frontend.jobs.rows.JobRow` per app, a
:class:`~jupyter_sched.frontend.jobs.rows.SweepRow` per sweep); the server adds only what a server needs,
as pure functions (no I/O, unit-tested without a server):

- the filters of ``GET jobs`` (:func:`matches`) and the checks of its query (:func:`check_query`);
- a page is ``limit`` entries from ``offset`` (:func:`page`), as JSON of the schema's ``JobPage``; a sweep
  entry carries at most :data:`SWEEP_RUNS` runs.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from jupyter_sched.frontend.jobs.order import SWEEP_RUNS, Entry, group, ordered
from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow, sweep_row
from jupyter_sched.specs import AppState

MAX_LIMIT = 500
"""The most entries one page may hold (the default is :data:`DEFAULT_LIMIT`)."""
DEFAULT_LIMIT = 50

STATE_FILTERS = ("running", "ended", *(s.name for s in AppState))


def matches(row: JobRow, filters: Mapping[str, Optional[str]]) -> bool:
    """``notebook``, ``session``, ``scheduler``, ``sweep``: equal; ``state``: running, ended, or a state name."""
    for key in ("notebook", "session", "scheduler", "sweep"):
        want = filters.get(key)
        if want and getattr(row, key) != want:
            return False
    state = filters.get("state")
    if state:
        if state == "running":
            return row.running
        if state == "ended":
            return not row.running
        return row.state == state
    return True


def entries(rows: Sequence[JobRow], sweep: Optional[str]) -> List[Entry]:
    """The list's entries: one sweep's runs one row each (``sweep=``), else the model's grouping."""
    return list(ordered(rows)) if sweep else group(rows, SWEEP_RUNS)


def page(entries: Sequence[Entry], offset: int, limit: int, sweep: Optional[SweepRow] = None) -> Dict[str, Any]:
    """``limit`` entries from ``offset`` as JSON, with the totals the sidebar shows (``total``, ``running``),
    and the sweep's own row when the page lists one sweep's runs."""
    return {
        "jobs": [e.to_json() for e in entries[offset : offset + limit]],
        "total": len(entries),
        "running": sum(1 for e in entries if e.running),
        "offset": offset,
        "limit": limit,
        "sweep": sweep.to_json() if sweep is not None else None,
    }


def sweep_of_page(rows: Sequence[JobRow], sweep: Optional[str]) -> Optional[SweepRow]:
    """The row of the sweep ``sweep=`` asks for (its runs among ``rows``), else None."""
    runs = [r for r in rows if sweep and r.sweep == sweep]
    return sweep_row(sweep, ordered(runs), SWEEP_RUNS) if sweep and runs else None


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
