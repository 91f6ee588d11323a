"""Printing the logs of several replicas to a terminal, each replica's progress bar updating in place.

:class:`~jupyter_sched.frontend.logview.printer.LogPrinter` writes to any text stream, so a ``\\r`` frame can only
update in place while one replica writes; when replicas take turns, each frame has to end the line and
four tqdm bars become a flood of lines. On a terminal, :class:`LivePrinter` keeps a *footer*: one line
per replica whose current line is not finished (a progress frame or a partial line), redrawn in place
below everything printed so far. A finished line (``\\n``) is printed above the footer once, with its
prefix, as the visible text of its last frame (what the terminal would have shown). At the end the footer
lines stay on screen as ordinary lines, so nothing a replica printed is lost.

Footer lines are cut to the terminal's width (counted in cells with ``wcwidth``, escape sequences taking
none) and keep only colours (no cursor moves, tabs or other controls), so they never wrap or move: the
footer is erased by moving the cursor up one row per line. One ``write`` per batch of items. Finished
lines are written as they came.
"""

from __future__ import annotations

import re
import shutil
import threading
from typing import Callable, Dict, List, Optional, TextIO, Tuple

from wcwidth import wcwidth

from jupyter_sched.frontend.logview.follow import FollowRenderer
from jupyter_sched.frontend.logview.printer import RESET, prefixes

_PIECES = re.compile(r"\r|\n|[^\r\n]+")
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_NOT_SGR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-ln-~]|\x1b[^\[]|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
"""What would move the cursor or change the screen (all but colours): dropped from footer lines."""
Replica = Tuple[str, int]


def fit(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` terminal cells; escape sequences are kept whole and take no cell (a
    colour left open is closed)."""
    out: List[str] = []
    used = 0
    pos = 0
    cut = False
    for match in [*_ESCAPE.finditer(text), None]:
        end = match.start() if match else len(text)
        for ch in text[pos:end]:
            width = max(0, wcwidth(ch))
            if used + width > columns:
                cut = True
                break
            out.append(ch)
            used += width
        if cut or match is None:
            break
        out.append(match.group())
        pos = match.end()
    line = "".join(out)
    return line + RESET if cut and "\x1b[" in line else line


class _Line:
    """One replica's unfinished line: the visible text of its last frame."""

    def __init__(self) -> None:
        self.text = ""
        self.fresh = False  # a "\r" came: the next text starts a new frame
        self.open = False

    def feed(self, piece: str) -> bool:
        """Takes one piece; True when it finished the line."""
        if piece == "\n":
            return True
        if piece == "\r":
            self.fresh = self.open
            return False
        self.text = piece if self.fresh else self.text + piece
        self.fresh = False
        self.open = True
        return False


class LivePrinter(FollowRenderer):
    """Writes items of several replicas to the terminal ``out`` (see the module docstring); thread-safe."""

    def __init__(
        self,
        out: TextIO,
        replicas: List[Replica],
        color: bool = False,
        on_error: Optional[Callable[[str], None]] = None,
        clean: Optional[Callable[[str], str]] = None,
        columns: Optional[Callable[[], int]] = None,
    ) -> None:
        self._out = out
        self._clean = clean
        self._report = on_error
        self._columns = columns or (lambda: shutil.get_terminal_size().columns)
        self._lock = threading.Lock()
        self._prefix = prefixes(replicas, color)
        self._order = list(replicas)
        self._lines: Dict[Replica, _Line] = {}
        self._drawn = 0  # footer lines on screen; the cursor is at the end of the last one

    # -- FollowRenderer ----------------------------------------------------------------------------------------
    def on_items(self, items: List[Tuple[Replica, str]]) -> None:
        clean = self._clean
        self.write_many(items if clean is None else [(replica, clean(item)) for replica, item in items])

    def on_error(self, replica: Replica, message: str) -> None:
        if self._report is not None:
            self.finish()
            self._report(message)

    def on_end(self) -> None:
        self.finish()

    # -- writing -----------------------------------------------------------------------------------------------
    def write_many(self, items: List[Tuple[Replica, str]]) -> None:
        if not items:
            return
        with self._lock:
            done: List[str] = []
            for replica, item in items:
                line = self._lines.setdefault(replica, _Line())
                for piece in _PIECES.findall(item):
                    if line.feed(piece):
                        done.append(self._whole(replica, line.text) + "\n")
                        line = self._lines[replica] = _Line()
            self._out.write(self._erase() + "".join(done) + self._draw())
            self._out.flush()

    def finish(self) -> None:
        """Replaces the footer by its lines in full (wrapped by the terminal if long), as ordinary lines."""
        with self._lock:
            rest = [
                self._whole(replica, self._lines[replica].text)
                for replica in self._order
                if replica in self._lines and self._lines[replica].open
            ]
            self._out.write(self._erase() + "".join(f"{line}\n" for line in rest))
            self._drawn = 0
            self._lines.clear()
            self._out.flush()

    def _whole(self, replica: Replica, text: str) -> str:
        """A line as written for good: prefixed, a colour the job left open closed."""
        return self._prefix[replica] + text + RESET * ("\x1b[" in text)

    def _erase(self) -> str:
        if not self._drawn:
            return ""
        up = f"\x1b[{self._drawn - 1}A" if self._drawn > 1 else ""
        return f"\r{up}\x1b[J"

    def _draw(self) -> str:
        columns = max(10, self._columns() - 1)
        rows = [
            fit(self._prefix[replica] + _NOT_SGR.sub("", self._lines[replica].text.replace("\t", " ")), columns)
            for replica in self._order
            if replica in self._lines and self._lines[replica].open
        ]
        self._drawn = len(rows)
        return "\n".join(rows)
