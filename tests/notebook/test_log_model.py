"""The multiplexed log model behind the log pane (pure: no widgets, no threads)."""

from __future__ import annotations

from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.frontend.logview.log_model import ALL, Source
from jupyter_sched.notebook.panes.log_model import HtmlLogMux as LogMux

KEEP = 50


def items_of(n: int) -> List[str]:
    """Lines with a colour that spans lines, progress frames, and a trailing partial line."""
    out = []
    for i in range(n):
        if i % 7 == 0:
            out.append(f"\x1b[3{i % 8}mcoloured {i}\n")  # left on: colours the following lines
        elif i % 11 == 0:
            out.append(f"\x1b[0mreset {i}\n")
        elif i % 5 == 0:
            out += [f"bar {i} 10%\r", f"bar {i} 99%\r", f"bar {i} done\n"]
        else:
            out.append(f"plain {i} <&>\n")
    return out + ["partial \x1b[1mbold"]


def fed(items: List[str], cuts: List[int]) -> LogMux:
    mux = LogMux([Source("w", 0, "stdout")], keep_lines=KEEP, max_line_chars=100)
    start = 0
    for cut in sorted(set(cuts)) + [len(items)]:
        for item in items[start:cut]:
            mux.push(0, item)
        mux.drain()
        start = max(start, cut)
    return mux


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 400), cuts=st.lists(st.integers(0, 450), max_size=6))
def test_batching_never_changes_what_is_shown(n: int, cuts: List[int]) -> None:
    items = items_of(n)
    one_by_one = fed(items, list(range(len(items))))
    batched = fed(items, cuts)  # big runs skim lines that can never be shown
    assert batched.to_html(ALL, KEEP) == one_by_one.to_html(ALL, KEEP)
    assert batched.total() == one_by_one.total() == sum(item.count("\n") for item in items)
    assert batched.rows(ALL, KEEP)[1] == one_by_one.rows(ALL, KEEP)[1]


def test_a_flood_keeps_only_what_can_be_shown() -> None:
    items = items_of(5000)
    mux = fed(items, [])
    assert mux.skipped[0] > 4000 and len(mux._terms[0].lines) == KEEP
    html, hidden = mux.to_html(ALL, 20)
    assert hidden == mux.total() - 19 and "partial " in html  # 19 committed lines and the open line


def test_sources_interleave_in_arrival_order_with_gutters() -> None:
    mux = LogMux([Source("a", 0, "stdout"), Source("a", 0, "stderr"), Source("b", 1, "stdout")])
    mux.push(0, "one\n")
    mux.push(2, "two\n")
    mux.push(1, "three\n")
    mux.push(0, "four\n")
    mux.push(2, "open line")
    mux.drain()
    assert mux.plain(ALL) == ["a/0 | one", "b/1 | two", "a/0 ! three", "a/0 | four", "b/1 | open line"]
    assert mux.plain("a/0") == ["a/0 | one", "a/0 ! three", "a/0 | four"]
    assert mux.plain("b/1") == ["two", "open line"]  # one source: no gutter
    assert mux.views() == ["all", "a/0", "b/1"]
    rows, hidden = mux.rows(ALL, 2)
    assert [line.text for _, line in rows] == ["four", "open line"] and hidden == 3
    html, _ = mux.to_html(ALL)
    assert "a/0 ! </span>three" in html and "rgba(231,92,88" in html


def test_end_records_notices() -> None:
    mux = LogMux([Source("a", 0, "stdout")])
    assert not mux.all_ended
    mux.end(0, "cannot read: gone")
    assert mux.all_ended and mux.notices == ["a/0 stdout: cannot read: gone"]


