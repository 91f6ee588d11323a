"""A metric's chart (``frontend.jobs.metric_charts``): whatever a run logs -- NaN, the infinities, one point,
a constant, the largest and the smallest floats, huge steps, steps that go back -- makes a valid SVG document
with at most ``MAX_POINTS`` points drawn, and the labels say the last value and the best by goal."""

from __future__ import annotations

import base64
import html
import math
import re
import xml.etree.ElementTree as ET
from typing import List, Optional, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.frontend.jobs.metric_charts import MAX_POINTS, chart_img, chart_svg, nice_scale

SVG = "{http://www.w3.org/2000/svg}"
Point = Tuple[Optional[int], float]

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-300, max_value=1e-300),  # subnormals
    st.sampled_from([0.0, 1.0, -1.0, 1.7e308, -1.7e308, 5e-324]),
)
steps = st.one_of(st.none(), st.integers(0, 2**70), st.just(10**400))  # 10**400: beyond the floats
series = st.lists(st.tuples(steps, values), max_size=60) | st.lists(values, max_size=3000).map(
    lambda vs: [(i, v) for i, v in enumerate(vs)]
)


def drawn(root: ET.Element) -> int:
    """Points drawn: the vertices of every line and every dot."""
    n = 0
    for el in root.iter():
        if el.tag == SVG + "polyline" and el.get("stroke") != "#8c8c8c":
            n += len(el.get("points", "").split())
        elif el.tag == SVG + "circle":
            n += 1
    return n


def numbers(root: ET.Element) -> List[float]:
    """Every coordinate in the document (all must be finite)."""
    out: List[float] = []
    for el in root.iter():
        for name in ("x", "y", "x1", "y1", "x2", "y2", "cx", "cy"):
            if el.get(name) is not None:
                out.append(float(el.get(name, "")))
        for coord in re.findall(r"-?[\d.]+(?:e[-+]?\d+)?", el.get("points", "") + " " + el.get("d", "")):
            out.append(float(coord))
    return out


def texts(root: ET.Element) -> List[str]:
    return [el.text or "" for el in root.iter() if el.tag == SVG + "text"]


@settings(max_examples=300, deadline=None)
@given(series, st.sampled_from([None, "min", "max"]))
def test_any_series_makes_a_valid_bounded_chart(points: List[Point], goal: Optional[str]) -> None:
    root = ET.fromstring(chart_svg("train/loss", points, goal))
    assert root.tag == SVG + "svg"
    assert drawn(root) <= MAX_POINTS + 2  # the line's points, and the last and the best as dots
    assert all(math.isfinite(x) and abs(x) < 10_000 for x in numbers(root)), "every coordinate inside the image"
    assert texts(root)[0] == "train/loss"


def test_labels_ticks_and_gaps() -> None:
    points: List[Point] = [(i, 1.0 / (i + 1)) for i in range(50)]
    points[10] = (10, math.nan)
    root = ET.fromstring(chart_svg("loss", points, "min"))
    labels = texts(root)
    assert "last 0.02 @ 49" in labels and "min 0.02 @ 49" in labels
    assert {"0", "0.5", "1"} <= set(labels) and {"0", "20", "40"} <= set(labels)  # round ticks on both axes
    lines = [el for el in root.iter() if el.tag == SVG + "polyline" and el.get("stroke") != "#8c8c8c"]
    assert [len(el.get("points", "").split()) for el in lines] == [10, 39], "NaN is a gap, not a crash"
    assert [el for el in root.iter() if el.tag == SVG + "path"], "and marked on top of the plot"
    # a restarted replica logs from step 0 again: a second line, not a stroke back across the chart
    again = ET.fromstring(chart_svg("acc", [(i % 5, float(i)) for i in range(10)], "max"))
    assert len([el for el in again.iter() if el.tag == SVG + "polyline" and el.get("stroke") != "#8c8c8c"]) == 2
    assert "max 9 @ 4" in texts(again)


def test_one_point_a_constant_and_no_finite_value() -> None:
    one = ET.fromstring(chart_svg("k", [(3, 2.5)]))
    assert "last 2.5 @ 3" in texts(one) and len([el for el in one.iter() if el.tag == SVG + "circle"]) == 2
    flat = texts(ET.fromstring(chart_svg("k", [(i, 7.0) for i in range(9)])))
    assert "7" in flat and len([t for t in flat if re.fullmatch(r"[\d.]+", t)]) >= 3  # a scale around the value
    assert "no finite value yet" in texts(ET.fromstring(chart_svg("k", [(0, math.nan), (1, math.inf)], "min")))
    assert "no values yet" in texts(ET.fromstring(chart_svg("k", [])))


def test_a_long_series_is_cut_keeping_its_spike() -> None:
    points: List[Point] = [(i, 1.0) for i in range(50_000)]
    points[31_337] = (31_337, 1e6)
    root = ET.fromstring(chart_svg("loss", points, "max"))
    assert drawn(root) <= MAX_POINTS + 2 and "max 1e+06 @ 31337" in texts(root)
    assert "1e+06" in texts(root) or "1000000" in " ".join(texts(root))  # the spike sets the scale


def test_nice_scale_covers_the_data_with_round_ticks() -> None:
    lo, hi, ticks = nice_scale(0.013, 0.97)
    assert (lo, hi) == (0.0, 1.0) and ticks == [0.0, 0.5, 1.0]
    assert nice_scale(0, 49, integer=True)[2] == [0, 20, 40]
    lo, hi, ticks = nice_scale(-1.7e308, 1.7e308)
    assert math.isfinite(lo) and math.isfinite(hi) and all(math.isfinite(t) for t in ticks)


def test_the_key_is_escaped_in_the_svg_and_in_the_img() -> None:
    key = 'a<b>&"c'  # not a key track accepts, but a hand-made file could hold anything
    svg = chart_svg(key, [(0, 1.0), (1, 2.0)])
    assert texts(ET.fromstring(svg))[0] == key and "<b>" not in svg
    img = chart_img(key, [(0, 1.0), (1, 2.0)], "max")
    assert "&quot;c" in img and "&lt;b&gt;" in img
    assert "<b>" not in img and html.unescape(re.search(r'alt="([^"]*)"', img).group(1)).startswith(key)  # type: ignore[union-attr]
    src = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', img)
    assert src and ET.fromstring(base64.b64decode(src.group(1)))
