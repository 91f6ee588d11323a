"""BoundedBuffer: a ring of the last N items with total/dropped counts."""

from __future__ import annotations

import pytest

from jupyter_sched.logs import BoundedBuffer


def test_keeps_the_last_items_and_counts_the_rest() -> None:
    buf: BoundedBuffer[int] = BoundedBuffer(3)
    for i in range(10):
        buf.append(i)
    assert list(buf) == [7, 8, 9]
    assert (len(buf), buf.total, buf.dropped, buf.maxlen) == (3, 10, 7, 3)
    assert buf[0] == 7 and buf[-1] == 9


def test_extend_with_a_long_sequence() -> None:
    buf: BoundedBuffer[int] = BoundedBuffer(4, [100])
    buf.extend(range(1_000_000))
    assert list(buf) == [999_996, 999_997, 999_998, 999_999]
    assert (buf.total, buf.dropped) == (1_000_001, 999_997)


def test_extend_with_a_short_sequence_and_a_generator() -> None:
    buf: BoundedBuffer[str] = BoundedBuffer(5)
    buf.extend(["a", "b"])
    buf.extend(c for c in "cdefg")
    assert list(buf) == ["c", "d", "e", "f", "g"]
    assert (buf.total, buf.dropped) == (7, 2)


def test_tail() -> None:
    buf: BoundedBuffer[int] = BoundedBuffer(10, range(6))
    assert buf.tail(2) == [4, 5]
    assert buf.tail(0) == []
    assert buf.tail() == buf.tail(99) == [0, 1, 2, 3, 4, 5]


def test_clear_counts_items_as_dropped() -> None:
    buf: BoundedBuffer[int] = BoundedBuffer(10, range(6))
    buf.clear()
    assert (len(buf), buf.total, buf.dropped) == (0, 6, 6)
    buf.append(1)
    assert (list(buf), buf.total) == ([1], 7)


def test_repr_and_validation() -> None:
    assert repr(BoundedBuffer(2, "abc")) == "BoundedBuffer(maxlen=2, len=2, total=3, dropped=1)"
    with pytest.raises(ValueError):
        BoundedBuffer(0)
