"""``job.usage()`` as a small table: one row per replica, memory in binary units, times in local time.

:class:`UsageSamples` is the list of :class:`~jupyter_sched.specs.status.usage.UsageSample` the Runner gives,
so code that reads the fields keeps working; only its display changes: ``text/plain`` (IPython's
pretty printer) and ``text/html`` show the replica, whether it still runs, CPU % of one core, CPU time,
memory now, at peak and its limit, GPUs, wall time and when the sample was taken. An ended replica
shows its kept totals (its memory now is ``-``, not 0). Everything shown is escaped.
"""

from __future__ import annotations

import html
import time
from typing import Any, List, Optional, Sequence

from jupyter_sched.specs.status.usage import UsageSample, format_bytes

HEADERS = ("replica", "state", "CPU %", "CPU time", "memory", "peak", "limit", "GPU", "wall time", "sampled at")


def local_time(ts: float, now: Optional[float] = None) -> str:
    """``14:02:11`` today, ``2024-05-01 14:02:11`` on another day (local time)."""
    when = time.localtime(ts)
    today = time.localtime(time.time() if now is None else now)
    if when[:3] == today[:3]:
        return time.strftime("%H:%M:%S", when)
    return time.strftime("%Y-%m-%d %H:%M:%S", when)


def seconds(value: float) -> str:
    """``0.4 s``, ``12.3 s``, ``4m05s``, ``2h03m``."""
    if value < 60:
        return f"{value:.1f} s"
    minutes, secs = divmod(int(round(value)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def gpu_text(sample: UsageSample) -> str:
    if not sample.gpus:
        return "-"
    return " ".join(f"{g.index}:{g.utilization_percent:.0f}%/{format_bytes(g.memory_used_bytes)}" for g in sample.gpus)


def cells(sample: UsageSample, now: Optional[float] = None) -> List[str]:
    running = sample.running
    return [
        f"{sample.role}/{sample.replica}",
        "running" if running else "ended",
        f"{sample.cpu_percent:.0f}" if running else "-",
        seconds(sample.cpu_seconds),
        format_bytes(sample.rss_bytes) if running else "-",
        format_bytes(sample.peak_rss_bytes),
        format_bytes(sample.mem_limit_bytes) if sample.mem_limit_bytes else "none",
        gpu_text(sample),
        seconds(sample.wall_seconds) if sample.wall_seconds else "-",
        local_time(sample.timestamp, now),
    ]


def text_table(samples: Sequence[UsageSample], now: Optional[float] = None) -> str:
    if not samples:
        return "(no usage: the app has no replicas the scheduler measures)"
    rows = [list(HEADERS)] + [cells(s, now) for s in samples]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def html_table(samples: Sequence[UsageSample], now: Optional[float] = None) -> str:
    if not samples:
        return f"<div>{html.escape(text_table(samples))}</div>"
    head = "".join(f'<th style="text-align:left;padding:1px 8px">{html.escape(h)}</th>' for h in HEADERS)
    body = "".join(
        "<tr>" + "".join(f'<td style="padding:1px 8px">{html.escape(c)}</td>' for c in cells(s, now)) + "</tr>"
        for s in samples
    )
    return f'<table style="font-size:12px;border-collapse:collapse"><tr>{head}</tr>{body}</table>'


class UsageSamples(List[UsageSample]):
    """What each replica uses (a list of UsageSample) that displays as a table."""

    def __str__(self) -> str:
        return text_table(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(text_table(self))

    def _repr_html_(self) -> str:
        return html_table(self)
