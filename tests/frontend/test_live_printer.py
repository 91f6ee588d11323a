"""The live log footer on a terminal: what a VT100 screen (pyte) shows after the printer's output.

Each replica's unfinished line (a ``\\r`` progress frame or a partial line) is one footer row updated in
place; finished lines are printed above it once; at the end the footer's lines stay, whole.
"""

from __future__ import annotations

import io
from typing import List, Tuple

import pyte

from jupyter_sched.frontend.logview.live_printer import LivePrinter, fit

REPLICAS = [("train", 0), ("train", 1), ("eval", 0)]


def screen_after(chunks: List[str], columns: int = 60, rows: int = 12) -> List[str]:
    screen = pyte.Screen(columns, rows)
    stream = pyte.Stream(screen)
    for chunk in chunks:
        stream.feed(chunk.replace("\n", "\r\n"))  # what the terminal's line discipline does (onlcr)
    return [line.rstrip() for line in screen.display if line.strip()]


class Recorder(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: List[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def printer(columns: int = 60, color: bool = False) -> Tuple[LivePrinter, Recorder]:
    out = Recorder()
    return LivePrinter(out, REPLICAS, color=color, columns=lambda: columns), out


def test_interleaved_progress_bars_update_in_place_and_lines_print_once() -> None:
    live, out = printer()
    live.on_items([(("train", 0), "loading\n"), (("train", 1), "loading\n")])
    for step in range(1, 6):
        live.on_items([(r, f"\rstep {step}/5 {'#' * step}") for r in REPLICAS])
    assert screen_after(out.writes) == [
        "train/0 loading",
        "train/1 loading",
        "train/0 step 5/5 #####",
        "train/1 step 5/5 #####",
        "eval/0  step 5/5 #####",
    ]
    live.on_items([(("train", 1), "\n"), (("train", 1), "done\n")])
    assert screen_after(out.writes) == [
        "train/0 loading",
        "train/1 loading",
        "train/1 step 5/5 #####",  # finished: printed above the footer, as its last frame showed
        "train/1 done",
        "train/0 step 5/5 #####",
        "eval/0  step 5/5 #####",
    ]
    live.on_end()
    final = screen_after(out.writes)
    assert final[-2:] == ["train/0 step 5/5 #####", "eval/0  step 5/5 #####"]
    assert len(final) == 6 and not any("step 4/5" in line for line in final)


def test_a_frame_is_cut_to_the_terminal_but_kept_whole_at_the_end() -> None:
    live, out = printer(columns=30)
    long = "x" * 50
    live.on_items([(("train", 0), f"\r{long}"), (("eval", 0), "\rshort")])
    shown = screen_after(out.writes, columns=30)
    assert shown == ["train/0 " + "x" * 21, "eval/0  short"]  # one cell left free: never wraps
    live.on_end()
    shown = screen_after(out.writes, columns=30)
    assert "".join(shown).count("x") == 50 and shown[-1] == "eval/0  short"


def test_job_output_cannot_move_the_cursor_out_of_the_footer() -> None:
    live, out = printer()
    live.on_items([(("train", 0), "first\n"), (("train", 1), "\r\x1b[2A\x1b[2Kevil\x1b[H\t50%")])
    live.on_items([(("train", 0), "\r10%")])
    assert screen_after(out.writes) == ["train/0 first", "train/0 10%", "train/1 evil 50%"]


def test_colours_of_the_job_stay_and_are_closed() -> None:
    live, out = printer(color=True)
    live.on_items([(("eval", 0), "\r\x1b[31mred bar")])
    assert out.writes[-1].endswith("\x1b[31mred bar")
    live.on_items([(("eval", 0), "\n")])
    assert "\x1b[31mred bar\x1b[0m\n" in out.writes[-1]


def test_fit_counts_cells_not_characters() -> None:
    assert fit("\x1b[32mab\x1b[0mcd", 3) == "\x1b[32mab\x1b[0mc\x1b[0m"
    assert fit("日本語", 5) == "日本"  # two cells each
    assert fit("plain", 10) == "plain"
