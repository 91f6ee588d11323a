"""The job pane's tracker block: what the job told TorchX's tracker API (``app_run_from_env()``), under its charts.

The block is the server's ``tracker`` field (``frontend.jobs.tracked.tracker_json``: the job's own run first,
bounded, masked), read through a :class:`~jupyter_sched.frontend.jobs.tracked.TrackedCache`, so the Metrics
section's ticker (:mod:`.metrics_view`) refreshes it with the charts at the cost of a ``listdir`` and a
``stat`` per tracker file until one changes: no thread of its own. Metadata is shown as ``key = value``,
artifacts as ``name → path``; a run other than the job's own is named. Every key, value, name and path is
the job's text: escaped for HTML. The record of the cell keeps the block with the charts (HTML and its text
twin), so a saved notebook shows it without a kernel.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Optional

from jupyter_sched.frontend.jobs.tracked import TrackedCache
from jupyter_sched.notebook.panes.metrics_view import MetricsView
from jupyter_sched.notebook.panes.theme import PANE_STYLE, esc

MAX_VALUE_CHARS = 200
"""A value longer than this is cut (with "…"): the block is a summary; ``describe`` has it whole."""


def shown_value(value: Any) -> str:
    """A metadata value as the block shows it: text as it is, anything else as compact JSON (as the
    JupyterLab view shows it); cut."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _more(count: int, what: str) -> str:
    return f"{count} more {what}: jupyter-sched describe has them all" if count > 0 else ""


def tracker_html(block: List[Dict[str, Any]], handle: str) -> str:
    """The block as HTML ("" without runs); ``handle`` is the job's own run, which is not named."""
    if not block:
        return ""
    parts = []
    for run in block:
        head = "tracker" if run["run_id"] == handle else f"tracker of run {run['run_id']}"
        rows = [
            f'<div><span style="opacity:0.8">{esc(k)}</span> = <code>{esc(shown_value(v))}</code></div>'
            for k, v in run["metadata"].items()
        ] + [
            f'<div><span style="opacity:0.8">{esc(a["name"])}</span> &rarr; <code>{esc(a["path"])}</code></div>'
            for a in run["artifacts"]
        ]
        notes = [n for n in (_more(run["more_metadata"], "keys"), _more(run["more_artifacts"], "artifacts")) if n]
        note = f'<div style="font-size:11px;opacity:0.75">{esc("; ".join(notes))}</div>' if notes else ""
        parts.append(f"<div><b>{esc(head)}</b>{''.join(rows)}{note}</div>")
    return f'<div class="jsched-tracker" style="{PANE_STYLE};font-size:12px;margin:4px 6px 0 0">{"".join(parts)}</div>'


def tracker_text(block: List[Dict[str, Any]], handle: str) -> List[str]:
    """The block as lines of text (``text/plain``), the twin of :func:`tracker_html`."""
    out: List[str] = []
    for run in block:
        out.append("tracker:" if run["run_id"] == handle else f"tracker of run {run['run_id']}:")
        out += [f"  {k} = {shown_value(v)}" for k, v in run["metadata"].items()]
        out += [f"  {a['name']} → {a['path']}" for a in run["artifacts"]]
        out += [
            f"  ({n})" for n in (_more(run["more_metadata"], "keys"), _more(run["more_artifacts"], "artifacts")) if n
        ]
    return out


class TrackerView:
    """One app's tracker block, read again only when its tracker files changed; thread-safe."""

    def __init__(self, directory: Optional[str], handle: str) -> None:
        self.directory = directory
        self.handle = handle
        self.cache = TrackedCache(limit=1)
        self.lock = threading.Lock()
        self.block: List[Dict[str, Any]] = []

    def refresh(self) -> bool:
        """Reads the block if the files changed; True if it is not what it was."""
        block = self.cache.of(self.directory, self.handle)
        with self.lock:
            changed = block != self.block
            self.block = block
        return changed

    def html(self) -> str:
        with self.lock:
            return tracker_html(self.block, self.handle)

    def text(self) -> List[str]:
        with self.lock:
            return tracker_text(self.block, self.handle)


class TrackedMetricsView(MetricsView):
    """The Metrics section with the tracker block under its charts: one model, so the section's ticker, its
    visibility (shown once either has something) and the cell's record take both."""

    def __init__(self, directory: Optional[str], first_role: Optional[str], handle: str) -> None:
        super().__init__(directory, first_role)
        self.tracker = TrackerView(directory, handle)

    def refresh(self) -> bool:
        charts = super().refresh()
        return self.tracker.refresh() or charts

    def html(self, title: bool = True) -> str:
        return super().html(title) + self.tracker.html()

    def text(self) -> List[str]:
        return super().text() + self.tracker.text()
