"""Terminal control strings (OSC, DCS, SOS, PM, APC) are removed from job output; nothing else is."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from jupyter_sched.logs.control_strings import CONTROL_CHAR, escape_controls, strip_control_strings

INTRODUCER = re.compile(r"\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]")
PIECES = st.sampled_from(["\x1b", "]", "P", "\\", "\x07", "\x9d", "\x9c", "\n", "\r", "a", "0;t", "\x1b[31m", ";"])


def test_titles_links_and_dcs_go_and_colours_stay() -> None:
    assert strip_control_strings("a\x1b]0;evil title\x07b\n") == "ab\n"
    assert strip_control_strings("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\\n") == "click\n"
    assert strip_control_strings("\x1bPq#0;2;0;0;0\x1b\\x") == "x"
    assert strip_control_strings("\x9d52;c;aGk=\x9cok") == "ok"
    assert strip_control_strings("\x1b[31mred\x1b[0m 50%\r") == "\x1b[31mred\x1b[0m 50%\r"
    assert strip_control_strings("x\x1b]never ended\nnext") == "x\nnext"  # a stray introducer hides one line at most


@given(st.lists(PIECES, max_size=40).map("".join))
def test_no_control_string_survives(text: str) -> None:
    out = strip_control_strings(text)
    assert not INTRODUCER.search(out)
    assert strip_control_strings(out) == out
    assert out.count("\n") == text.count("\n")  # lines are never merged or lost


@given(st.text(alphabet=st.characters(blacklist_characters="\x1b", max_codepoint=0x8F)))
def test_text_without_escapes_is_unchanged(text: str) -> None:
    assert strip_control_strings(text) == text


def test_escape_controls_shows_every_control_character_and_keeps_the_rest() -> None:
    name = "ti\x1b]0;title\x07tle \x9d52;c;x\x9c \u202eevil\u2066 r\x1b[2J\r\tx é ☃"
    shown = escape_controls(name)
    assert shown == r"ti\x1b]0;title\x07tle \x9d52;c;x\x9c \u202eevil\u2066 r\x1b[2J\r\tx é ☃"
    assert not CONTROL_CHAR.search(shown)
    assert escape_controls("a\nb\tc\rd", keep="\n\t") == "a\nb\tc\\rd"
    assert escape_controls("plain name") == "plain name"
