"""A metric's chart: one small SVG line chart per key, the value by step, for every front end that shows one.

Pure: a series of ``(step, value)`` points and the key's goal in, an SVG document (or an ``<img>`` of it) out.
Each chart has its axes (step across, value up, a few round ticks on each: 1, 2 or 5 times a power of
ten), the line, the last value (a dot, and ``last`` over the plot) and, when the key has a goal, the best
value by it (a green dot and ``min``/``max`` with its step). A series longer than :data:`MAX_POINTS` is cut
first by :func:`~jupyter_sched.frontend.jobs.metrics.downsample`, which keeps each bucket's smallest and
largest value, so a spike between two kept points still shows.

What a training run really logs is drawn without an exception: NaN and the infinities are gaps in the line,
marked by a short red tick at the top of the plot (never a bound of the scale; the best is as the summaries
count it: NaN never, an infinity may be, and then it is labelled but has no dot); a
step that goes back (a replica restarted by ``max_retries`` logs from step 0 again) starts a new line
rather than a stroke back across the chart; a constant series or a single point gets a scale around its
value; magnitudes up to the largest float or down to the subnormals stay finite (the arithmetic works on
halves, so ``hi - lo`` never overflows).

It is an SVG image in an ``<img>`` with a ``data:`` URI, like the usage chart of
``notebook/panes/usage_chart.py``: JupyterLab's sanitizer, which shows an untrusted output (a notebook saved
and opened again, or run headless), drops ``svg`` elements but keeps images, so a record keeps its charts. An
image cannot take the theme's text colour, so labels use a grey that reads on light and dark backgrounds.
The key is the only user text in it (keys are restricted to ``[A-Za-z0-9_./-]``, and escaped anyway, for the
SVG and again for the ``alt`` attribute).
"""

from __future__ import annotations

import base64
import html
import math
import sys
from typing import Callable, List, Optional, Sequence, Tuple

from jupyter_sched.frontend.jobs.metrics import downsample

MAX_POINTS = 1000
"""Points drawn per chart at most (each bucket's min and max kept beyond it)."""
WIDTH, HEIGHT = 260, 136
_LEFT, _RIGHT, _TOP, _BOTTOM = 46, 10, 34, 18
"""Room around the plot: the y labels on the left, the key and the values on top, the x labels below."""
PLOT_W, PLOT_H = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
LINE_COLOR = "#208ffb"
BEST_COLOR = "#00a250"
BAD_COLOR = "#e75c58"
AXIS_COLOR = "#8c8c8c"
MAX_KEY_CHARS = 38
"""Characters of the key shown in the chart's title; the whole key is in the image's ``alt`` and ``title``."""
_BIG = sys.float_info.max

Point = Tuple[Optional[int], float]
"""``(step, value)``; a step of None (a hand-made record without one) follows the previous point's."""


def format_number(x: float, digits: int = 4) -> str:
    """A value as a chart labels it: ``digits`` significant digits, NaN and the infinities by their
    strict-JSON names (as the tables spell them)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def tick_labels(ticks: Sequence[float]) -> List[str]:
    """The ticks' labels: the fewest significant digits (3 or more) that tell every tick apart."""
    labels = [format_number(t, 3) for t in ticks]
    for digits in range(4, 18):
        if len(set(labels)) == len(labels):
            break
        labels = [format_number(t, digits) for t in ticks]
    return labels


