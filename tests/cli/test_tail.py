"""Prefixing log items: one prefix per line and per \\r frame, whatever the chunking; replicas interleaved."""

from __future__ import annotations

import io
from typing import List

from hypothesis import given
from hypothesis import strategies as st

from jupyter_sched.frontend.logview.printer import LogPrinter, Prefixer
from jupyter_sched.logs.lines import LineSplitter

P = "§ "
TEXT = st.text(alphabet=st.sampled_from(list("ab \r\n")), max_size=60)


def prefixed(*items: str) -> str:
    prefixer = Prefixer(P)
    return "".join(prefixer.feed(item) for item in items)


def test_lines_and_progress_frames() -> None:
    assert prefixed("a\n", "b\n") == "§ a\n§ b\n"
    assert prefixed("step 1\r", "step 2\r", "done\n") == "§ step 1\r§ step 2\r§ done\n"
    assert prefixed("50%\r", "\n") == "§ 50%\r\n"  # "\r\n" cut in two by the reader
    assert prefixed("x\r\n", "\n") == "§ x\r\n§ \n"  # an empty line is prefixed too
    assert prefixed("a\rb\rc\n") == "§ a\r§ b\r§ c\n"  # several frames in one item (docker)
    assert prefixed("partial") == "§ partial"


@given(TEXT, st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_output_does_not_depend_on_how_the_text_was_cut(text: str, cuts: List[int]) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    items = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert prefixed(*items) == prefixed(text)


@given(TEXT)
def test_nothing_is_lost_and_no_prefix_is_doubled(text: str) -> None:
    splitter = LineSplitter()
    items = splitter.feed(text.encode()) + splitter.flush()
    out = prefixed(*items)
    assert out.replace(P, "") == text
    assert P + P not in out
    # every line and every frame with text starts with exactly one prefix
    for segment in out.replace("\r", "\n").split("\n"):
        if segment:
            assert segment.startswith(P) and not segment[len(P) :].startswith(P)


def test_printer_interleaves_replicas_and_never_runs_lines_together() -> None:
    out = io.StringIO()
    printer = LogPrinter(out, [("trainer", 0), ("ps", 1)])
    printer.write(("trainer", 0), "epoch 1 10%\r")
    printer.write(("ps", 1), "ready\n")
    printer.write(("trainer", 0), "\n")  # the rest of trainer's "\r\n": its line was already ended
    printer.write(("trainer", 0), "epoch 2")
    printer.write(("ps", 1), "bye\n")
    printer.finish()
    assert out.getvalue() == (
        "trainer/0 epoch 1 10%\r\nps/1      ready\ntrainer/0 epoch 2\nps/1      bye\n"
    )


def test_printer_colours_prefixes_only_when_asked() -> None:
    plain, coloured = io.StringIO(), io.StringIO()
    LogPrinter(plain, [("a", 0)]).write(("a", 0), "x\n")
    LogPrinter(coloured, [("a", 0), ("a", 1)], color=True).write(("a", 1), "x\n")
    assert plain.getvalue() == "a/0 x\n"
    assert coloured.getvalue() == "\033[36ma/1\033[0m x\n"
