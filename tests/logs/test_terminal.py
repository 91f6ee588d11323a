"""TerminalBuffer: terminal semantics, styles, bounds, rendering and split invariance."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.logs import (
    DEFAULT_STYLE,
    Line,
    LineSplitter,
    Span,
    Style,
    TerminalBuffer,
    apply_sgr,
)

GREEN = Style(fg=2)
TAG = re.compile(r'<span style="[^"<>]*">|</span>')


def render(chunks: list[str] | str, **kw: int) -> list[str]:
    term = TerminalBuffer(**kw)
    for chunk in [chunks] if isinstance(chunks, str) else chunks:
        term.feed(chunk)
    return term.plain_lines()


# ------------------------------------------------------------------ §3.4 checklist
@pytest.mark.parametrize("chunks, expected", [
    ("abc\rX", ["Xbc"]),  # overwrite, like a terminal
    ("100%\r5%", ["5%0%"]),  # shorter text after \r leaves leftovers
    ("ab\bc", ["ac"]),
    ("ab\b\n", ["ab"]),  # \b moves, it does not delete
    ("\b\bab", ["ab"]),  # \b at column 0
    ("abc\r\nX", ["abc", "X"]),  # \r\n is a newline
    (["abc\r", "\nX"], ["abc", "X"]),  # ... also split across pieces
    ("a\n\rb", ["a", "b"]),  # \n\r
    ("\r\r\rabc\r\r", ["abc"]),  # many \r in a row
    ("a\n\nb\n", ["a", "", "b"]),  # empty lines are lines
    ("tab\there", ["tab\there"]),  # \t is one cell, expanded by the <pre>
    ("x\t\ry", ["y\t"]),
    ("a\x00b\x07c\x7fd\x0bx\x0cy", ["abcdxy"]),  # other C0 controls dropped
    ("a\x9bb\x85c", ["abc"]),  # C1 controls dropped
    ("Downloading 10%\r\x1b[KDone\n", ["Done"]),  # pip: \r ESC[K
    ("Downloading 10%\r\x1b[0KDone\n", ["Done"]),  # ESC[0K == ESC[K
    ("working...\r\x1b[2Kdone\n", ["done"]),  # rich: \r ESC[2K
    ("Pulling fs layer\x1b[2K\rok\n", ["ok"]),  # docker: ESC[2K \r
    ("abc\x1b[2KX", ["   X"]),  # 2K keeps the cursor where it was
    ("abc\x1b[2K\n", [""]),
    ("abcdef\b\b\b\x1b[Kxy", ["abcxy"]),
    ("abcdef\b\b\b\x1b[1Kx", ["   xef"]),  # 1K erases through the cursor
    ("abc\x1b[K", ["abc"]),  # erase at end of line: no-op
    ("line1\n\x1b[Aline2\n", ["line1", "line2"]),  # cursor up ignored
    ("a\x1b[5Cb\x1b[2Jc\x1b[?25l", ["abc"]),  # other CSI ignored
    ("\x1b]0;title\x07visible\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", ["visiblelink"]),
    (["red \x1b[3", "1mX\n"], ["red X"]),  # escape split across feeds
    (["\x1b", "[", "3", "1", "m", "X"], ["X"]),
    (["\x1b]0;ti", "tle\x1b", "\\", "ok"], ["ok"]),
    ("no newline at end", ["no newline at end"]),
])
def test_checklist(chunks: list[str] | str, expected: list[str]) -> None:
    assert render(chunks) == expected


def test_tqdm_style_redraw() -> None:
    frames = [f"\r{pct:3d}%|{'#' * (pct // 10):<10}| {pct}/100" for pct in range(0, 101, 5)]
    assert render("".join(frames) + "\n") == ["100%|##########| 100/100"]
    term = TerminalBuffer()
    for frame in frames[:5]:
        term.feed(frame)
    assert term.plain_lines() == [" 20%|##        | 20/100"]  # the open line is shown live
    assert term.lines == []


# ------------------------------------------------------------------ styles
def test_styles_persist_across_lines() -> None:
    term = TerminalBuffer()
    term.feed("\x1b[32mgreen\nstill green\x1b[0m\nplain\n")
    lines = term.lines
    assert lines[0].spans == [Span("green", GREEN)]
    assert lines[1].spans == [Span("still green", GREEN)]
    assert lines[2].spans == [Span("plain")]
    assert term.style == DEFAULT_STYLE


def test_style_applies_to_many_lines_in_one_piece() -> None:
    term = TerminalBuffer()
    term.feed("\x1b[32ma\nb\nc\nd")
    assert [line.spans for line in term.lines] == [[Span(t, GREEN)] for t in "abc"]
    assert term.current.spans == [Span("d", GREEN)]


def test_overwrite_takes_the_new_style() -> None:
    term = TerminalBuffer()
    term.feed("abcd\r\x1b[32mXY")
    assert term.current.spans == [Span("XY", GREEN), Span("cd")]


def test_256_and_truecolor_in_html() -> None:
    term = TerminalBuffer()
    term.feed("\x1b[38;5;208mo\x1b[48;2;1;2;3mx\n")
    assert term.to_html() == (
        '<span style="color:#ff8700">o</span>'
        '<span style="color:#ff8700;background-color:#010203">x</span>')


def test_html_is_escaped() -> None:
    term = TerminalBuffer()
    term.feed("<script>alert(1)</script>\n\x1b[31m<img src=x onerror=y>")
    out = term.to_html()
    assert "<script>" not in out and "<img" not in out
    assert out == ("&lt;script&gt;alert(1)&lt;/script&gt;\n"
                   '<span style="color:#e75c58">&lt;img src=x onerror=y&gt;</span>')


def test_line_repr() -> None:
    assert repr(Line("a")) == "Line('a')"
    assert repr(Line("a", ((1, GREEN),), 3)) == "Line('a', styled, truncated=3)"


# ------------------------------------------------------------------ bounds
@pytest.mark.parametrize("text", [
    "".join(f"line {i}\n" for i in range(10)),  # fast path
    "".join(f"x\rline {i}\n" for i in range(10)),  # cell path
    "".join(f"\x1b[32mline {i}\x1b[0m\n" for i in range(10)),
])
def test_max_lines_drops_oldest_and_counts(text: str) -> None:
    term = TerminalBuffer(max_lines=3)
    term.feed(text)
    assert term.plain_lines() == ["line 7", "line 8", "line 9"]
    assert term.dropped == 7
    assert term.total_lines == 10


def test_dropped_counts_across_feeds() -> None:
    term = TerminalBuffer(max_lines=5)
    for i in range(100):
        term.feed(f"{i}\n" * 3)
    assert (term.total_lines, term.dropped, len(term.lines)) == (300, 295, 5)


def test_long_line_is_truncated_and_marked() -> None:
    term = TerminalBuffer(max_line_chars=10)
    term.feed("x" * 25 + "\n" + "y" * 12)
    (line,) = term.lines
    assert line.text == "x" * 10 and line.truncated == 15
    assert term.current.truncated == 2
    assert "15 more chars" in term.to_html()
    assert term.plain_lines() == ["x" * 10, "y" * 10]


def test_redrawing_a_long_bar_does_not_grow_the_truncation_count() -> None:
    term = TerminalBuffer(max_line_chars=10)
    for i in range(100):
        term.feed(f"\r{i:02d}" + "=" * 23)
    assert term.current.truncated == 15
    assert term.current.text == "99" + "=" * 8


def test_cursor_beyond_the_bound_still_overwrites_correctly() -> None:
    term = TerminalBuffer(max_line_chars=5)
    term.feed("abcdefgh" + "\b" * 8 + "XY\n")
    assert term.lines == [Line("XYcde", ((5, DEFAULT_STYLE),), 3)]


def test_flood_of_short_lines_keeps_only_max_lines() -> None:
    term = TerminalBuffer(max_lines=1000)
    text = "".join(f"line {i}\n" for i in range(200_000))
    for start in range(0, len(text), 65536):
        term.feed(text[start:start + 65536])
    assert term.total_lines == 200_000
    assert term.dropped == 199_000
    assert term.plain_lines(last_n=2) == ["line 199998", "line 199999"]


def test_invalid_bounds() -> None:
    with pytest.raises(ValueError):
        TerminalBuffer(max_lines=0)
    with pytest.raises(ValueError):
        TerminalBuffer(max_line_chars=0)


# ------------------------------------------------------------------ api
def test_version_changes_only_on_input() -> None:
    term = TerminalBuffer()
    v0 = term.version
    term.feed("")
    assert term.version == v0
    term.feed("a")
    v1 = term.version
    assert v1 > v0
    term.plain_lines(), term.to_html()
    assert term.version == v1
    term.clear()
    assert term.version > v1 and term.plain_lines() == [] and term.total_lines == 0


def test_last_n_counts_the_open_line() -> None:
    term = TerminalBuffer()
    term.feed("a\nb\nc\nopen")
    assert term.plain_lines(last_n=2) == ["c", "open"]
    assert term.plain_lines(last_n=0) == []
    assert term.plain_lines(last_n=99) == ["a", "b", "c", "open"]
    assert term.to_html(last_n=1) == "open"
    term.feed("\n")
    assert term.plain_lines(last_n=2) == ["c", "open"]
    assert term.current == Line("")


def test_open_line_with_only_erased_cells_is_hidden() -> None:
    term = TerminalBuffer()
    term.feed("a\nprogress\x1b[2K")
    assert term.plain_lines() == ["a"]


def test_flush_drops_an_unfinished_escape() -> None:
    term = TerminalBuffer()
    term.feed("abc\x1b[3")
    term.flush()
    term.feed("1mX")
    assert term.plain_lines() == ["abc1mX"]


# ------------------------------------------------------------------ properties
K0, K1, K2 = "\x1b[K", "\x1b[1K", "\x1b[2K"
SGRS = ["\x1b[31m", "\x1b[0m", "\x1b[1;38;5;208m", "\x1b[48;2;1;2;3m", "\x1b[22m"]
ATOMS = ["a", "b", "c", " ", "<", "&", "\u00e9", "\t", "\n", "\r", "\b", K0, K1, K2, *SGRS]
NOISE = ["\x1b[A", "\x1b]0;t\x07", "\x1b]8;;u\x1b\\", "\x00", "\x9b", "\x1b", "[", "\r\n"]


def oracle(atoms: list[str], limit: int) -> list[list[Span]]:
    """Naive per-character reference model of the spec: (char|None, style) cells."""
    lines: list[list[Span]] = []
    cells: list[tuple[str | None, Style]] = []
    col, style = 0, DEFAULT_STYLE

    def spans() -> list[Span]:
        kept = cells[:limit]
        while kept and kept[-1][0] is None:
            kept.pop()
        out: list[Span] = []
        for char, st_ in kept:
            char = " " if char is None else char
            if out and out[-1].style == st_:
                out[-1] = Span(out[-1].text + char, st_)
            else:
                out.append(Span(char, st_))
        return out

    for atom in atoms:
        if atom == "\n":
            lines.append(spans())
            cells, col = [], 0
        elif atom == "\r":
            col = 0
        elif atom == "\b":
            col = max(0, col - 1)
        elif atom == K0:
            del cells[col:]
        elif atom == K1:
            cells[:col + 1] = [(None, DEFAULT_STYLE)] * min(col + 1, len(cells))
        elif atom == K2:
            cells = [(None, DEFAULT_STYLE)] * col
        elif atom in SGRS:
            style = apply_sgr(style, atom[2:-1])
        else:
            if col < len(cells):
                cells[col] = (atom, style)
            else:
                cells.append((atom, style))
            col += 1
    current = spans()
    return lines + ([current] if current else [])


@settings(max_examples=500)
@given(st.lists(st.sampled_from(ATOMS), max_size=50), st.sampled_from([3, 8, 1000]))
def test_matches_the_reference_model(atoms: list[str], limit: int) -> None:
    term = TerminalBuffer(max_line_chars=limit)
    term.feed("".join(atoms))
    got = [line.spans for line in term.lines]
    current = term.current
    if current.text or current.truncated:
        got.append(current.spans)
    assert got == oracle(atoms, limit)


@settings(max_examples=500)
@given(st.lists(st.sampled_from(ATOMS + NOISE), max_size=50).map("".join), st.data(),
       st.sampled_from([(3, 4), (1000, 1000), (2, 1)]))
def test_rendering_does_not_depend_on_split_points(
        text: str, data: st.DataObject, bounds: tuple[int, int]) -> None:
    max_lines, max_chars = bounds
    whole = TerminalBuffer(max_lines=max_lines, max_line_chars=max_chars)
    whole.feed(text)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    edges = [0, *cuts, len(text)]
    split = TerminalBuffer(max_lines=max_lines, max_line_chars=max_chars)
    for a, b in zip(edges, edges[1:]):
        split.feed(text[a:b])
    assert split.plain_lines() == whole.plain_lines()
    assert split.to_html() == whole.to_html()
    assert "<" not in TAG.sub("", whole.to_html())  # no markup ever comes from log text
    assert (split.total_lines, split.dropped) == (whole.total_lines, whole.dropped)
    by_char = TerminalBuffer(max_lines=max_lines, max_line_chars=max_chars)
    for char in text:
        by_char.feed(char)
    assert by_char.to_html() == whole.to_html()


@settings(max_examples=200)
@given(st.lists(st.sampled_from(ATOMS + NOISE), max_size=40).map("".join), st.data())
def test_splitter_items_feed_the_terminal_identically(text: str, data: st.DataObject) -> None:
    raw = text.encode() + data.draw(st.sampled_from([b"", b"\xff", b"\xe2"]))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=10)))
    edges = [0, *cuts, len(raw)]
    splitter, via_items = LineSplitter(max_line_chars=4), TerminalBuffer()
    items: list[str] = []
    for a, b in zip(edges, edges[1:]):
        batch = splitter.feed(raw[a:b])
        items += batch
        for item in batch:
            via_items.feed(item)
    tail = splitter.flush()
    items += tail
    for item in tail:
        via_items.feed(item)
    decoded = raw.decode("utf-8", "replace")
    assert "".join(items) == decoded
    direct = TerminalBuffer()
    direct.feed(decoded)
    assert via_items.to_html() == direct.to_html()
