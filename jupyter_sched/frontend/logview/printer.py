"""Printing the logs of several replicas to one text stream: ``role/k`` prefixes, progress bars intact.

Log items (see ``Scheduler.log_iter``) are whole lines, ``\\r``-terminated progress frames, or a final partial
line. A :class:`Prefixer` per replica remembers whether that replica's output is at the start of a line, so
the prefix is written exactly once per line and once per ``\\r`` frame, however the text was cut into items
(TorchX re-prefixes per chunk and duplicates prefixes at chunk boundaries). A :class:`LogPrinter`, the text
renderer of :func:`jupyter_sched.frontend.logview.follow.follow`, interleaves whole items of several replicas and ends
a replica's unfinished line before another replica writes, so lines never run into each other
(:func:`jupyter_sched.frontend.logview.tail.tail` picks the renderer). :func:`gutter` is the one spelling of a
replica's prefix in text (the notebook's snapshot uses it too, adding a stream mark); a role name is user
text, so its control characters are shown as escapes there
(:func:`~jupyter_sched.logs.control_strings.escape_controls`), never sent to a terminal.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Callable, Dict, List, Optional, TextIO, Tuple

from jupyter_sched.frontend.logview.follow import FollowRenderer
from jupyter_sched.logs.control_strings import CONTROL_CHAR, escape_controls

_PIECES = re.compile(r"\r|\n|[^\r\n]+")
PALETTE = ("32", "36", "33", "35", "34", "92", "96", "93", "95", "94")
RESET = "\033[0m"

# where a replica's output stands: at the start of a line, inside a line, right after a "\r" frame, or
# inside a line that another replica's output had to end with a newline
_START, _TEXT, _FRAME, _CUT = "start", "text", "frame", "cut"


class Prefixer:
    """Adds ``prefix`` at the start of every line and after every ``\r`` of one replica's output.

    The output depends only on the concatenated input, never on how it was cut into items: ``"\r"`` and
    ``"\n"`` are handled one at a time and a line's text may arrive in any number of pieces.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.state = _START

    @property
    def line_open(self) -> bool:
        """True when the last thing written was not a newline (a partial line or a ``\r`` frame)."""
        return self.state in (_TEXT, _FRAME)

    def cut(self) -> None:
        """Someone else ended our open line with a newline (to write their own)."""
        if self.line_open:
            self.state = _CUT

    def feed(self, item: str) -> str:
        out: List[str] = []
        for piece in _PIECES.findall(item):
            if piece == "\n":
                if self.state == _START:
                    out.append(self.prefix + "\n")  # an empty line still says whose it is
                elif (
                    self.state != _CUT
                ):  # after a cut, the newline that ends our line was already written
                    out.append("\n")
                self.state = _START
            elif piece == "\r":
                if self.state in (_TEXT, _FRAME):
                    out.append("\r")
                    self.state = _FRAME
                elif self.state == _START:
                    out.append("\r")
            else:
                if self.state != _TEXT:
                    out.append(self.prefix)
                out.append(piece)
                self.state = _TEXT
        return "".join(out)


def gutter(label: str, width: int, mark: str = "") -> str:
    """The prefix of a replica's line in text: ``role/k`` padded to ``width``, then ``mark`` (the notebook's
    snapshot marks the stream: ``|`` stdout, ``!`` stderr) and a space. ``label`` holds a role name, so its
    control characters are written as escapes (``width`` counts them so)."""
    return f"{escape_controls(label).ljust(width)} {mark + ' ' if mark else ''}"


def prefixes(replicas: List[Tuple[str, int]], color: bool) -> Dict[Tuple[str, int], str]:
    """Each replica's :func:`gutter`, padded to the longest, its label coloured from the palette when
    ``color``."""
    width = max((len(escape_controls(f"{r}/{k}")) for r, k in replicas), default=0)
    out = {}
    for i, (role, k) in enumerate(replicas):
        label = gutter(f"{role}/{k}", width)
        out[(role, k)] = f"\033[{PALETTE[i % len(PALETTE)]}m{label[:-1]}{RESET} " if color else label
    return out


class LogPrinter(FollowRenderer):
    """Writes items of several replicas to ``out``; thread-safe; colours prefixes when ``color``. Read errors
    go to ``on_error`` (a callable taking the message), after ending an open line; ``clean`` filters each
    item first (e.g. removing terminal control strings)."""

    def __init__(
        self,
        out: TextIO,
        replicas: List[Tuple[str, int]],
        color: bool = False,
        on_error: Optional[Callable[[str], None]] = None,
        clean: Optional[Callable[[str], str]] = None,
    ) -> None:
        self._out = out
        self._clean = clean
        self._lock = threading.Lock()
        self._report = on_error
        self._prefixers = {replica: Prefixer(text) for replica, text in prefixes(replicas, color).items()}
        self._open: Optional[Prefixer] = None

    def on_items(self, items: List[Tuple[Tuple[str, int], str]]) -> None:
        clean = self._clean
        self.write_many(items if clean is None else [(replica, clean(item)) for replica, item in items])

    def on_error(self, replica: Tuple[str, int], message: str) -> None:
        if self._report is not None:
            self.finish()
            self._report(message)

    def on_end(self) -> None:
        self.finish()

    def write(self, replica: Tuple[str, int], item: str, flush: bool = True) -> None:
        self.write_many([(replica, item)], flush)

    def write_many(self, items: List[Tuple[Tuple[str, int], str]], flush: bool = True) -> None:
        """Writes several items in order with one ``write`` call (and one flush)."""
        if not items:
            return
        out: List[str] = []
        with self._lock:
            for replica, item in items:
                prefixer = self._prefixers[replica]
                if self._open is not None and self._open is not prefixer and self._open.line_open:
                    out.append("\n")
                    self._open.cut()
                out.append(prefixer.feed(item))
                self._open = prefixer
            self._out.write("".join(out))
            if flush:
                self._out.flush()

    def finish(self) -> None:
        """Ends an unfinished last line, so the shell prompt starts on its own line."""
        with self._lock:
            if self._open is not None and self._open.line_open:
                self._out.write("\n")
                self._open.cut()
            self._out.flush()


def _json_escape(m: "re.Match[str]") -> str:
    return m.group() if m.group() == "\n" else f"\\u{ord(m.group()):04x}"


class JsonLinePrinter(FollowRenderer):
    """``log --json``: one JSON object per item, ``{"role", "replica", "line"}`` (``line`` without its
    ``\n``; a progress frame keeps its ``\r``), for tools. No prefixes, no colours, nothing removed; a
    character a terminal would act on (C1 controls, bidirectional marks) is written as its JSON escape, as
    JSON writes the C0 ones, so the stream is harmless on a terminal and reads back the same."""

    def __init__(self, out: TextIO, on_error: Optional[Callable[[str], None]] = None) -> None:
        self._out = out
        self._on_error = on_error

    def on_items(self, items: List[Tuple[Tuple[str, int], str]]) -> None:
        if not items:
            return
        text = "".join(
            json.dumps({"role": r, "replica": k, "line": item[:-1] if item.endswith("\n") else item},
                       ensure_ascii=False) + "\n"
            for (r, k), item in items
        )  # fmt: skip
        # raw C0 in JSON text are only the newlines between objects (JSON escapes those in strings)
        self._out.write(CONTROL_CHAR.sub(_json_escape, text))
        self._out.flush()

    def on_error(self, replica: Tuple[str, int], message: str) -> None:
        if self._on_error is not None:
            self._on_error(message)

    def on_end(self) -> None:
        self._out.flush()
