"""The status pane's usage part: per-replica CPU % and memory now/peak/limit, and a chart of them.

The chart (:mod:`.usage_chart`) is an image inside the pane's HTML, not a plotting library or a widget: it
costs no extra comm message (the pane sets one HTML trait per tick whatever the replica count, so its
traffic stays at ``1 / status_interval`` messages per second), it needs no JavaScript, and it stays in a
saved notebook or an HTML export: when the app ends, the record keeps the chart's last frame under the
replicas' kept totals. The history is bounded (:data:`MAX_POINTS`), and so is the table (:data:`MAX_ROWS`
replicas, then a summary row), so a message never grows with the job's age or size.

A replica above 90 % of its memory limit is shown in the warning colour. A limit of exactly the components'
default ``memMB`` (1 GiB) on a scheduler that enforces it is pointed out: the same job has no limit on the
local schedulers, so running out of memory only in a container or on Slurm would otherwise be a surprise.
"""

from __future__ import annotations

from collections import deque
from typing import Deque, List, Optional, Sequence, Tuple

from jupyter_sched.notebook.panes.theme import esc, table
from jupyter_sched.notebook.panes.usage_chart import Point, chart_img
from jupyter_sched.specs import AppStatus
from jupyter_sched.specs.status.usage import UsageSample, format_bytes

MAX_POINTS = 60
MAX_ROWS = 32
WARN_FRACTION = 0.9
WARN_COLOR = "#e75c58"
HEADERS = ("replica", "CPU %", "memory", "peak", "limit")
TOTALS_HEADERS = ("replica", "peak memory", "limit", "CPU time", "wall time")
DEFAULT_LIMIT = 1024 << 20
"""The memory limit the built-in components ask for (``--memMB 1024``) unless given another."""
_NOTE_STYLE = "font-size:11px;opacity:0.75;margin:1px 0 2px"


class UsageView:
    """Keeps the latest samples and a bounded history of the app's total CPU % and memory."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self.samples: List[UsageSample] = []
        self.history: Deque[Point] = deque(maxlen=max_points)
        self.error = ""

    def update(self, usage_fn) -> None:  # type: ignore[no-untyped-def]
        """Takes a new reading from ``usage_fn()`` (``Job.usage``); a backend without usage leaves the
        view empty, and a failed reading is shown, never raised on the ticker thread."""
        try:
            samples = usage_fn()
        except ValueError:
            samples, self.error = [], ""
        except Exception as e:  # noqa: BLE001 - shown in the pane
            self.error = f"usage: {e}"
            return
        self.error = ""
        self.samples = list(samples)
        live = [s for s in self.samples if s.running]
        if live:
            limits = [s.mem_limit_bytes for s in live]
            self.history.append((
                max(s.timestamp for s in live),
                sum(s.cpu_percent for s in live),
                sum(s.rss_bytes for s in live),
                sum(limit for limit in limits if limit) if all(limits) else None,
            ))

    def html(self, status: Optional[AppStatus] = None, scheduler: str = "") -> str:
        """The usage part of the pane: while the app runs the live table and the chart; once ``status``
        has ended, each replica's kept totals and the chart's last frame."""
        ended = status is not None and status.is_terminal()
        if self.error and not ended:
            return f'<div style="font-size:12px;color:{WARN_COLOR}">{esc(self.error)}</div>'
        if ended:
            assert status is not None
            body = totals_html(status)
            limits = [r.usage.mem_limit_bytes for role in status.roles for r in role.replicas if r.usage is not None]
        elif self.samples:
            body = usage_table_html(self.samples)
            limits = [s.mem_limit_bytes for s in self.samples]
        else:
            return ""
        chart = chart_img(list(self.history), ended=ended)
        note = default_limit_note(limits, scheduler)
        if not (body or chart):
            return ""
        return f'<div class="jsched-usage">{body}{note}{chart}</div>'


def default_limit_note(limits: Sequence[Optional[int]], scheduler: str) -> str:
    """A line under the table when a replica's limit is the built-in components' default, on a scheduler
    that enforces it (the local ones never do)."""
    local = scheduler.startswith("local_") and scheduler != "local_docker"
    if local or DEFAULT_LIMIT not in limits:
        return ""
    return (
        f'<div class="jsched-note" style="{_NOTE_STYLE}">limit 1 GiB: the component\'s default --memMB 1024,'
        f" enforced on {esc(scheduler)} (the local schedulers set none); give --memMB to change it</div>"
    )


def _warn(sample: UsageSample) -> bool:
    fraction = sample.mem_fraction
    peak = sample.peak_rss_bytes / sample.mem_limit_bytes if sample.mem_limit_bytes else None
    return (fraction is not None and fraction > WARN_FRACTION) or (
        not sample.running and peak is not None and peak > WARN_FRACTION
    )


def _gpu_cell(sample: UsageSample) -> str:
    cells = (f"{g.index}: {g.utilization_percent:.0f} % {format_bytes(g.memory_used_bytes)}" for g in sample.gpus)
    return ", ".join(cells) or "-"


def usage_rows(samples: Sequence[UsageSample]) -> List[Tuple[str, ...]]:
    gpu = any(s.gpus for s in samples)
    rows = []
    for s in samples[:MAX_ROWS]:
        color = f' style="color:{WARN_COLOR};font-weight:bold"' if _warn(s) else ""
        mem = format_bytes(s.rss_bytes) if s.running else "ended"
        cpu = f"{s.cpu_percent:.0f}" if s.running else f"{s.cpu_seconds:.1f} s total"
        rows.append((
            esc(f"{s.role}/{s.replica}"),
            esc(cpu),
            f"<span{color}>{esc(mem)}</span>",
            f"<span{color}>{esc(format_bytes(s.peak_rss_bytes))}</span>",
            esc(format_bytes(s.mem_limit_bytes)),
        ) + ((esc(_gpu_cell(s)),) if gpu else ()))
    if len(samples) > MAX_ROWS:
        rest = samples[MAX_ROWS:]
        rows.append((
            esc(f"+{len(rest)} more"),
            esc(f"{sum(s.cpu_percent for s in rest):.0f}"),
            esc(format_bytes(sum(s.rss_bytes for s in rest))),
            esc(format_bytes(max(s.peak_rss_bytes for s in rest))),
            "",
        ) + (("",) if gpu else ()))
    return rows


def usage_table_html(samples: Sequence[UsageSample]) -> str:
    """The columns of :data:`HEADERS`, and a GPU column when any replica uses a GPU."""
    headers = HEADERS + (("GPU",) if any(s.gpus for s in samples) else ())
    return table(headers, usage_rows(samples), raw=True)


def totals_html(status: AppStatus) -> str:
    """The kept totals of ended replicas (for ``job.status`` and ``describe`` displays); "" if none."""
    rows = []
    for role in status.roles:
        for rep in role.replicas:
            if rep.usage is not None:
                u = rep.usage
                rows.append(tuple(esc(c) for c in (
                    f"{role.role}/{rep.id}", format_bytes(u.peak_rss_bytes or None), format_bytes(u.mem_limit_bytes),
                    f"{u.cpu_seconds:.2f} s", f"{u.wall_seconds:.2f} s",
                )))
    if not rows:
        return ""
    return table(TOTALS_HEADERS, rows, raw=True)