def nice_scale(lo: float, hi: float, count: int = 4, integer: bool = False) -> Tuple[float, float, List[float]]:
    """A scale over ``[lo, hi]`` (finite, ``lo < hi``): about ``count`` intervals of a round size (1, 2 or 5
    times a power of ten; at least 1 when ``integer``), as ``(lo', hi', ticks)``: the bounds widened to
    whole ticks (never past the largest float) and the ticks within them. On halves throughout, so that no
    difference of two floats overflows; a span too small for a power of ten keeps the bounds as ticks."""
    half = hi / 2 - lo / 2
    if not half > 0:
        return lo, hi, [lo]
    raw = half / count * 2
    exp = math.floor(math.log10(raw))
    base = 10.0**exp if exp > -324 else 0.0
    step = 0.0
    for m in (1.0, 2.0, 5.0, 10.0):
        step = m * base
        if step >= raw:
            break
    if integer:
        step = max(1.0, float(math.ceil(step)))
    if not (step > 0 and math.isfinite(step)):
        return lo, hi, [lo, hi]
    k0, k1 = math.floor(lo / step), math.ceil(hi / step)
    if integer:  # steps: the axis spans the data, the ticks are the whole steps inside it
        k0, k1 = math.ceil(lo / step), math.floor(hi / step)
    if k1 - k0 > 4 * count:  # rounding at the edge of the floats: keep the bounds
        return lo, hi, [lo, hi]
    ticks = [min(max(k * step, -_BIG), _BIG) for k in range(k0, k1 + 1)]
    if integer:
        return lo, hi, ticks or [lo]
    return min(lo, ticks[0]), max(hi, ticks[-1]), ticks


def value_range(lo: float, hi: float) -> Tuple[float, float]:
    """``[lo, hi]`` of the finite values, widened around a value that is flat (to 12 digits): by a tenth of
    its size, or by 1 around zero (and around the subnormals, where a tenth is lost to rounding)."""
    scale = max(abs(lo), abs(hi))
    if hi / 2 - lo / 2 > scale * 1e-12:
        return lo, hi
    pad = scale * 0.1
    if not (lo - pad < lo and hi + pad > hi):
        pad = 1.0
    return max(lo - pad, -_BIG), min(hi + pad, _BIG)


def _xs(points: Sequence[Point]) -> List[float]:
    """Each point's step as a float: a missing one follows the previous point's; one beyond the floats
    (an int of hundreds of digits) is infinite, and left out by the caller."""
    out: List[float] = []
    for step, _value in points:
        if step is None:
            x = out[-1] + 1 if out else 0.0
        else:
            try:
                x = float(step)
            except OverflowError:
                x = math.inf
        out.append(x)
    return out


def best_of(points: Sequence[Point], goal: Optional[str]) -> Optional[Tuple[int, float]]:
    """The index and value of the best point by ``goal`` (``"min"``/``"max"``; the first if tied; NaN
    never), or None without a goal or a number."""
    if goal not in ("min", "max"):
        return None
    found: Optional[Tuple[int, float]] = None
    for i, (_step, v) in enumerate(points):
        if math.isnan(v):
            continue
        if found is None or (v < found[1] if goal == "min" else v > found[1]):
            found = (i, v)
    return found


def _text(x: float, y: float, body: str, anchor: str = "start", fill: str = "", weight: str = "") -> str:
    color = f' fill="{fill}"' if fill else ""
    bold = f' font-weight="{weight}"' if weight else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{color}{bold}>{body}</text>'


def _step_text(points: Sequence[Point], i: int) -> str:
    step = points[i][0]
    return f" @ {step}" if step is not None and len(str(step)) <= 12 else ""


def _drawable(points: Sequence[Point], max_points: int) -> Tuple[List[Point], List[float]]:
    """``points`` downsampled to ``max_points`` and their x positions, without points whose x is not finite."""
    pts = downsample(list(points), max_points, _value)
    xs = _xs(pts)
    keep = [i for i, x in enumerate(xs) if math.isfinite(x)]
    return [pts[i] for i in keep], [xs[i] for i in keep]


def _title(key: str) -> str:
    return key if len(key) <= MAX_KEY_CHARS else key[: MAX_KEY_CHARS - 1] + "\u2026"


