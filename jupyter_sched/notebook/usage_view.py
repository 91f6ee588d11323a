"""The status pane's usage part: per-replica CPU % and memory now/peak, and a small time-series chart.

The chart is an inline SVG inside the pane's HTML, not a plotting library or a widget: it costs no extra
comm message (the pane sets one HTML trait per tick whatever the replica count, so its traffic stays at
``1 / status_interval`` messages per second), it needs no JavaScript, and it stays readable in a saved
notebook or an HTML export. The history is bounded (:data:`MAX_POINTS`), and so is the table
(:data:`MAX_ROWS` replicas, then a summary row), so a message never grows with the job's age or size.

A replica above 90 % of its memory limit is shown in the warning colour.
"""

from __future__ import annotations

from collections import deque
from typing import Deque, List, Sequence, Tuple

from jupyter_sched.notebook.theme import esc, table
from jupyter_sched.specs import AppStatus
from jupyter_sched.specs.usage import UsageSample, format_bytes

MAX_POINTS = 60
MAX_ROWS = 32
WARN_FRACTION = 0.9
WARN_COLOR = "#e75c58"
CPU_COLOR = "#208ffb"
MEM_COLOR = "#d160c4"
HEADERS = ("replica", "CPU %", "memory", "peak", "limit")
_W, _H, _PAD = 240, 48, 2


class UsageView:
    """Keeps the latest samples and a bounded history of the app's total CPU % and memory."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self.samples: List[UsageSample] = []
        self.history: Deque[Tuple[float, float, int]] = deque(maxlen=max_points)
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
            self.history.append((
                max(s.timestamp for s in live),
                sum(s.cpu_percent for s in live),
                sum(s.rss_bytes for s in live),
            ))

    def html(self) -> str:
        if self.error:
            return f'<div style="font-size:12px;color:{WARN_COLOR}">{esc(self.error)}</div>'
        if not self.samples:
            return ""
        return f'<div class="jsched-usage">{usage_table_html(self.samples)}{chart_svg(list(self.history))}</div>'


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
            esc(f"{s.role}[{s.replica}]"),
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


def _polyline(points: List[Tuple[float, float]], color: str) -> str:
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{coords}"/>'


def chart_svg(history: List[Tuple[float, float, int]]) -> str:
    """Total CPU % and memory over the last :data:`MAX_POINTS` readings, each scaled to its own maximum
    (named in the legend), as a self-contained SVG."""
    if len(history) < 2:
        return ""
    t0, t1 = history[0][0], history[-1][0]
    span = max(t1 - t0, 1e-9)
    cpu_max = max(max(h[1] for h in history), 1.0)
    mem_max = max(max(h[2] for h in history), 1)

    def xy(t: float, v: float, top: float) -> Tuple[float, float]:
        return (_PAD + (t - t0) / span * (_W - 2 * _PAD), _H - _PAD - v / top * (_H - 2 * _PAD))

    cpu = _polyline([xy(t, c, cpu_max) for t, c, _ in history], CPU_COLOR)
    mem = _polyline([xy(t, float(m), float(mem_max)) for t, _, m in history], MEM_COLOR)
    legend = (
        f'<span style="color:{CPU_COLOR}">CPU max {cpu_max:.0f} %</span> &middot; '
        f'<span style="color:{MEM_COLOR}">memory max {esc(format_bytes(mem_max))}</span> &middot; '
        f"last {span:.0f} s"
    )
    return (
        f'<div style="font-size:11px;opacity:0.85">'
        f'<svg class="jsched-usage-chart" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="CPU and memory over time">'
        f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="none" stroke="rgba(128,128,128,0.4)"/>'
        f"{cpu}{mem}</svg><div>{legend}</div></div>"
    )


def totals_html(status: AppStatus) -> str:
    """The kept totals of ended replicas (for ``job.status`` and ``describe`` displays); "" if none."""
    rows = []
    for role in status.roles:
        for rep in role.replicas:
            if rep.usage is not None:
                u = rep.usage
                rows.append(tuple(esc(c) for c in (
                    f"{role.role}[{rep.id}]", format_bytes(u.peak_rss_bytes or None), format_bytes(u.mem_limit_bytes),
                    f"{u.cpu_seconds:.2f} s", f"{u.wall_seconds:.2f} s",
                )))
    if not rows:
        return ""
    return table(("replica", "peak memory", "limit", "CPU time", "wall time"), rows, raw=True)

