"""Terminal control strings removed from job output before it reaches a user's terminal.

A job's output is untrusted. Printed raw to a terminal, an OSC string (``ESC ] ... BEL``) changes the window
title, writes the clipboard (OSC 52) or plants a disguised link (OSC 8); DCS, SOS, PM and APC strings reach
the terminal's other channels. :func:`strip_control_strings` removes each such string whole, introducer to
terminator, in both the 7-bit (``ESC ]``) and 8-bit (``U+009D``) forms, and leaves everything else, colours
and ``\\r`` progress frames included, as it was. A string without its terminator ends at a newline (kept),
CAN, SUB, the next ESC or the end of the text, as :mod:`.escapes` does for the pane, so a stray introducer can hide at
most the rest of one line. A regular expression is enough: the text comes in whole log items.

Names (of apps and roles) and the messages that quote them are untrusted text too, but a name is not
rendered output: the user reads it and types it back (``log HANDLE/ROLE``), so removing part of it would
show a different name. :func:`escape_controls` writes every character that could drive a terminal (C0
and C1 controls, DEL, and the bidirectional overrides that reorder what is shown) as a visible escape
(``\\x1b``), so a name shows as exactly what it is and does nothing.
"""

from __future__ import annotations

import re

__all__ = ["strip_control_strings", "CONTROL_STRING", "escape_controls", "CONTROL_CHAR"]

_INTRODUCER = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"
_TERMINATOR = r"(?:\x07|\x1b\\|\x9c|\x18|\x1a|(?=[\n\x1b])|$)"
CONTROL_STRING = re.compile(_INTRODUCER + r"[^\x07\x1b\x9c\x18\x1a\n]*" + _TERMINATOR)
"""One OSC/DCS/SOS/PM/APC string, terminator included (a newline ending it is left in the text)."""


def strip_control_strings(text: str) -> str:
    """``text`` without terminal control strings (see the module docstring)."""
    if "\x1b" not in text and not any("\x90" <= ch <= "\x9f" for ch in text):
        return text
    while True:  # removing one string can join an ESC before it to a "]" after it: repeat until none is left
        stripped = CONTROL_STRING.sub("", text)
        if stripped == text:
            return text
        text = stripped


CONTROL_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""A character a terminal acts on rather than shows: C0 and C1 controls (ESC, BEL, ``\\r``, the 8-bit OSC
introducer ``U+009D``), DEL, line and paragraph separators, and the bidirectional marks and overrides."""


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every :data:`CONTROL_CHAR` written as a visible escape (ESC as ``\\x1b``, U+202E as
    ``\\u202e``), except the characters in ``keep`` (``"\\n\\t"`` for a message of several lines).
    For names and messages shown on a terminal (see the module docstring)."""
    if not CONTROL_CHAR.search(text):
        return text
    return CONTROL_CHAR.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)
