"""The downsampling of a metric series for a chart (``frontend.jobs.metrics.downsample``): never more than
``max_points``, the first and the last kept, and every bucket's min and max kept, whatever the series."""

from __future__ import annotations

import math
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.frontend.jobs.metrics import MIN_POINTS, bucket_bounds, downsample

Point = Tuple[int, float]
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5).map(float),  # many ties
)
series = st.lists(values, max_size=600).map(lambda vs: [(i, v) for i, v in enumerate(vs)])


def value(p: Point) -> float:
    return p[1]


@settings(max_examples=300, deadline=None)
@given(series, st.integers(MIN_POINTS, 80))
def test_bounded_first_last_and_each_bucket_min_max(points: List[Point], max_points: int) -> None:
    out = downsample(points, max_points, value)
    assert len(out) <= max_points
    assert [p[0] for p in out] == sorted({p[0] for p in out}), "kept in order, each once"
    if len(points) <= max_points:
        assert out == points
        return
    assert out[0] == points[0] and out[-1] == points[-1]
    kept = set(out)
    for start, end in bucket_bounds(len(points), max_points):
        bucket = [p for p in points[start:end] if not math.isnan(p[1])]
        if not bucket:
            assert points[start] in kept
            continue
        low, high = min(p[1] for p in bucket), max(p[1] for p in bucket)
        assert any(p in kept and p[1] == low for p in bucket), f"the min {low} of {start}:{end} is gone"
        assert any(p in kept and p[1] == high for p in bucket), f"the max {high} of {start}:{end} is gone"


@settings(max_examples=200, deadline=None)
@given(st.integers(MIN_POINTS + 1, 3000), st.integers(MIN_POINTS, 1000))
def test_buckets_cover_the_inside_without_gaps(n: int, max_points: int) -> None:
    bounds = bucket_bounds(n, max_points)
    if n <= max_points:
        assert bounds == []
        return
    assert bounds[0][0] == 1 and bounds[-1][1] == n - 1
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert all(end > start for start, end in bounds)


def test_a_spike_survives() -> None:
    points = [(i, 1.0) for i in range(10_000)]
    points[4321] = (4321, 1e9)
    points[777] = (777, -1e9)
    out = downsample(points, 100, value)
    assert (4321, 1e9) in out and (777, -1e9) in out and len(out) <= 100


def test_too_few_points_asked() -> None:
    with pytest.raises(ValueError, match="max_points=3: give at least 4"):
        downsample([(0, 1.0)], 3, value)
