"""The status pane's usage chart: CPU % and memory over the last readings, with axes and the memory limit.

Two small panels side by side, each on its own scale starting at zero and labelled: CPU % up to 100 % (or
the next hundred above the busiest reading: 200 % is two busy cores), memory up to its limit when there is
one (a dashed line labelled with it, so how close the job came is visible) or a round number above the
peak. Under each, how far back the readings go and where they end ("now" while the app runs, "end" in the
final record, which keeps the last frame).

It is an SVG image in an ``<img>`` with a ``data:`` URI rather than inline ``<svg>``: JupyterLab shows an
untrusted output (a notebook saved and opened again, or run headless) through its HTML sanitizer, which
drops ``svg`` elements but keeps images, so the record of an ended job keeps its chart. An image cannot
take the theme's text colour, so labels use a grey that reads on light and dark backgrounds. Everything in
it is computed here from numbers: no user text goes into the SVG.
"""

from __future__ import annotations

import base64
import math
from typing import List, Optional, Sequence, Tuple

from jupyter_sched.specs.status.usage import format_bytes

CPU_COLOR = "#208ffb"
MEM_COLOR = "#d160c4"
LIMIT_COLOR = "#e75c58"
AXIS_COLOR = "#8c8c8c"
_PANEL_W, _LEFT, _TOP, _PLOT_H = 170, 48, 16, 50
"""Each panel: the plot's width, the room for its y labels on the left, its top and its height."""
_GAP = 16
WIDTH, HEIGHT = 2 * (_LEFT + _PANEL_W) + _GAP, 84

Point = Tuple[float, float, int, Optional[int]]
"""A reading: (time, total CPU %, total resident bytes, total memory limit or None)."""


def _nice_bytes(n: float) -> float:
    """A round number of bytes at or above ``n``: 1, 2 or 5 times a power of two of a unit (64 MiB...)."""
    if n <= 0:
        return 1 << 20
    exp = 2 ** math.ceil(math.log2(n))
    for factor in (0.625, 0.75, 1.0):  # 5/8, 3/4 of the next power of two, then the power itself
        if exp * factor >= n:
            return exp * factor
    return float(exp)


def _axis(x0: float, top: float, bottom: float, top_label: str) -> str:
    return (
        f'<line x1="{x0}" y1="{top}" x2="{x0}" y2="{bottom}" stroke="{AXIS_COLOR}" stroke-width="1"/>'
        f'<line x1="{x0}" y1="{bottom}" x2="{x0 + _PANEL_W}" y2="{bottom}" stroke="{AXIS_COLOR}" stroke-width="1"/>'
        f'<text x="{x0 - 4}" y="{top + 4}" text-anchor="end">{top_label}</text>'
        f'<text x="{x0 - 4}" y="{bottom}" text-anchor="end">0</text>'
    )


def _line(points: Sequence[Tuple[float, float]], color: str) -> str:
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{coords}"/>'


MIN_SPAN_S = 1.0
"""Readings closer together than this make no chart (a job that lasted a moment)."""


def chart_svg(history: Sequence[Point], ended: bool = False) -> str:
    """The SVG document of the chart (see the module docstring); "" with fewer than two readings, or
    readings less than :data:`MIN_SPAN_S` apart."""
    if len(history) < 2 or history[-1][0] - history[0][0] < MIN_SPAN_S:
        return ""
    t0, t1 = history[0][0], history[-1][0]
    span = max(t1 - t0, 1e-9)
    cpu_top = max(100.0, math.ceil(max(h[1] for h in history) / 100.0) * 100.0)
    peak = max(h[2] for h in history)
    limits = [h[3] for h in history if h[3]]
    limit = limits[-1] if limits else None
    mem_top = max(float(limit) * 1.15, float(peak) * 1.05) if limit else _nice_bytes(peak * 1.2)
    bottom = _TOP + _PLOT_H
    cpu_x0, mem_x0 = float(_LEFT), float(2 * _LEFT + _PANEL_W + _GAP)

    def xy(x0: float, t: float, v: float, top: float) -> Tuple[float, float]:
        return (x0 + (t - t0) / span * _PANEL_W, bottom - min(v / top, 1.0) * _PLOT_H)

    end = "end" if ended else "now"
    back = f"\u2212{span:.0f} s"
    parts: List[str] = [
        f'<text x="{cpu_x0}" y="10" fill="{CPU_COLOR}">CPU %</text>',
        _axis(cpu_x0, _TOP, bottom, f"{cpu_top:.0f}"),
        _line([xy(cpu_x0, t, c, cpu_top) for t, c, _, _ in history], CPU_COLOR),
        f'<text x="{cpu_x0}" y="{bottom + 12}">{back}</text>',
        f'<text x="{cpu_x0 + _PANEL_W}" y="{bottom + 12}" text-anchor="end">{end}</text>',
        f'<text x="{mem_x0}" y="10" fill="{MEM_COLOR}">memory</text>',
        _axis(mem_x0, _TOP, bottom, "" if limit else format_bytes(mem_top)),
        f'<text x="{mem_x0}" y="{bottom + 12}">{back}</text>',
        f'<text x="{mem_x0 + _PANEL_W}" y="{bottom + 12}" text-anchor="end">{end}</text>',
    ]
    if limit:
        y = bottom - float(limit) / mem_top * _PLOT_H
        parts.append(
            f'<line x1="{mem_x0}" y1="{y:.1f}" x2="{mem_x0 + _PANEL_W}" y2="{y:.1f}" stroke="{LIMIT_COLOR}"'
            ' stroke-width="1" stroke-dasharray="4 3"/>'
            f'<text x="{mem_x0 - 4}" y="{y + 4:.1f}" text-anchor="end" fill="{LIMIT_COLOR}">limit</text>'
            f'<text x="{mem_x0 + _PANEL_W}" y="{y - 3:.1f}" text-anchor="end" fill="{LIMIT_COLOR}">'
            f"{format_bytes(limit)}</text>"
        )
    parts.append(_line([xy(mem_x0, t, float(m), mem_top) for t, _, m, _ in history], MEM_COLOR))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' font-family="sans-serif" font-size="10" fill="{AXIS_COLOR}">{"".join(parts)}</svg>'
    )


def chart_img(history: Sequence[Point], ended: bool = False) -> str:
    """The chart as an ``<img>`` (``data:`` URI), with its numbers in the alt text; "" when there is no chart
    (see :func:`chart_svg`)."""
    svg = chart_svg(history, ended)
    if not svg:
        return ""
    span = history[-1][0] - history[0][0]
    peak = max(h[2] for h in history)
    limit = next((h[3] for h in reversed(history) if h[3]), None)
    alt = (
        f"CPU and memory over {span:.0f} s: CPU up to {max(h[1] for h in history):.0f} %, memory up to"
        f" {format_bytes(peak)}" + (f" of a {format_bytes(limit)} limit" if limit else "")
    )
    data = base64.b64encode(svg.encode()).decode()
    return (
        f'<img class="jsched-usage-chart" src="data:image/svg+xml;base64,{data}" width="{WIDTH}"'
        f' height="{HEIGHT}" alt="{alt}" title="{alt}" style="display:block;margin:4px 0;max-width:100%">'
    )
