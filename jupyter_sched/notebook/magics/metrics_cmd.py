"""``%sched_metrics``: what a job's replicas logged with ``jupyter_sched.track``, in a cell.

The table is the summary per role, replica and key (last, min, max, count, step of the last value, goal) from
:func:`jupyter_sched.frontend.jobs.metrics.summary_table`, the rows ``jupyter-sched metrics`` prints, so the
two cannot disagree. It shows as an HTML table (escaped by ``notebook.panes.theme``) with a text/plain twin,
which is what a saved or exported notebook and a terminal front end keep. ``--format jsonl`` and ``csv``
print the records as the command line does (one line each), for copying. Role names and the app's name are
user text: masked by the one rule before either rendering.
"""

from __future__ import annotations

import csv
import io
from typing import List, Optional, Tuple

from jupyter_sched.frontend.jobs.metrics import (
    CSV_HEADERS,
    TABLE_HEADERS,
    ReplicaMetrics,
    csv_rows,
    record_line,
    summary_table,
)
from jupyter_sched.logs.metric_lines import KEY_RE
from jupyter_sched.notebook.panes.theme import PANE_STYLE, esc, table, text_table
from jupyter_sched.specs.output.labels import app_label
from jupyter_sched.specs.output.masking import mask_out

FORMATS = ("table", "jsonl", "csv")


def masked(text: str) -> str:
    return str(mask_out(str(text)))


class MetricsTable:
    """The summary table of one app, shown as HTML with a text twin (both from the same rows)."""

    def __init__(self, handle: str, rows: List[Tuple[str, ...]], note: str = "") -> None:
        self.label = masked(app_label(handle))
        self.rows = [(masked(r[0]), *r[1:]) for r in rows]
        self.note = note

    def _repr_html_(self) -> str:
        body = table(TABLE_HEADERS, self.rows) if self.rows else ""
        note = f"<div>{esc(self.note)}</div>" if self.note else ""
        return f'<div style="{PANE_STYLE}"><div><b>metrics of {esc(self.label)}</b></div>{body}{note}</div>'

    def __repr__(self) -> str:
        lines = [f"metrics of {self.label}"]
        if self.rows:
            lines.append(text_table(TABLE_HEADERS, self.rows))
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


def check_keys(keys: Optional[List[str]]) -> None:
    """ValueError naming a key that no metric can have (the keys' rule of ``jupyter_sched.track``)."""
    for key in keys or []:
        if KEY_RE.fullmatch(key) is None:
            raise ValueError(
                f"metric {key!r} cannot exist: a metric's name is 1 to 128 characters of A-Z a-z 0-9 _ . / -"
                " (e.g. train/loss)"
            )


def records_text(data: List[ReplicaMetrics], fmt: str, keys: Optional[List[str]]) -> str:
    """The records as ``jupyter-sched metrics --format jsonl|csv`` prints them."""
    if fmt == "jsonl":
        lines = [record_line(r, masked(rep.role), rep.replica, keys) for rep in data for r in rep.records]
        return "\n".join(line for line in lines if line is not None)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADERS)
    for rep in data:
        for r in rep.records:
            writer.writerows(csv_rows(r, masked(rep.role), rep.replica, keys))
    return out.getvalue().rstrip("\n")


def show(handle: str, directory: Optional[str], data: List[ReplicaMetrics], keys: Optional[List[str]],
         fmt: str) -> Optional[MetricsTable]:  # fmt: skip
    """The table for ``fmt == "table"``; else prints the records and returns None."""
    check_keys(keys)
    if fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r}: give one of {', '.join(FORMATS)}")
    if fmt != "table":
        print(records_text(data, fmt, keys))
        return None
    if directory is None:
        return MetricsTable(handle, [], "no metrics: its scheduler keeps no metrics directory")
    rows = summary_table(data, keys)
    if rows:
        return MetricsTable(handle, rows)
    if any(rep.summary for rep in data):
        logged = sorted({key for rep in data for key in rep.summary})
        return MetricsTable(handle, [], f"no metric {', '.join(keys or [])}; its keys: {', '.join(logged)}")
    return MetricsTable(handle, [], "no metrics (nothing was logged with jupyter_sched.track)")
