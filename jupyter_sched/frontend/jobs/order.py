"""The jobs list's order and its sweeps: running first, then newest first; a sweep's runs as one entry.

The order is total (the handle breaks ties), so two front ends given the same rows list them the same
way, whatever order the schedulers answered in. An app not started yet is placed by when it was launched
or first listed (``seen``). A sweep (two or more runs named ``<sweep>-NNN``) takes the place of its first
run in that order; a sweep of a single run is listed as that run.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple, Union

from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow, sweep_row

Entry = Union[JobRow, SweepRow]
"""One line of a jobs list."""

SWEEP_RUNS = 20
"""Runs of a sweep carried inside its entry; the rest are counted (``more``)."""


def sort_key(row: Union[JobRow, SweepRow]) -> Tuple[Any, ...]:
    """Running first; then newest first by start (an app not started yet: by when it was seen); then by
    handle, so the order is total."""
    when = row.started if row.started is not None else row.seen
    return (not row.running, -when, row.handle)


def ordered(rows: Sequence[JobRow]) -> List[JobRow]:
    return sorted(rows, key=sort_key)


def group(rows: Sequence[JobRow], runs_per_sweep: int = SWEEP_RUNS) -> List[Entry]:
    """Entries in order: job rows, and one :class:`SweepRow` per sweep of two or more runs, in place of its
    runs at the place of its first run. Every row is in exactly one entry (a sweep's runs beyond
    ``runs_per_sweep`` are counted in its ``more``)."""
    rows = ordered(rows)
    members: Dict[str, List[JobRow]] = {}
    for row in rows:
        if row.sweep:
            members.setdefault(row.sweep, []).append(row)
    entries: List[Entry] = []
    placed = set()
    for row in rows:
        name = row.sweep
        if not name or len(members[name]) < 2:
            entries.append(row)
            continue
        if name in placed:
            continue
        placed.add(name)
        entries.append(sweep_row(name, members[name], runs_per_sweep))
    return entries
