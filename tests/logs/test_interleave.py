"""The write order of stdout and stderr, recovered from a combined log (pure)."""

from __future__ import annotations

import random
from typing import List

from hypothesis import given
from hypothesis import strategies as st

from jupyter_sched.logs import interleave


def test_runs_follow_the_combined_order() -> None:
    out, err = ["a\n", "b\n", "c\n"], ["E1\n", "E2\n"]
    combined = ["a\n", "E1\n", "E2\n", "b\n", "c\n"]
    assert interleave(combined, [out, err]) == [(0, ["a\n"]), (1, ["E1\n", "E2\n"]), (0, ["b\n", "c\n"])]


def test_progress_frames_are_items_like_lines() -> None:
    out, err = ["10%\r", "100%\r", "\n"], ["warn\n"]
    assert interleave(["10%\r", "warn\n", "100%\r", "\n"], [out, err]) == [
        (0, ["10%\r"]), (1, ["warn\n"]), (0, ["100%\r", "\n"]),
    ]  # fmt: skip


def test_not_an_interleaving_gives_up() -> None:
    out, err = ["progress 10%done\n"], ["warn\n"]
    spliced = ["progress 10%warn\n", "done\n"]  # both streams wrote partial lines at once
    assert interleave(spliced, [out, err]) is None
    assert interleave(["a\n"], [["a\n", "b\n"], []]) is None  # an item the combined log lacks
    assert interleave(["x\n", "a\n"], [["a\n"], []]) is None  # an item no stream has


def test_what_the_combined_log_has_beyond_the_parts_is_ignored() -> None:
    # the combined log is read after the streams: a running replica may have written more in between
    assert interleave(["a\n", "E\n", "b\n", "c\n"], [["a\n"], ["E\n"]]) == [(0, ["a\n"]), (1, ["E\n"])]


def test_empty() -> None:
    assert interleave([], [[], []]) == []


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 50)), max_size=60), st.integers(0, 10**6))
def test_any_interleaving_of_distinct_items_is_recovered(picks: List[tuple], seed: int) -> None:
    out: List[str] = []
    err: List[str] = []
    combined: List[str] = []
    for n, (to_err, value) in enumerate(picks):
        item = f"{'E' if to_err else 'O'}{n}:{value}\n"
        (err if to_err else out).append(item)
        combined.append(item)
    runs = interleave(combined, [out, err])
    assert runs is not None
    assert [item for _, run in runs for item in run] == combined
    assert [item for part, run in runs if part == 0 for item in run] == out
    assert [item for part, run in runs if part == 1 for item in run] == err
    random.Random(seed).shuffle(combined)
    shuffled = interleave(combined, [out, err])  # a shuffle is an interleaving only if it kept both orders
    if shuffled is not None:
        assert [item for part, run in shuffled if part == 0 for item in run] == out
        assert [item for part, run in shuffled if part == 1 for item in run] == err
