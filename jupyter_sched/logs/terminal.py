"""A tiny terminal: the line model behind a live log pane.

:class:`TerminalBuffer` turns decoded text, fed in arbitrary pieces, into committed
lines of styled cells plus one open line, with the semantics a program author sees in
a terminal and that JupyterLab >= 4.3 shows:

* ``\\n`` commits the open line; ``\\r`` moves the cursor to column 0 and later text
  *overwrites* (``"abc\\rX"`` shows ``"Xbc"``); so ``\\r\\n`` is just a newline, even
  when the ``\\r`` and ``\\n`` arrive in different pieces.
* ``\\b`` moves the cursor one cell left (never past column 0, never across lines).
* ``ESC[K`` / ``ESC[0K`` erase to end of line, ``ESC[1K`` erase to the cursor,
  ``ESC[2K`` the whole line (the cursor stays put, as in a terminal).  Erased cells at
  the end of a line vanish; erased cells followed by text render as spaces.
* SGR colours update a style that persists across lines.  Other CSI (cursor up, ``J``,
  ``?25l``), OSC and other escapes are dropped; so are C0/C1 controls other than
  ``\\t``, which is one cell left to the ``<pre>`` to expand.  Escapes split across
  pieces are carried (see :mod:`.escapes`).

Bounds: at most ``max_lines`` committed lines are kept (older ones are counted in
:attr:`TerminalBuffer.dropped`), and at most ``max_line_chars`` cells per line; text
written beyond that is counted in :attr:`Line.truncated` (the cursor keeps moving, so
overwrites still land where a terminal would put them).

Invariant (property-tested): the rendered result depends only on the concatenated
text, never on how it was split into pieces.  Speed: pieces without control
characters other than ``\\n`` take a fast path that commits whole lines by slicing and
only builds :class:`Line` objects for the lines that will be kept.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from itertools import groupby, islice
from typing import Optional

from .ansi import DEFAULT_STYLE, Span, Style, apply_sgr, spans_to_html
from .escapes import Csi, EscapeTokenizer

__all__ = ["Line", "TerminalBuffer"]

_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # all but \t
_CONTROLS_BUT_NL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ERASED = "\x00"  # cell content after an erase; never stored otherwise (NUL is dropped)
_MARKER_STYLE = Style(dim=True, italic=True)


@dataclass(frozen=True, slots=True)
class Line:
    """One rendered line: its text, style runs ``(length, style)`` covering the text
    exactly and maximally merged, and how many characters were cut off at the bound."""

    text: str
    runs: tuple[tuple[int, Style], ...] = ()
    truncated: int = 0
    #: The line was redrawn in place (``\r``, ``\b`` or an erase: a progress bar's frames), not only
    #: appended to. Not part of equality: it says how the text came about, not what it is.
    redrawn: bool = field(default=False, compare=False)

    @property
    def spans(self) -> list[Span]:
        out, pos = [], 0
        for length, style in self.runs:
            out.append(Span(self.text[pos:pos + length], style))
            pos += length
        return out

    def to_html(self) -> str:
        """Escaped HTML with inline styles, plus a dim marker if the line was cut."""
        spans = self.spans
        if self.truncated:
            spans.append(Span(f" \u2026 [{self.truncated:,} more chars]", _MARKER_STYLE))
        return spans_to_html(spans)

    def __repr__(self) -> str:
        styled = any(not style.is_default for _, style in self.runs)
        extra = (", styled" if styled else "") + (
            f", truncated={self.truncated}" if self.truncated else "")
        return f"Line({self.text!r}{extra})"


_EMPTY = Line("")


class TerminalBuffer:
    """Bounded terminal line model for one output stream; see the module docstring."""

    def __init__(self, max_lines: int = 5_000, max_line_chars: int = 4_000) -> None:
        if max_lines < 1 or max_line_chars < 1:
            raise ValueError("max_lines and max_line_chars must be >= 1")
        self.max_lines = max_lines
        self.max_line_chars = max_line_chars
        #: Bumped by every call that may change the rendering; equal versions
        #: guarantee an identical rendering, so a pane can skip re-rendering.
        self.version = 0
        self._reset()

    def _reset(self) -> None:
        self._lines: deque[Line] = deque(maxlen=self.max_lines)
        self._tokens = EscapeTokenizer()
        # (id(style), params) -> (style, result): SGR transitions without hashing a Style
        self._sgr_cache: dict[tuple[int, str], tuple[Style, Style]] = {}
        self._style = DEFAULT_STYLE
        #: Lines ever committed (kept + dropped).
        self.total_lines = 0
        self._reset_line()

    def _reset_line(self) -> None:
        # The open line has two representations.  While text is only appended (the
        # overwhelmingly common case) it is a list of segments with one style each;
        # the first overwrite or erase converts it to one cell per character.
        self._segments: list[str] = []
        self._seg_styles: list[Style] = []
        self._cells = False
        self._chars: list[str] = []  # cell mode: at most max_line_chars cells
        self._styles: list[Style] = []  # cell mode: one style per cell
        self._col = 0  # cursor; may pass max_line_chars (those cells are not stored)
        self._width = 0  # virtual line length; min(width, max_line_chars) chars are stored

    def __repr__(self) -> str:
        return (f"TerminalBuffer(lines={len(self._lines)}, dropped={self.dropped}, "
                f"current={self.current.text[:40]!r}, version={self.version})")

    # ----------------------------------------------------------------- state
    @property
    def dropped(self) -> int:
        """Committed lines discarded because of ``max_lines``."""
        return self.total_lines - len(self._lines)

    @property
    def lines(self) -> list[Line]:
        """The committed lines still kept, oldest first."""
        return list(self._lines)

    @property
    def current(self) -> Line:
        """The open (not yet committed) line as it would render now."""
        return self._snapshot() if self._width else _EMPTY

    @property
    def style(self) -> Style:
        """The SGR style that the next character will be written in."""
        return self._style

    # ----------------------------------------------------------------- input
    def feed(self, text: str) -> None:
        """Process the next piece of decoded text (any split point is fine)."""
        if not text:
            return
        self.version += 1
        for token in self._tokens.feed(text):
            if type(token) is str:
                self._text(token)
            else:
                self._csi(token)  # type: ignore[arg-type]

    def flush(self) -> None:
        """End of stream: drop an unfinished escape sequence.  The open line stays open."""
        self._tokens.reset()

    def clear(self) -> None:
        """Forget all lines and counters (the style is reset too)."""
        self._reset()
        self.version += 1

    # ---------------------------------------------------------------- output
    def _visible(self, last_n: Optional[int]) -> list[Line]:
        current = self.current
        show_current = bool(current.text or current.truncated)
        if last_n is None:
            lines = list(self._lines)
        else:
            want = max(0, last_n - show_current)
            lines = list(islice(self._lines, len(self._lines) - min(want, len(self._lines)), None))
        if show_current and (last_n is None or last_n > 0):
            lines.append(current)
        return lines

    def plain_lines(self, last_n: Optional[int] = None) -> list[str]:
        """Text of the kept lines without styles, plus the open line if non-empty.

        ``last_n`` limits the result to the last ``last_n`` lines (open line included).
        """
        return [line.text for line in self._visible(last_n)]

    def to_html(self, last_n: Optional[int] = None) -> str:
        """The same lines as :meth:`plain_lines`, escaped and styled, joined by ``"\\n"``.

        Meant to be the content of a ``<pre>``; every character of log text is escaped.
        """
        return "\n".join(line.to_html() for line in self._visible(last_n))

    # ------------------------------------------------------------- internals
    def _text(self, s: str) -> None:
        first = _CONTROLS.search(s)
        if first is None:
            self._write(s)
            return
        if s[first.start()] == "\n" and _CONTROLS_BUT_NL.search(s, first.end()) is None:
            parts = s.split("\n")  # fast path: only newlines, commit whole lines at once
            self._write(parts[0])
            self._commit()
            if len(parts) > 2:
                self._commit_plain(parts, 1, len(parts) - 1)
            self._write(parts[-1])
            return
        pos = 0
        for m in _CONTROLS.finditer(s, first.start()):
            i = m.start()
            if i > pos:
                self._write(s[pos:i])
            char = s[i]
            if char == "\n":
                self._commit()
            elif char == "\r":
                self._col = 0
            elif char == "\b" and self._col:
                self._col -= 1
            pos = i + 1
        if pos < len(s):
            self._write(s[pos:])

    def _write(self, s: str) -> None:
        if not s:
            return
        col, end, limit = self._col, self._col + len(s), self.max_line_chars
        if not self._cells and col == self._width:  # append mode
            if end > limit:
                s = s[:max(0, limit - col)]
            if s:
                self._segments.append(s)
                self._seg_styles.append(self._style)
            self._col = self._width = end
            return
        self._to_cells()
        if end > self._width:
            self._width = end
        if col < limit:
            stop = min(end, limit)
            self._chars[col:stop] = s if stop == end else s[:stop - col]
            self._styles[col:stop] = [self._style] * (stop - col)
        self._col = end

    def _to_cells(self) -> None:
        if self._cells:
            return
        self._chars = list("".join(self._segments))
        for seg, style in zip(self._segments, self._seg_styles):
            self._styles.extend([style] * len(seg))
        self._segments, self._seg_styles, self._cells = [], [], True

    def _snapshot(self) -> Line:
        truncated = max(0, self._width - self.max_line_chars)
        if not self._cells:
            runs: list[tuple[int, Style]] = []
            for seg, style in zip(self._segments, self._seg_styles):
                if runs and (runs[-1][1] is style or runs[-1][1] == style):
                    runs[-1] = (runs[-1][0] + len(seg), style)
                else:
                    runs.append((len(seg), style))
            return Line("".join(self._segments), tuple(runs), truncated)
        text = "".join(self._chars)
        styles = self._styles
        if _ERASED in text:
            text = text.rstrip(_ERASED)
            styles = styles[:len(text)]
            text = text.replace(_ERASED, " ")
            if len(text) < self.max_line_chars:
                truncated = 0  # the line was erased up to the bound: nothing to report
        runs_ = tuple((len(list(group)), style) for style, group in groupby(styles))
        return Line(text, runs_, truncated, redrawn=True)  # cells: something was overwritten or erased

    def _commit(self) -> None:
        self._lines.append(self._snapshot() if self._width else _EMPTY)
        self.total_lines += 1
        self._reset_line()

    def _commit_plain(self, parts: list[str], start: int, stop: int) -> None:
        """Commit ``parts[start:stop]`` as whole lines in the current style."""
        self.total_lines += stop - start
        start = max(start, stop - self.max_lines)  # the rest would be dropped at once
        style, limit = self._style, self.max_line_chars
        self._lines.extend([
            Line(p, ((len(p), style),) if p else ()) if len(p) <= limit
            else Line(p[:limit], ((limit, style),), len(p) - limit)
            for p in islice(parts, start, stop)
        ])

    def _csi(self, seq: Csi) -> None:
        if seq.final == "m" and not seq.intermediates:
            key = (id(self._style), seq.params)
            hit = self._sgr_cache.get(key)
            if hit is not None and hit[0] is self._style:
                self._style = hit[1]
            elif seq.is_sgr:
                if len(self._sgr_cache) >= 256:
                    self._sgr_cache.clear()
                new = apply_sgr(self._style, seq.params)
                self._sgr_cache[key] = (self._style, new)
                self._style = new
        elif seq.final == "K" and not seq.intermediates and seq.params in ("", "0", "1", "2"):
            if seq.params in ("", "0") and self._col >= self._width:
                return  # nothing right of the cursor (e.g. "text ESC[K")
            self._to_cells()
            col, kept = self._col, min(self._col, self.max_line_chars)
            if seq.params == "1":  # erase from start of line through the cursor
                n = min(col + 1, len(self._chars))
                self._chars[:n] = _ERASED * n
                self._styles[:n] = [DEFAULT_STYLE] * n
                return
            if seq.params == "2":
                self._chars[:kept] = _ERASED * kept
                self._styles[:kept] = [DEFAULT_STYLE] * kept
            del self._chars[kept:], self._styles[kept:]
            self._width = col
        # every other CSI (cursor movement, modes, ...) is deliberately ignored
