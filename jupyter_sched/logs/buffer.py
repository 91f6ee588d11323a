"""A ring of the last N items that remembers how many it let go.

Panes show "12,345 earlier lines not shown" instead of silently losing them, and a
combined view of several replicas interleaves *committed* lines into one of these.
Why not a bare ``deque(maxlen=...)``: the counts (``total``, ``dropped``) are the point.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import islice
from typing import Generic, Iterable, Iterator, Optional, TypeVar

__all__ = ["BoundedBuffer"]

T = TypeVar("T")


class BoundedBuffer(Generic[T]):
    """Keeps the last ``maxlen`` appended items; ``total`` counts every item ever
    appended and ``dropped == total - len(buffer)`` those evicted."""

    __slots__ = ("_items", "total")

    def __init__(self, maxlen: int, items: Iterable[T] = ()) -> None:
        if maxlen < 1:
            raise ValueError("maxlen must be >= 1")
        self._items: deque[T] = deque(maxlen=maxlen)
        #: Items ever appended (kept + dropped).
        self.total = 0
        self.extend(items)

    def __repr__(self) -> str:
        return (f"BoundedBuffer(maxlen={self.maxlen}, len={len(self)}, "
                f"total={self.total}, dropped={self.dropped})")

    @property
    def maxlen(self) -> int:
        return self._items.maxlen  # type: ignore[return-value]

    @property
    def dropped(self) -> int:
        """Items evicted to respect ``maxlen`` (or removed by :meth:`clear`)."""
        return self.total - len(self._items)

    def append(self, item: T) -> None:
        self._items.append(item)
        self.total += 1

    def extend(self, items: Iterable[T]) -> None:
        """Append many items; a long sequence only has its last ``maxlen`` copied."""
        if isinstance(items, Sequence):
            n = len(items)
            self._items.extend(items[n - self.maxlen:] if n > self.maxlen else items)
            self.total += n
            return
        for item in items:
            self._items.append(item)
            self.total += 1

    def tail(self, n: Optional[int] = None) -> list[T]:
        """The last ``n`` items (all kept items if ``n`` is None), oldest first."""
        if n is None or n >= len(self._items):
            return list(self._items)
        return list(islice(self._items, len(self._items) - max(n, 0), None))

    def clear(self) -> None:
        """Remove the kept items; they count as dropped, ``total`` is unchanged."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __getitem__(self, index: int) -> T:
        return self._items[index]
