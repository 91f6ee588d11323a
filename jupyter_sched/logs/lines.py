"""Bytes -> log items: incremental UTF-8 decoding and line splitting.

:class:`LineSplitter` is what the schedulers' ``log_iter`` runs over raw reads
(``os.read``, ``docker logs`` frames, ``tail -f``).  Contract of the items it yields:

* Concatenating every item of ``feed``/``flush`` gives back exactly
  ``data.decode("utf-8", "replace")`` -- nothing is lost, added or reordered.
* A complete line ends with ``"\\n"``; ``"\\r\\n"`` stays inside one item.
* A frame ending in a bare ``"\\r"`` (a progress-bar redraw) is its own item and is
  yielded as soon as it is seen, so bars move live.  A chunk ending in ``"\\r"`` is
  yielded at once; if the next chunk starts with ``"\\n"`` that ``"\\n"`` becomes an
  item on its own (it renders identically under terminal semantics).
* Otherwise a line is never cut at a read boundary: text without a terminator is
  buffered until a terminator arrives, :meth:`LineSplitter.flush`, or the caller asks
  for it with :meth:`LineSplitter.take_pending` (a follower does when the text has
  been quiet for a moment, so a prompt or a ``printf '\r10%'`` shows live; the rest
  of the line then comes as a later item, and the concatenation is still exact).
* Memory is bounded: line content longer than ``max_line_chars`` is emitted in pieces
  of exactly that many characters (no ``"\\n"`` added); the terminator is not counted.

Why incremental decoding: a naive ``chunk.decode()`` mangles a multi-byte character
split across two reads.  Why ``str.find``/``split`` rather than per-character loops:
a flood of a million short lines must split in well under a second.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["LineSplitter", "split_lines", "DEFAULT_MAX_LINE_CHARS"]

DEFAULT_MAX_LINE_CHARS = 1 << 20
# One item: any non-terminator run followed by "\r\n", "\r" or "\n".
_ITEM = re.compile(r"[^\r\n]*(?:\r\n?|\n)")
# Characters other than "\r"/"\n" that str.splitlines() also splits on; text without them can use it.
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """Split ``text`` after every ``"\\n"``, keeping the newlines and a trailing fragment.

    ``"foo\\nbar"`` -> ``["foo\\n", "bar"]``; ``""`` -> ``[]``;
    ``"".join(split_lines(t)) == t`` always.  Only ``"\\n"`` splits (``"\\r"`` stays in
    the line), and the whole thing runs in linear time.
    """
    parts = text.split("\n")
    last = parts.pop()
    lines = [p + "\n" for p in parts]
    if last:
        lines.append(last)
    return lines


class LineSplitter:
    """Incremental byte-chunk -> log-item splitter; see the module docstring.

    >>> s = LineSplitter()
    >>> s.feed(b"a\\nprogress 10%\\rprogress 2"), s.feed(b"0%\\r\\n"), s.flush()
    (['a\\n', 'progress 10%\\r'], ['progress 20%\\r\\n'], [])
    """

    __slots__ = ("max_line_chars", "_decoder", "_parts", "_pending")

    def __init__(self, max_line_chars: int = DEFAULT_MAX_LINE_CHARS) -> None:
        if max_line_chars < 1:
            raise ValueError("max_line_chars must be >= 1")
        self.max_line_chars = max_line_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []  # unterminated text, joined only when it ends
        self._pending = 0  # total length of _parts

    def __repr__(self) -> str:
        return f"LineSplitter(max_line_chars={self.max_line_chars}, pending={self._pending})"

    @property
    def pending(self) -> int:
        """Characters currently buffered (decoded text waiting for a terminator)."""
        return self._pending

    def feed(self, data: bytes) -> list[str]:
        """Decode the next chunk of bytes and return the items it completes."""
        return self.feed_text(self._decoder.decode(data))

    def flush(self) -> list[str]:
        """End of stream: decode leftover bytes (as U+FFFD) and emit the partial line.

        The splitter is reset and may be reused for a new stream.
        """
        items = self.feed_text(self._decoder.decode(b"", final=True))
        self._decoder.reset()
        if self._pending:
            items.append("".join(self._parts))
            self._parts, self._pending = [], 0
        return items

    def take_pending(self) -> list[str]:
        """The buffered unterminated text as one item (``[]`` if none), without ending the stream.

        Bytes of an incomplete UTF-8 character stay in the decoder, so a character is never split."""
        if not self._pending:
            return []
        text = "".join(self._parts)
        self._parts, self._pending = [], 0
        return [text]

    def feed_text(self, text: str) -> list[str]:
        """Like :meth:`feed` for already-decoded text."""
        if not text:
            return []
        end = max(text.rfind("\n"), text.rfind("\r")) + 1
        if end == 0:  # no terminator: buffer, cutting pieces off if the line is too long
            self._parts.append(text)
            self._pending += len(text)
            return self._cut_pending() if self._pending >= self.max_line_chars else []
        head, tail = text[:end], text[end:]
        if _OTHER_BREAKS.search(head):
            items = _ITEM.findall(head) if "\r" in head else split_lines(head)
        else:  # the common case: C-speed splitting, same items ("\r", "\r\n" and "\n" end lines)
            items = head.splitlines(True)
        if self._parts:
            self._parts.append(items[0])
            items[0] = "".join(self._parts)
            self._parts, self._pending = [], 0
        if len(head) > self.max_line_chars or len(items[0]) > self.max_line_chars:
            items = self._bound(items)
        if tail:
            self._parts.append(tail)
            self._pending = len(tail)
            if self._pending >= self.max_line_chars:
                items.extend(self._cut_pending())
        return items

    def _cut_pending(self) -> list[str]:
        """Emit full ``max_line_chars`` pieces of the buffered line, keep the rest."""
        limit = self.max_line_chars
        text = "".join(self._parts)
        keep = len(text) % limit
        pieces = [text[i:i + limit] for i in range(0, len(text) - keep, limit)]
        self._parts = [text[len(text) - keep:]] if keep else []
        self._pending = keep
        return pieces

    def _bound(self, items: list[str]) -> list[str]:
        """Cut any item whose content (terminator excluded) exceeds ``max_line_chars``."""
        limit = self.max_line_chars
        out: list[str] = []
        for item in items:
            if len(item) <= limit:
                out.append(item)
                continue
            body = item.rstrip("\r\n")
            if len(body) <= limit:
                out.append(item)
                continue
            start = (len(body) - 1) // limit * limit  # the last piece keeps the terminator
            out.extend(body[i:i + limit] for i in range(0, start, limit))
            out.append(item[start:])
        return out