def _frame(
    finite: Sequence[float], xs: Sequence[float], box: Tuple[float, float, float, float], x_count: int
) -> Tuple[List[float], List[float], Callable[[float], float], Callable[[float], float]]:
    """A plot's scales in ``box`` (left, top, right, bottom): the y ticks over the ``finite`` values, about
    ``x_count`` integer x ticks over ``xs`` (one, centred, when all are at one x), and the maps from a step
    and a value to pixels. Halves are compared, so the largest floats do not overflow."""
    left, top, right, bottom = box
    lo, hi, yticks = nice_scale(*value_range(min(finite), max(finite)))
    x_lo, x_hi = min(xs), max(xs)
    if x_hi / 2 - x_lo / 2 > 0:
        x_lo, x_hi, xticks = nice_scale(x_lo, x_hi, x_count, integer=True)
    else:
        xticks = [x_lo]
    y_half, x_half = hi / 2 - lo / 2, x_hi / 2 - x_lo / 2

    def px(x: float) -> float:
        return left + (right - left) / 2 if not x_half > 0 else left + (x / 2 - x_lo / 2) / x_half * (right - left)

    def py(v: float) -> float:
        return bottom - (v / 2 - lo / 2) / y_half * (bottom - top)

    return yticks, xticks, px, py


def chart_svg(key: str, points: Sequence[Point], goal: Optional[str] = None) -> str:
    """The SVG document of ``key``'s chart (see the module docstring); a chart that says "no values yet"
    for an empty series."""
    pts, xs = _drawable(points, MAX_POINTS)
    left, top, bottom, right = float(_LEFT), float(_TOP), float(_TOP + PLOT_H), float(_LEFT + PLOT_W)
    parts = [_text(4, 12, html.escape(_title(key)), weight="bold", fill=LINE_COLOR)]
    finite = [v for _s, v in pts if math.isfinite(v)]
    if pts:
        last = len(pts) - 1
        parts.append(_text(4, 26, f"last {format_number(pts[last][1])}{_step_text(pts, last)}"))
    best = best_of(pts, goal)
    if best is not None:
        label = f"{goal} {format_number(best[1])}{_step_text(pts, best[0])}"
        parts.append(_text(WIDTH - 4, 26, label, anchor="end", fill=BEST_COLOR))
    if not finite:
        parts.append(f'<rect x="{left}" y="{top}" width="{PLOT_W}" height="{PLOT_H}" fill="none"'
                     f' stroke="{AXIS_COLOR}" stroke-opacity="0.4"/>')  # fmt: skip
        parts.append(_text(left + PLOT_W / 2, top + PLOT_H / 2 + 4, "no finite value yet" if pts else "no values yet",
                           anchor="middle"))  # fmt: skip
        return _document(parts)
    yticks, xticks, px, py = _frame(finite, xs, (left, top, right, bottom), 4)
    _axes(parts, (left, top, right, bottom), yticks, xticks, px, py)
    bad = _line(parts, xs, pts, px, py, LINE_COLOR)
    if bad:
        ticks = "".join(f"M{x:.1f} {top}v5" for x in sorted(set(bad)))
        parts.append(f'<path d="{ticks}" stroke="{BAD_COLOR}" stroke-width="1.5" fill="none"/>')
    if best is not None and math.isfinite(best[1]):
        parts.append(f'<circle cx="{px(xs[best[0]]):.1f}" cy="{py(best[1]):.1f}" r="3" fill="{BEST_COLOR}"/>')
    if math.isfinite(pts[-1][1]):
        parts.append(f'<circle cx="{px(xs[-1]):.1f}" cy="{py(pts[-1][1]):.1f}" r="2.5" fill="{LINE_COLOR}"/>')
    return _document(parts)


