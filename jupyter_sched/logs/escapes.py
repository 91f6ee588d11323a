"""Escape-sequence tokenizer shared by :mod:`.ansi` and :mod:`.terminal`.

Contract
--------
:class:`EscapeTokenizer` turns already-decoded text, fed in arbitrary pieces, into a
flat list of tokens: plain ``str`` runs (which may still hold C0 controls such as
``\\r``, ``\\n``, ``\\b``) and :class:`Csi` objects for complete Control Sequence
Introducer sequences (``ESC [ params intermediates final``).  Everything else that
starts with ESC is *dropped*, never shown as garbage:

* OSC / DCS / SOS / PM / APC strings (``ESC ]``, ``ESC P``, ``ESC X``, ``ESC ^``,
  ``ESC _``) up to BEL or ST (``ESC \\``).  Window titles and OSC 8 hyperlinks go here.
  A string is also abandoned at ``\\n`` (which is then kept), CAN or SUB, so a stray
  ``ESC ]`` in a log can swallow at most the rest of one line, not the whole job.
* two/three character escapes (``ESC 7``, ``ESC ( B``, ``ESC =``, lone ``ESC \\``).
* malformed sequences: the recognised prefix is dropped and scanning resumes at the
  offending character (so ``ESC [ 1 \\n`` still ends the line).

Why a carry buffer: an escape may be split across reads.  An incomplete sequence at
the end of a piece is kept (bounded by :data:`MAX_PARAM_CHARS`) and prepended to the
next piece, so the token stream is the same for *any* split of the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

__all__ = ["Csi", "Token", "EscapeTokenizer", "MAX_PARAM_CHARS"]

ESC = "\x1b"
#: Longest parameter (and intermediate) run accepted in a CSI.  Longer ones are
#: malformed; this is also what bounds the carry buffer between pieces.
MAX_PARAM_CHARS = 256

_CSI = re.compile(r"\x1b\[([0-?]{0,%d})([ -/]{0,%d})([@-~])" % (MAX_PARAM_CHARS, MAX_PARAM_CHARS))
_CSI_PREFIX = re.compile(r"\x1b\[[0-?]{0,%d}[ -/]{0,%d}" % (MAX_PARAM_CHARS, MAX_PARAM_CHARS))
_ESC_OTHER = re.compile(r"\x1b[ -/]{0,%d}[0-~]" % MAX_PARAM_CHARS)
_ESC_OTHER_PREFIX = re.compile(r"\x1b[ -/]{0,%d}" % MAX_PARAM_CHARS)
_STRING_END = re.compile(r"[\x07\n\x18\x1a\x1b]")
_STRING_START = frozenset("]PX^_")
_PLAIN_PARAMS = re.compile(r"[0-9;:]*")


@dataclass(frozen=True, slots=True)
class Csi:
    """A complete CSI sequence ``ESC [ params intermediates final``."""

    params: str
    intermediates: str
    final: str

    @property
    def is_sgr(self) -> bool:
        """True for a plain SGR (``m``) with only digits, ``;`` and ``:`` parameters.

        Private-mode variants such as ``ESC[>4;2m`` are *not* SGR and must be ignored.
        """
        return self.final == "m" and not self.intermediates and _is_plain(self.params)

    def __repr__(self) -> str:
        return f"Csi({self.params + self.intermediates + self.final!r})"


def _is_plain(params: str) -> bool:
    return _PLAIN_PARAMS.fullmatch(params) is not None


Token = Union[str, Csi]


class EscapeTokenizer:
    """Incremental tokenizer: ``feed(text) -> list[Token]``; see the module docstring."""

    __slots__ = ("_carry", "_in_string")

    def __init__(self) -> None:
        self._carry = ""
        self._in_string = False

    def __repr__(self) -> str:
        return f"EscapeTokenizer(pending={self._carry!r}, in_string={self._in_string})"

    @property
    def pending(self) -> str:
        """The incomplete escape sequence held back until more text arrives."""
        return self._carry

    def reset(self) -> None:
        """Forget any incomplete sequence (end of stream: an unfinished escape is dropped)."""
        self._carry = ""
        self._in_string = False

    def feed(self, text: str) -> list[Token]:
        """Tokenize the next piece of text.  Adjacent ``str`` tokens are not merged."""
        if self._carry:
            text, self._carry = self._carry + text, ""
        elif not self._in_string and ESC not in text:
            return [text] if text else []  # fast path: the common case
        out: list[Token] = []
        pos: int | None = 0
        if self._in_string:
            pos = self._skip_string(text, 0)
        while pos is not None:
            i = text.find(ESC, pos)
            if i < 0:
                if pos < len(text):
                    out.append(text[pos:])
                break
            if i > pos:
                out.append(text[pos:i])
            m = _CSI.match(text, i)  # the common case, inlined
            if m:
                out.append(Csi(*m.groups()))
                pos = m.end()
            else:
                pos = self._escape(text, i, out)
        return out

    def _escape(self, text: str, i: int, out: list[Token]) -> int | None:
        """Handle the ESC at ``text[i]``; return where to resume, None if all consumed."""
        n = len(text)
        if i + 1 == n:
            self._carry = ESC
            return None
        kind = text[i + 1]
        if kind == "[":
            m = _CSI.match(text, i)
            if m:
                out.append(Csi(*m.groups()))
                return m.end()
            end = _CSI_PREFIX.match(text, i).end()  # type: ignore[union-attr]
        elif kind in _STRING_START:
            self._in_string = True
            return self._skip_string(text, i + 2)
        else:
            m = _ESC_OTHER.match(text, i)
            if m:
                return m.end()
            end = _ESC_OTHER_PREFIX.match(text, i).end()  # type: ignore[union-attr]
        if end == n:  # a valid but unfinished prefix: wait for more text
            self._carry = text[i:]
            return None
        return end  # malformed: drop the prefix, resume at the offending char

    def _skip_string(self, text: str, pos: int) -> int | None:
        """Drop OSC/DCS-style string content from ``pos``; None if it runs off the end."""
        m = _STRING_END.search(text, pos)
        if m is None:
            return None
        j = m.start()
        char = text[j]
        if char == ESC:
            if j + 1 == len(text):
                self._carry = ESC  # maybe the first half of ST; stay in the string
                return None
            self._in_string = False
            return j + 2 if text[j + 1] == "\\" else j
        self._in_string = False
        return j if char == "\n" else j + 1
