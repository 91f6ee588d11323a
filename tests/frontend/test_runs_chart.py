"""A sweep's chart of one metric with a line per run (``frontend.jobs.metric_charts.runs_chart_svg``): any
runs' series -- NaN, the infinities, one point, huge steps, steps that go back, runs that logged nothing --
make a valid SVG document with finite coordinates and a bounded number of points, each run drawn in its own
colour with its name at its line's end, and the best point of all runs named by the goal."""

from __future__ import annotations

import base64
import html
import math
import xml.etree.ElementTree as ET
from typing import List, Optional, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.frontend.jobs.metric_charts import (
    MIN_SERIES_POINTS,
    RUNS_MAX_POINTS,
    best_of_runs,
    run_color,
    runs_chart_img,
    runs_chart_svg,
)
from tests.frontend.test_metric_charts import SVG, drawn, numbers, steps, texts, values

Point = Tuple[Optional[int], float]

one_run = st.lists(st.tuples(steps, values), max_size=40) | st.lists(values, max_size=1500).map(
    lambda vs: [(i, v) for i, v in enumerate(vs)]
)
runs = st.lists(one_run, max_size=12)


def _series(points: List[List[Point]]) -> List[Tuple[str, List[Point]]]:
    return [(str(i), p) for i, p in enumerate(points)]


@settings(max_examples=200, deadline=None)
@given(runs, st.sampled_from([None, "min", "max"]))
def test_any_runs_make_a_valid_bounded_chart(points: List[List[Point]], goal: Optional[str]) -> None:
    root = ET.fromstring(runs_chart_svg("loss", _series(points), goal))
    assert all(math.isfinite(n) for n in numbers(root))
    budget = max(MIN_SERIES_POINTS, RUNS_MAX_POINTS // max(1, len(points)))
    # each run's line(s) and its end dot, the best ring: never more than each run's share
    assert drawn(root) <= len(points) * (budget + 1) + 1


def test_each_run_has_its_colour_and_its_name_at_the_line_end() -> None:
    series = [("0", [(s, 1.0 / (1 + s)) for s in range(10)]), ("1", [(s, 2.0 / (1 + s)) for s in range(6)]),
              ("7", [])]  # fmt: skip
    root = ET.fromstring(runs_chart_svg("loss", series, "min"))
    lines = [el for el in root.iter() if el.tag == SVG + "polyline" and el.get("stroke") != "#8c8c8c"]
    assert [el.get("stroke") for el in lines] == [run_color(0), run_color(1)], "one line per run that logged"
    names = {el.text: el.get("fill") for el in root.iter() if el.tag == SVG + "text" and el.text in ("0", "1", "7")}
    assert names.get("0") == run_color(0) and names.get("1") == run_color(1), names
    assert "7" not in names, "a run that logged nothing has no line and no name"
    # run 1 stops at step 5: its name is left of run 0's, which ends at step 9
    x = {el.text: float(el.get("x", "0")) for el in root.iter() if el.tag == SVG + "text" and el.text in ("0", "1")}
    assert x["1"] < x["0"]
    words = texts(root)
    assert "2 of 3 runs logged it" in words
    assert "min 0.1 @ 9 (run 0)" in words, words


def test_a_run_keeps_its_colour_given_by_its_number() -> None:
    series = [("3", [(0, 1.0), (1, 0.5)]), ("12", [(0, 2.0), (1, 1.0)])]
    root = ET.fromstring(runs_chart_svg("loss", series, "min", colors=[3, 12]))
    lines = [el.get("stroke") for el in root.iter() if el.tag == SVG + "polyline" and el.get("stroke") != "#8c8c8c"]
    assert lines == [run_color(3), run_color(12)] and run_color(12) == run_color(2)


def test_the_best_is_of_all_runs_by_goal_and_nan_is_never_it() -> None:
    series = [("a", [(0, 3.0), (1, math.nan)]), ("b", [(0, 5.0), (1, 1.0)]), ("c", [(0, math.inf)])]
    assert best_of_runs(series, "min") == (1, 1, 1.0)
    assert best_of_runs(series, "max") == (2, 0, math.inf)
    assert best_of_runs(series, None) is None
    assert best_of_runs([("a", [(0, math.nan)])], "min") is None
    root = ET.fromstring(runs_chart_svg("acc", series, "max"))
    assert "max Infinity @ 0 (run c)" in texts(root), "an infinity is labelled (it has no dot)"


def test_no_runs_or_no_finite_value_says_so() -> None:
    assert "no values yet" in texts(ET.fromstring(runs_chart_svg("loss", [])))
    assert "no values yet" in texts(ET.fromstring(runs_chart_svg("loss", [("0", [])])))
    assert "no finite value yet" in texts(ET.fromstring(runs_chart_svg("loss", [("0", [(0, math.nan)])], "min")))


def test_names_near_each_other_do_not_overlap() -> None:
    series = [(str(i), [(s, 1.0) for s in range(5)]) for i in range(6)]  # six lines on one another
    root = ET.fromstring(runs_chart_svg("loss", series, "min"))
    colours = {run_color(i) for i in range(6)}
    ys = sorted(float(el.get("y", "0")) for el in root.iter()
                if el.tag == SVG + "text" and el.get("fill") in colours and el.text in set("012345"))  # fmt: skip
    assert len(ys) == 6 and all(b - a >= 9.9 for a, b in zip(ys, ys[1:])), ys


def test_names_at_the_bottom_are_moved_up_not_onto_one_another() -> None:
    series = [(str(i), [(0, 1.0), (5, 0.0)]) for i in range(4)]  # four lines ending on the x axis
    root = ET.fromstring(runs_chart_svg("loss", series, "min"))
    colours = {run_color(i) for i in range(4)}
    ys = sorted(float(el.get("y", "0")) for el in root.iter()
                if el.tag == SVG + "text" and el.get("fill") in colours and el.text in set("0123"))  # fmt: skip
    assert len(ys) == 4 and all(b - a >= 9.9 for a, b in zip(ys, ys[1:])), ys


def test_the_key_and_the_names_are_escaped_in_the_svg_and_in_the_img() -> None:
    img = runs_chart_img('a<b>"&', [('<i>', [(0, 1.0), (1, 0.5)])], "min")
    assert 'alt="a&lt;b&gt;&quot;&amp; by run: 1 of 1 runs logged it, min 0.5 (run &lt;i&gt;)"' in img
    data = img.split("base64,", 1)[1].split('"', 1)[0]
    root = ET.fromstring(base64.b64decode(data).decode())  # parses: every text was escaped
    assert 'a<b>"&' in texts(root) and "<i>" in texts(root)
    assert html.unescape(img.split('data-key="', 1)[1].split('"', 1)[0]) == 'a<b>"&'