def _axes(parts: List[str], box: Tuple[float, float, float, float], yticks: Sequence[float],
          xticks: Sequence[float], px: Callable[[float], float], py: Callable[[float], float]) -> None:  # fmt: skip
    """Draws the grid and the axes into ``parts``, each tick labelled (``box``: the plot's left, top, right,
    bottom)."""
    left, top, right, bottom = box
    for tick, label in zip(yticks, tick_labels(yticks)):
        y = py(tick)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{AXIS_COLOR}"'
                     ' stroke-opacity="0.25" stroke-width="1"/>')  # fmt: skip
        parts.append(_text(left - 4, y + 3.5, label, anchor="end"))
    for tick, label in zip(xticks, tick_labels(xticks)):
        x = px(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 3}" stroke="{AXIS_COLOR}"/>')
        parts.append(_text(x, bottom + 13, label, anchor="middle"))
    parts.append(f'<polyline fill="none" stroke="{AXIS_COLOR}" stroke-width="1" points="{left},{top}'
                 f' {left},{bottom} {right},{bottom}"/>')  # fmt: skip


def _line(parts: List[str], xs: Sequence[float], pts: Sequence[Point], px: Callable[[float], float],
          py: Callable[[float], float], color: str) -> List[float]:  # fmt: skip
    """Draws one series into ``parts``: a gap at each non-finite value, a new line where the step goes back
    (a restarted replica), a dot for a lone point. Returns the x of each non-finite value (for the caller's
    marks)."""
    segments: List[List[Tuple[float, float]]] = [[]]
    bad: List[float] = []
    previous = -math.inf
    for x, (_step, v) in zip(xs, pts):
        if x < previous and segments[-1]:
            segments.append([])
        previous = x
        if math.isfinite(v):
            segments[-1].append((px(x), py(v)))
        else:
            bad.append(px(x))
            if segments[-1]:
                segments.append([])
    for seg in segments:
        if len(seg) > 1:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" stroke-linejoin="round"'
                         f' points="{coords}"/>')  # fmt: skip
        elif seg:
            parts.append(f'<circle cx="{seg[0][0]:.1f}" cy="{seg[0][1]:.1f}" r="1.5" fill="{color}"/>')
    return bad


def _document(parts: List[str], width: int = WIDTH, height: int = HEIGHT) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        f' font-family="sans-serif" font-size="10" fill="{AXIS_COLOR}">{"".join(parts)}</svg>'
    )


def _value(point: Point) -> float:
    return point[1]


def chart_alt(key: str, points: Sequence[Point], goal: Optional[str] = None, count: Optional[int] = None) -> str:
    """The chart in words (unescaped): the key, how many points (``count``: how many were logged, when
    ``points`` are what is left of them) over which steps, the last and the best."""
    if not points:
        return f"{key}: no values yet"
    steps = [s for s, _v in points if s is not None]
    span = f" over steps {min(steps)} to {max(steps)}" if steps else ""
    text = f"{key}: {len(points) if count is None else count} points{span}, last {format_number(points[-1][1])}"
    best = best_of(points, goal)
    if best is not None:
        text += f", {goal} {format_number(best[1])}{_step_text(points, best[0])}"
    return text


def chart_img(key: str, points: Sequence[Point], goal: Optional[str] = None, count: Optional[int] = None) -> str:
    """The chart as an ``<img>`` with a ``data:`` URI (see the module docstring); its ``alt`` and ``title``
    say it in words (:func:`chart_alt`)."""
    data = base64.b64encode(chart_svg(key, points, goal).encode()).decode()
    words = html.escape(chart_alt(key, points, goal, count), quote=True)
    return (
        f'<img class="jsched-metric-chart" src="data:image/svg+xml;base64,{data}" width="{WIDTH}"'
        f' height="{HEIGHT}" alt="{words}" title="{words}" data-key="{html.escape(key, quote=True)}"'
        ' style="display:inline-block;margin:2px 6px 2px 0;max-width:100%">'
    )


