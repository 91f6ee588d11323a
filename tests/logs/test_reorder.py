"""The live merge of timed streams (``logs.reorder``): time order, nothing lost, nothing held too long."""

from __future__ import annotations

from typing import Dict, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.logs.reorder import Reorder

W = 0.15


def test_two_busy_streams_release_without_waiting_for_the_window() -> None:
    r: Reorder[str] = Reorder(2, window=W)
    r.push(0, 1.0, "a", arrived=10.0)
    r.push(1, 2.0, "B", arrived=10.0)
    assert r.release(10.0) == [(1.0, 0, "a")]  # stream 1 is at 2.0: nothing before it can come from it
    r.push(0, 3.0, "c", arrived=10.01)
    assert r.release(10.01) == [(2.0, 1, "B")]
    r.end(1)
    assert r.release(10.01) == [(3.0, 0, "c")]  # an ended stream holds nothing back


def test_a_silent_stream_delays_the_other_by_the_window_at_most() -> None:
    r: Reorder[str] = Reorder(2, window=W)
    r.push(0, 5.0, "a", arrived=1.0)
    assert r.release(1.0 + W / 2) == []
    r.push(1, 4.0, "late but in time", arrived=1.0 + W / 2)
    assert r.release(1.0 + W) == [(4.0, 1, "late but in time"), (5.0, 0, "a")]


def test_the_hold_is_bounded_in_items() -> None:
    r: Reorder[int] = Reorder(2, window=60.0, max_held=10)
    for i in range(25):
        r.push(0, float(i), i, arrived=0.0)
    assert [item for _, _, item in r.release(0.0)] == list(range(15))
    assert r.held() == 10


@st.composite
def deliveries(draw: st.DrawFn) -> Tuple[List[List[Tuple[float, float]]], List[float]]:
    """Two streams of ``(written, arrived)``: written times sorted, each item arriving within the window
    after it was written, in order within its stream, in batches (equal arrival times); and the times the
    owner drains at."""
    streams = []
    for _ in range(2):
        n = draw(st.integers(0, 30))
        gaps = draw(st.lists(st.floats(0, 0.5), min_size=n, max_size=n))
        lags = draw(st.lists(st.floats(0, W), min_size=n, max_size=n))
        batch = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        t, last, items = 0.0, 0.0, []
        for gap, lag, same in zip(gaps, lags, batch):
            t += gap
            arrived = max(last, t + lag)
            if same and items:  # join the previous batch, if that still arrives within the window
                arrived = max(last, t) if max(last, t) <= t + W else arrived
            items.append((t, arrived))
            last = arrived
        streams.append(items)
    drains = sorted(draw(st.lists(st.floats(0, 20), max_size=40)))
    return streams, drains


@settings(max_examples=300, deadline=None)
@given(deliveries())
def test_any_arrival_comes_out_in_time_order_complete_and_not_held_past_the_window(case) -> None:  # type: ignore[no-untyped-def]
    streams, drains = case
    r: Reorder[Tuple[int, int]] = Reorder(2, window=W)
    arrivals = sorted((arrived, s, i) for s, items in enumerate(streams) for i, (_, arrived) in enumerate(items))
    end = max([a for a, _, _ in arrivals], default=0.0) + W
    out: List[Tuple[float, int, Tuple[int, int]]] = []
    released_at: Dict[Tuple[int, int], float] = {}
    pending = list(arrivals)
    times = sorted([*drains, end])
    for now in times:
        while pending and pending[0][0] <= now:
            arrived, s, i = pending.pop(0)
            r.push(s, streams[s][i][0], (s, i), arrived)
        for entry in r.release(now):
            out.append(entry)
            released_at[entry[2]] = now
    assert r.held() == 0  # once time has passed the window, nothing is held
    expected = [(s, i) for s, items in enumerate(streams) for i in range(len(items))]
    assert sorted(item for _, _, item in out) == sorted(expected)
    assert [ts for ts, _, _ in out] == sorted(ts for ts, _, _ in out)  # time order
    for (s, i), at in released_at.items():  # nothing waits for a drain later than the window needs
        due = streams[s][i][1] + W
        first_drain_after = min(d for d in times if d >= due)
        assert at <= first_drain_after
