"""Terminal control strings removed from job output before it reaches a user's terminal.

A job's output is untrusted. Printed raw to a terminal, an OSC string (``ESC ] ... BEL``) changes the window
title, writes the clipboard (OSC 52) or plants a disguised link (OSC 8); DCS, SOS, PM and APC strings reach
the terminal's other channels. :func:`strip_control_strings` removes each such string whole, introducer to
terminator, in both the 7-bit (``ESC ]``) and 8-bit (``U+009D``) forms, and leaves everything else, colours
and ``\\r`` progress frames included, as it was. A string without its terminator ends at a newline (kept),
CAN, SUB, the next ESC or the end of the text, as :mod:`.escapes` does for the pane, so a stray introducer can hide at
most the rest of one line. A regular expression is enough: the text comes in whole log items.
"""

from __future__ import annotations

import re

__all__ = ["strip_control_strings", "CONTROL_STRING"]

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