# -- one metric of several runs: a sweep's chart ---------------------------------------------------------------
RUNS_WIDTH, RUNS_HEIGHT = 560, 240
_RUNS_LEFT, _RUNS_RIGHT, _RUNS_TOP, _RUNS_BOTTOM = 52, 36, 34, 18
"""Room around the plot of :func:`runs_chart_svg`: on the right, for the runs' names at the lines' ends."""
RUNS_MAX_POINTS = 4000
"""Points drawn in one runs chart at most, shared by its series (each keeps at least ``MIN_SERIES_POINTS``)."""
MIN_SERIES_POINTS = 50
RUN_COLORS = ("#208ffb", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
              "#bcbd22", "#7f7f7f")  # fmt: skip
"""A run's colour: its place in the series, cycling (so run 1 and run 11 share one; their names tell them
apart at the lines' ends)."""
RunSeries = Tuple[str, Sequence[Point]]
"""A named series: ``("3", points)``; the name is what the chart writes at the line's end."""


def run_color(i: int) -> str:
    return RUN_COLORS[i % len(RUN_COLORS)]


def best_of_runs(series: Sequence[RunSeries], goal: Optional[str]) -> Optional[Tuple[int, int, float]]:
    """The best point of all series by ``goal`` as ``(series index, point index, value)`` (the first if
    tied; NaN never), or None without a goal or a number."""
    found: Optional[Tuple[int, int, float]] = None
    for s, (_name, points) in enumerate(series):
        best = best_of(points, goal)
        if best is not None and (found is None or (best[1] < found[2] if goal == "min" else best[1] > found[2])):
            found = (s, best[0], best[1])
    return found


Label = Tuple[float, float, int]


def _spread(labels: List[Label], gap: float, low: float, high: float) -> List[Label]:
    """Labels ``(x, y, i)`` moved down where two near the same x would overlap (``gap`` apart at least),
    kept within ``[low, high]``."""
    out: List[Label] = []
    for x, y, i in sorted(labels, key=lambda t: t[1]):  # downwards: each below its upper neighbour
        near = [o for o in out if abs(o[0] - x) < 24]
        if near and y - near[-1][1] < gap:
            y = near[-1][1] + gap
        out.append((x, max(y, low), i))
    for k in range(len(out) - 1, -1, -1):  # then upwards from the bottom, for those pushed past it
        x, y, i = out[k]
        below = [o for o in out[k + 1 :] if abs(o[0] - x) < 24]
        limit = min([high] + [o[1] - gap for o in below])
        out[k] = (x, min(y, limit), i)
    return out


