"""``jupyter-sched metrics APP_HANDLE [--key K ...] [-f] [--format table|jsonl|csv]``: what an app's replicas
logged with ``jupyter_sched.track``, read from its metrics directory (:mod:`jupyter_sched.frontend.jobs.metrics`,
the reader ``job.metrics()`` and ``%sched_metrics`` use too).

- ``table`` (the default): one row per role, replica and key: the last value, the min and the max, the count,
  the step of the last value and the goal (:func:`~jupyter_sched.frontend.jobs.metrics.summary_table`, the
  rows the notebook's table shows).
- ``jsonl``: the records as stored (strict JSON: NaN as ``"NaN"``), each with its ``role`` and ``replica``.
- ``csv``: the long form, ``step,t,key,value,role,replica``, one row per value (``t``: seconds since the epoch).

``--follow`` (jsonl, csv) prints each replica's records from a byte cursor as they are written and ends when
the app ends, after a final read, so every record is printed once. It is not event-driven: the writer in the
job appends at most once a second, and nothing in the standard library watches a file (nor would it on a
shared filesystem such as Slurm's), so a pass that found nothing new sleeps 0.05 s, doubling up to 0.5 s
while the files stay quiet, and the app's state is read once a pass. A table is a summary, not a stream, so
``--follow`` with it is a usage error naming the fix.

Role names are user text: masked by the one rule and their controls escaped, as every verb shows names.
Keys are constrained to ``[A-Za-z0-9_./-]`` and values are numbers. A job without metrics is one line on
stderr and exit 0; an unknown handle is ``status``'s error (exit 1).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.jobs.metrics import (
    CSV_HEADERS,
    TABLE_HEADERS,
    csv_rows,
    read_all,
    read_records,
    record_line,
    replicas,
    summary_table,
)
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.logs.metric_lines import KEY_RE, MetricRecord
from jupyter_sched.runner import Runner
from jupyter_sched.specs import AppState, AppStatus
from jupyter_sched.specs.output.masking import mask_out

FIRST_WAIT_S = 0.05
MAX_WAIT_S = 0.5
"""How long a follow sleeps after a pass that found nothing new: from the first, doubling up to the max."""

Emit = Callable[[MetricRecord, str, int], None]


def name(text: str) -> str:
    """A role name as the command line shows it: masked, then its controls escaped."""
    return common.shown(str(mask_out(str(text))))


def check_keys(keys: Optional[List[str]]) -> Optional[List[str]]:
    for key in keys or []:
        if KEY_RE.fullmatch(key) is None:
            raise CliUsageError(
                f"metric {key!r} (asked for with the key option) cannot exist: a metric's name is 1 to 128"
                " characters of A-Z a-z 0-9 _ . / - (e.g. train/loss)"
            )
    return keys


def render_table(rows: List[Tuple[str, ...]]) -> str:
    """The summary rows, aligned: names left, numbers right."""
    shown = [TABLE_HEADERS] + [(name(r[0]), *(common.shown(c) for c in r[1:])) for r in rows]
    widths = [max(len(r[i]) for r in shown) for i in range(len(TABLE_HEADERS))]
    left = {0, 2, 8}  # ROLE, KEY, GOAL
    lines = []
    for row in shown:
        cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def emitter(fmt: str, keys: Optional[List[str]]) -> Emit:
    """What prints one record in ``fmt`` (jsonl or csv), flushed so a pipe sees it at once."""
    if fmt == "jsonl":

        def emit_json(record: MetricRecord, role: str, replica: int) -> None:
            line = record_line(record, str(mask_out(role)), replica, keys)  # JSON escapes the controls
            if line is not None:
                print(line, flush=True)

        return emit_json
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(CSV_HEADERS)

    def emit_csv(record: MetricRecord, role: str, replica: int) -> None:
        rows = csv_rows(record, name(role), replica, keys)
        if rows:
            writer.writerows(rows)
            sys.stdout.flush()

    return emit_csv


def follow(runner: Runner, handle: str, directory: str, emit: Emit) -> Tuple[Optional[AppStatus], int]:
    """Prints every replica's records from its cursor until the app ends (a final read after it ended, so
    what the replicas wrote at exit is printed too). Returns the last status and the lines skipped."""
    cursors: Dict[Tuple[str, int], int] = {}
    skipped = 0
    wait = FIRST_WAIT_S
    while True:
        status = runner.status(handle)  # before the pass: records written before the end are read after it
        grew = False
        for role, k in replicas(directory):  # a replica's file may appear late
            start = cursors.get((role, k), 0)
            chunk = read_records(directory, role, k, start)
            cursors[(role, k)] = chunk.cursor
            skipped += chunk.skipped
            grew = grew or chunk.cursor != start
            for record in chunk.records:
                emit(record, role, k)
        if status is None or status.is_terminal():
            return status, skipped
        wait = FIRST_WAIT_S if grew else min(wait * 2, MAX_WAIT_S)
        time.sleep(wait)


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    keys = check_keys(args.keys)
    if args.follow and args.format == "table":
        raise CliUsageError("--follow needs --format jsonl or csv (a table is a summary: run it again to refresh)")
    with common.open_runner(config) as runner:
        targets.require_status(runner, handle)
        directory = runner.metrics_dir(handle)
        if directory is None:
            common.err(f"{handle}: no metrics: its scheduler keeps no metrics directory (records on stderr are not"
                       " collected yet)")  # fmt: skip
            return 0
        if args.follow:
            status, skipped = follow(runner, handle, directory, emitter(args.format, keys))
            if skipped:
                common.err(f"{handle}: {skipped} lines of the metrics files were not valid records (skipped)")
            if status is None:
                raise CliError(f"{handle}: its records were removed while its metrics were followed")
            if status.state != AppState.SUCCEEDED:
                common.err(f"{handle}: {status.state}")
                return 1
            return 0
        data = read_all(directory)
    skipped = sum(rep.skipped for rep in data)
    if skipped:
        common.err(f"{handle}: {skipped} lines of the metrics files were not valid records (skipped)")
    if not any(rep.records or rep.summary for rep in data):
        common.err(f"{handle}: no metrics (nothing was logged with jupyter_sched.track)")
        if args.format == "csv":
            emitter("csv", keys)  # the header alone: a reader still gets the columns
        return 0
    if args.format == "table":
        rows = summary_table(data, keys)
        if not rows:
            logged = sorted({key for rep in data for key in rep.summary})
            raise CliError(f"{handle} logged no metric {', '.join(map(repr, keys or []))}; its keys: "
                           f"{', '.join(logged)}")  # fmt: skip
        print(render_table(rows))
        return 0
    emit = emitter(args.format, keys)
    for rep in data:
        for record in rep.records:
            emit(record, rep.role, rep.replica)
    return 0
