"""LineSplitter and split_lines: decoding, item boundaries, bounds, chunk invariance."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.logs import LineSplitter, split_lines


def feed_all(chunks: list[bytes], **kw: int) -> list[str]:
    splitter = LineSplitter(**kw)
    items: list[str] = []
    for chunk in chunks:
        items += splitter.feed(chunk)
    return items + splitter.flush()


# ------------------------------------------------------------------ split_lines
@pytest.mark.parametrize("text, expected", [
    ("foo\nbar", ["foo\n", "bar"]),
    ("", []),
    ("\n", ["\n"]),
    ("a\n\nb\n", ["a\n", "\n", "b\n"]),
    ("no newline", ["no newline"]),
    ("a\r\nb\rc", ["a\r\n", "b\rc"]),  # only "\n" splits
])
def test_split_lines_contract(text: str, expected: list[str]) -> None:
    assert split_lines(text) == expected


@given(st.text(alphabet="ab\n\r"))
def test_split_lines_roundtrip(text: str) -> None:
    lines = split_lines(text)
    assert "".join(lines) == text
    assert all(line for line in lines)
    assert all("\n" not in line[:-1] for line in lines)
    assert all(line.endswith("\n") for line in lines[:-1])


# ------------------------------------------------------------------ basic items
def test_partial_line_is_buffered_until_terminator() -> None:
    s = LineSplitter()
    assert s.feed(b"hel") == []
    assert s.pending == 3
    assert s.feed(b"lo\nwor") == ["hello\n"]
    assert s.pending == 3
    assert s.flush() == ["wor"]  # no newline at end of stream: still emitted
    assert s.pending == 0


def test_crlf_is_one_item() -> None:
    assert feed_all([b"a\r\nb\r\n"]) == ["a\r\n", "b\r\n"]


def test_progress_frames_are_yielded_immediately() -> None:
    s = LineSplitter()
    assert s.feed(b"progress 10%\rprogress 20%\r") == ["progress 10%\r", "progress 20%\r"]
    assert s.pending == 0
    assert s.feed(b"progress 3") == []
    assert s.feed(b"0%\rdone\n") == ["progress 30%\r", "done\n"]


def test_chunk_ending_in_cr_then_lf() -> None:
    s = LineSplitter()
    assert s.feed(b"abc\r") == ["abc\r"]  # a live bar: do not wait for the next read
    assert s.feed(b"\nnext\n") == ["\n", "next\n"]


@pytest.mark.parametrize("data, expected", [
    (b"a\n\rb\n", ["a\n", "\r", "b\n"]),
    (b"\r\r\rx", ["\r", "\r", "\r", "x"]),
    (b"\n\n", ["\n", "\n"]),
    (b"x\r\r\n", ["x\r", "\r\n"]),
])
def test_terminator_edge_cases(data: bytes, expected: list[str]) -> None:
    assert feed_all([data]) == expected


# ------------------------------------------------------------------ decoding
def test_multibyte_char_split_across_chunks() -> None:
    data = "ok \u2713 done\n".encode()
    for cut in range(len(data) + 1):
        assert feed_all([data[:cut], data[cut:]]) == ["ok \u2713 done\n"], cut


def test_multibyte_char_fed_byte_by_byte() -> None:
    data = "\u00e9\u4e2d\U0001f600\n".encode()
    assert feed_all([bytes([b]) for b in data]) == ["\u00e9\u4e2d\U0001f600\n"]


def test_invalid_utf8_becomes_replacement_and_continues() -> None:
    assert feed_all([b"ok\xff\xfe\n", b"next\n"]) == ["ok\ufffd\ufffd\n", "next\n"]


def test_truncated_multibyte_at_end_of_stream() -> None:
    s = LineSplitter()
    assert s.feed(b"x\xe2\x9c") == []
    assert s.flush() == ["x\ufffd"]


def test_splitter_is_reusable_after_flush() -> None:
    s = LineSplitter()
    s.feed(b"a\xe2")
    assert s.flush() == ["a\ufffd"]
    assert s.feed(b"b\n") == ["b\n"]


# ------------------------------------------------------------------ bounds
def test_long_line_is_emitted_in_pieces_while_buffering() -> None:
    s = LineSplitter(max_line_chars=10)
    assert s.feed(b"a" * 25) == ["a" * 10, "a" * 10]
    assert s.pending == 5
    assert s.feed(b"\n") == ["aaaaa\n"]


def test_long_line_in_one_chunk() -> None:
    assert feed_all([b"b" * 25 + b"\nok\n"], max_line_chars=10) == [
        "b" * 10, "b" * 10, "bbbbb\n", "ok\n"]


def test_line_of_exactly_the_limit_is_not_cut() -> None:
    assert feed_all([b"c" * 10 + b"\r\n"], max_line_chars=10) == ["c" * 10 + "\r\n"]
    assert feed_all([b"c" * 11 + b"\r\n"], max_line_chars=10) == ["c" * 10, "c\r\n"]


def test_long_line_with_pending_prefix() -> None:
    s = LineSplitter(max_line_chars=4)
    assert s.feed(b"abc") == []
    assert s.feed(b"defghij\nk") == ["abcd", "efgh", "ij\n"]
    assert s.flush() == ["k"]


def test_invalid_max_line_chars() -> None:
    with pytest.raises(ValueError):
        LineSplitter(max_line_chars=0)


# ------------------------------------------------------------------ volume (counted, not timed)
def test_million_lines_produce_exactly_a_million_items() -> None:
    data = b"".join(b"%d\n" % i for i in range(1, 1_000_001))  # like `seq 1000000`
    s = LineSplitter()
    count = 0
    last = ""
    for start in range(0, len(data), 65536):
        items = s.feed(data[start:start + 65536])
        count += len(items)
        if items:
            last = items[-1]
        assert s.pending < 16  # never more than one partial line is held
    assert s.flush() == []
    assert count == 1_000_000
    assert last == "1000000\n"


def test_million_progress_frames() -> None:
    data = b"".join(b"%d%%\r" % (i % 100) for i in range(1_000_000))
    s = LineSplitter()
    count = sum(len(s.feed(data[i:i + 65536])) for i in range(0, len(data), 65536))
    assert count == 1_000_000
    assert s.pending == 0


# ------------------------------------------------------------------ properties
SNIPPETS = [b"a", b"bc", b" ", b"\n", b"\r", b"\r\n", "\u00e9".encode(), "\u2713".encode(),
            "\U0001f600".encode(), b"\xff", b"\xe2\x9c", b"\x80", b"\x1b[31m"]


@st.composite
def chunked_bytes(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    data = b"".join(draw(st.lists(st.sampled_from(SNIPPETS), max_size=60)))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *cuts, len(data)]
    return data, [data[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=400)
@given(chunked_bytes(), st.integers(1, 12))
def test_items_concatenate_to_the_decoded_text(case: tuple[bytes, list[bytes]], limit: int) -> None:
    data, chunks = case
    s = LineSplitter(max_line_chars=limit)
    items: list[str] = []
    for chunk in chunks:
        items += s.feed(chunk)
        assert s.pending < limit  # memory stays bounded
    items += s.flush()
    assert "".join(items) == data.decode("utf-8", "replace")
    for item in items:
        assert item
        if item.endswith("\r\n"):
            body = item[:-2]
        elif item.endswith(("\r", "\n")):
            body = item[:-1]
        else:
            body = item
        assert "\n" not in body and "\r" not in body  # one terminator, at the end
        assert len(body) <= limit


@settings(max_examples=300)
@given(chunked_bytes())
def test_without_cr_items_do_not_depend_on_read_boundaries(case: tuple[bytes, list[bytes]]) -> None:
    data, chunks = case
    data = data.replace(b"\r", b"")
    chunks = [c.replace(b"\r", b"") for c in chunks]
    assert feed_all(chunks) == split_lines(data.decode("utf-8", "replace"))


@given(st.text(alphabet="ab\r\n\u00e9"), st.integers(1, 5))
def test_feed_text_matches_feed(text: str, limit: int) -> None:
    a, b = LineSplitter(max_line_chars=limit), LineSplitter(max_line_chars=limit)
    assert a.feed_text(text) + a.flush() == b.feed(text.encode()) + b.flush()


@settings(max_examples=300)
@given(chunked_bytes(), st.lists(st.booleans(), min_size=1))
def test_taking_pending_text_never_loses_or_repeats_any(case: tuple[bytes, list[bytes]], takes: list[bool]) -> None:
    """A follower may take the unterminated text at any point: the concatenation stays exact."""
    data, chunks = case
    s = LineSplitter(max_line_chars=7)
    items: list[str] = []
    for i, chunk in enumerate(chunks):
        items += s.feed(chunk)
        if takes[i % len(takes)]:
            taken = s.take_pending()
            assert s.pending == 0 and all(not t.endswith(("\n", "\r")) for t in taken)
            items += taken
    items += s.flush()
    assert "".join(items) == data.decode("utf-8", "replace")


def test_take_pending_keeps_a_split_character_whole() -> None:
    s = LineSplitter()
    assert s.feed(b"10% \xc3") == [] and s.take_pending() == ["10% "]
    assert s.take_pending() == []
    assert s.feed(b"\xa9\n") == ["\u00e9\n"]