def runs_chart_svg(key: str, series: Sequence[RunSeries], goal: Optional[str] = None,
                   colors: Optional[Sequence[int]] = None) -> str:  # fmt: skip
    """The SVG document of ``key``'s chart over several runs: one line per series in its colour
    (:func:`run_color` of its place, or of its entry in ``colors``: a run's number keeps its colour however
    many runs logged before it, so a table can show the same colour), the series' name at the line's end,
    the best point of all by ``goal`` (a green ring, and ``min 0.21 (run 3)`` over the plot). Each series is
    cut to its share of :data:`RUNS_MAX_POINTS` (each bucket's min and max kept); NaN and the infinities are
    gaps, a step that goes back starts a new line, as in :func:`chart_svg`."""
    share = max(MIN_SERIES_POINTS, RUNS_MAX_POINTS // max(1, len(series)))
    drawn: List[Tuple[str, List[Point], List[float]]] = []
    for name, points in series:
        drawn.append((name, *_drawable(points, share)))
    width, height = RUNS_WIDTH, RUNS_HEIGHT
    left, top = float(_RUNS_LEFT), float(_RUNS_TOP)
    right, bottom = float(width - _RUNS_RIGHT), float(height - _RUNS_BOTTOM)
    plot_w, plot_h = right - left, bottom - top
    parts = [_text(4, 12, html.escape(_title(key)), weight="bold", fill=LINE_COLOR),
             _text(4, 26, f"{sum(1 for _n, p, _x in drawn if p)} of {len(drawn)} runs logged it")]  # fmt: skip
    best = best_of_runs([(n, p) for n, p, _x in drawn], goal)
    if best is not None:
        name = drawn[best[0]][0]
        label = f"{goal} {format_number(best[2])}{_step_text(drawn[best[0]][1], best[1])} (run {html.escape(name)})"
        parts.append(_text(width - 4, 26, label, anchor="end", fill=BEST_COLOR))
    finite = [v for _n, pts, _x in drawn for _s, v in pts if math.isfinite(v)]
    if not finite:
        parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none"'
                     f' stroke="{AXIS_COLOR}" stroke-opacity="0.4"/>')  # fmt: skip
        empty = "no finite value yet" if any(p for _n, p, _x in drawn) else "no values yet"
        parts.append(_text(left + plot_w / 2, top + plot_h / 2 + 4, empty, anchor="middle"))
        return _document(parts, width, height)
    all_x = [x for _n, _p, xs in drawn for x in xs]
    yticks, xticks, px, py = _frame(finite, all_x, (left, top, right, bottom), 5)
    _axes(parts, (left, top, right, bottom), yticks, xticks, px, py)
    def color(i: int) -> str:
        return run_color(colors[i] if colors is not None and i < len(colors) else i)

    bad: List[float] = []
    ends: List[Tuple[float, float, int]] = []
    for i, (_name, pts, xs) in enumerate(drawn):
        bad += _line(parts, xs, pts, px, py, color(i))
        last = next((j for j in range(len(pts) - 1, -1, -1) if math.isfinite(pts[j][1])), None)
        if last is not None:
            ends.append((px(xs[last]), py(pts[last][1]), i))
    if bad:
        ticks = "".join(f"M{x:.1f} {top}v5" for x in sorted(set(bad)))
        parts.append(f'<path d="{ticks}" stroke="{BAD_COLOR}" stroke-width="1.5" fill="none"/>')
    if best is not None and math.isfinite(best[2]):
        s, j = best[0], best[1]
        parts.append(f'<circle cx="{px(drawn[s][2][j]):.1f}" cy="{py(best[2]):.1f}" r="4" fill="none"'
                     f' stroke="{BEST_COLOR}" stroke-width="1.5"/>')  # fmt: skip
    for x, y, i in ends:
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="{color(i)}"/>')
    for x, y, i in _spread(ends, 10.0, top + 3, bottom):
        name = drawn[i][0]
        name = name if len(name) <= 6 else name[:5] + "\u2026"
        parts.append(_text(x + 4, y + 3.5, html.escape(name), fill=color(i), weight="bold"))
    return _document(parts, width, height)


def runs_chart_alt(key: str, series: Sequence[RunSeries], goal: Optional[str] = None) -> str:
    """The runs chart in words (unescaped): the key, how many runs logged it, the best by ``goal``."""
    logged = sum(1 for _n, points in series if points)
    text = f"{key} by run: {logged} of {len(series)} runs logged it"
    best = best_of_runs(series, goal)
    if best is not None:
        text += f", {goal} {format_number(best[2])} (run {series[best[0]][0]})"
    return text


def runs_chart_img(key: str, series: Sequence[RunSeries], goal: Optional[str] = None,
                   colors: Optional[Sequence[int]] = None) -> str:  # fmt: skip
    """:func:`runs_chart_svg` as an ``<img>`` with a ``data:`` URI (kept by a saved notebook, as
    :func:`chart_img`)."""
    data = base64.b64encode(runs_chart_svg(key, series, goal, colors).encode()).decode()
    words = html.escape(runs_chart_alt(key, series, goal), quote=True)
    return (
        f'<img class="jsched-runs-chart" src="data:image/svg+xml;base64,{data}" width="{RUNS_WIDTH}"'
        f' height="{RUNS_HEIGHT}" alt="{words}" title="{words}" data-key="{html.escape(key, quote=True)}"'
        ' style="display:block;margin:4px 0;max-width:100%">'
    )