def test_stderr_progress_frames_are_marked_but_not_tinted() -> None:
    """tqdm writes to stderr: its bar keeps the ``!`` marker but not the error tint; a real error line keeps
    both. The open (still redrawing) bar is not tinted either."""
    from jupyter_sched.notebook.panes.log_model import STDERR_BG as _STDERR_BG

    mux = LogMux([Source("train", 0, "stdout"), Source("train", 0, "stderr")])
    mux.feed_items(1, ["\repoch 1:   0%|", "\repoch 1:  50%|#####", "\repoch 1: 100%|##########\n"])
    mux.feed_items(0, ["epoch 1 done\n"])
    mux.feed_items(1, ["KeyError: 'y'\n", "\repoch 2:  10%|#", "\repoch 2:  20%|##"])
    html, _ = mux.to_html(ALL)
    rows = html.split("\n")
    assert len(rows) == 4 and all("train/0 !" in rows[i] for i in (0, 2, 3)) and "train/0 |" in rows[1]
    assert "100%" in rows[0] and _STDERR_BG not in rows[0]
    assert "KeyError" in rows[2] and _STDERR_BG in rows[2]
    assert "20%" in rows[3] and _STDERR_BG not in rows[3]
    assert [line for line in mux.plain(ALL)][0].startswith("train/0 ! epoch 1: 100%")


def test_held_items_are_shown_in_the_order_they_were_written() -> None:
    """A live pane holds items briefly and merges its sources by write time: the stdout line that arrived
    first but was written after the stderr bar is shown below it, open lines included."""
    mux = LogMux([Source("train", 0, "stdout"), Source("train", 0, "stderr")])
    mux.hold(60.0)  # only the watermark or the end of a source releases anything here
    mux.push(0, "epoch 1 done\n", ts=12.0)
    mux.drain()
    assert mux.plain(ALL) == []  # stderr may still deliver something older
    mux.push(1, "\repoch 1: 100%", ts=10.0)
    mux.push(1, "\n", ts=10.5)
    mux.drain()
    assert mux.plain(ALL) == ["train/0 ! epoch 1: 100%"]
    mux.push(1, "\repoch 2: 100%", ts=13.0)  # stderr is past 12.0: the stdout line is due
    mux.push(1, "\n", ts=13.1)
    mux.drain()
    assert mux.plain(ALL) == ["train/0 ! epoch 1: 100%", "train/0 | epoch 1 done"]
    mux.push(0, "epoch 2 done\n", ts=14.0)
    mux.end(1)  # an ended source holds nothing back, and ends once its held items are shown
    assert mux.ended == [False, True] and not mux.all_ended
    assert mux.plain(ALL) == [
        "train/0 ! epoch 1: 100%", "train/0 | epoch 1 done", "train/0 ! epoch 2: 100%", "train/0 | epoch 2 done",
    ]  # fmt: skip
    mux.end(0)
    assert mux.all_ended


def test_a_line_whose_end_comes_late_keeps_the_place_of_its_text() -> None:
    """Issue 26: a progress bar's last frame, then its "\\n" after a warning on stderr had been read (the
    streams are read apart: docker delivers them in arrival order) showed the warning above "100%". The
    line was written when its text was: it comes first, in the live pane and in the record alike."""
    mux = LogMux([Source("python", 0, "stdout"), Source("python", 0, "stderr")])
    for frame in ("\r10%", "\r50%", "\r100%"):
        mux.push(0, frame, 1.0)
    mux.drain()
    assert mux.plain() == ["python/0 | 100%"]
    assert mux.line_count() == 1  # an open line is a line on screen, and is counted
    mux.push(1, "warning: docker\n", 2.0)
    mux.drain()
    assert mux.plain() == ["python/0 ! warning: docker", "python/0 | 100%"]  # the open bar stays at the bottom
    mux.push(0, "\n", 3.0)
    mux.push(0, "done\n", 3.0)
    mux.drain()
    assert mux.plain() == ["python/0 | 100%", "python/0 ! warning: docker", "python/0 | done"]
    assert mux.line_count() == 3 == mux.total()
    # text written after the warning on the same line still puts the line after it
    late = LogMux([Source("w", 0, "stdout"), Source("w", 0, "stderr")])
    late.push(0, "start ", 1.0)
    late.drain()
    late.push(1, "warn\n", 2.0)
    late.drain()
    late.push(0, "end\n", 3.0)
    late.drain()
    assert late.plain() == ["w/0 ! warn", "w/0 | start end"]
