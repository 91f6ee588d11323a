"""SGR parsing, colours, HTML escaping and the escape tokenizer."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.logs import (
    DEFAULT_STYLE,
    Csi,
    EscapeTokenizer,
    Span,
    Style,
    apply_sgr,
    parse_ansi,
    spans_to_html,
    strip_ansi,
    style_css,
)
from jupyter_sched.logs.ansi import color_css
from jupyter_sched.logs.escapes import MAX_PARAM_CHARS

BOLD_RED = Style(fg=1, bold=True)


# ------------------------------------------------------------------ SGR
@pytest.mark.parametrize("params, expected", [
    ("1", Style(bold=True)),
    ("2", Style(dim=True)),
    ("3", Style(italic=True)),
    ("4", Style(underline=True)),
    ("7", Style(inverse=True)),
    ("31", Style(fg=1)),
    ("37", Style(fg=7)),
    ("90", Style(fg=8)),
    ("97", Style(fg=15)),
    ("41", Style(bg=1)),
    ("47", Style(bg=7)),
    ("100", Style(bg=8)),
    ("107", Style(bg=15)),
    ("38;5;208", Style(fg=208)),
    ("48;5;17", Style(bg=17)),
    ("38;2;1;2;3", Style(fg=(1, 2, 3))),
    ("48;2;255;0;128", Style(bg=(255, 0, 128))),
    ("38:5:208", Style(fg=208)),
    ("38:2::1:2:3", Style(fg=(1, 2, 3))),
    ("38:2:1:2:3", Style(fg=(1, 2, 3))),
    ("1;38;5;208;4", Style(fg=208, bold=True, underline=True)),
    ("38;2;1;2;3;1", Style(fg=(1, 2, 3), bold=True)),
    ("1;31;0;4", Style(underline=True)),  # 0 in the middle resets what came before
    ("53", DEFAULT_STYLE),  # unknown: ignored
    ("38;5", DEFAULT_STYLE),  # incomplete: ignored
    ("38;5;256", DEFAULT_STYLE),  # out of range: ignored
    ("38;2;300;0;0", DEFAULT_STYLE),
    ("4:0", DEFAULT_STYLE),
])
def test_apply_sgr_from_default(params: str, expected: Style) -> None:
    assert apply_sgr(DEFAULT_STYLE, params) == expected


@pytest.mark.parametrize("params, expected", [
    ("", DEFAULT_STYLE),
    ("0", DEFAULT_STYLE),
    ("22", Style(fg=1, bg=(9, 9, 9), italic=True, underline=True, inverse=True)),
    ("23", Style(fg=1, bg=(9, 9, 9), bold=True, dim=True, underline=True, inverse=True)),
    ("24", Style(fg=1, bg=(9, 9, 9), bold=True, dim=True, italic=True, inverse=True)),
    ("27", Style(fg=1, bg=(9, 9, 9), bold=True, dim=True, italic=True, underline=True)),
    ("39", Style(bg=(9, 9, 9), bold=True, dim=True, italic=True, underline=True, inverse=True)),
    ("49", Style(fg=1, bold=True, dim=True, italic=True, underline=True, inverse=True)),
])
def test_apply_sgr_resets(params: str, expected: Style) -> None:
    full = Style(fg=1, bg=(9, 9, 9), bold=True, dim=True, italic=True, underline=True,
                 inverse=True)
    assert apply_sgr(full, params) == expected


def test_style_repr_shows_only_what_is_set() -> None:
    assert repr(DEFAULT_STYLE) == "Style()"
    assert repr(BOLD_RED) == "Style(fg=1, bold=True)"
    assert repr(Span("x", BOLD_RED)) == "Span('x', Style(fg=1, bold=True))"
    assert repr(Span("x")) == "Span('x')"


@pytest.mark.parametrize("color, css", [
    (None, None),
    (1, "#e75c58"),  # JupyterLab's red
    (2, "#00a250"),
    (9, "#b22b31"),
    (16, "#000000"),
    (196, "#ff0000"),
    (208, "#ff8700"),
    (231, "#ffffff"),
    (232, "#080808"),
    (255, "#eeeeee"),
    ((1, 2, 3), "#010203"),
])
def test_color_css(color: object, css: str | None) -> None:
    assert color_css(color) == css  # type: ignore[arg-type]


def test_style_css() -> None:
    assert style_css(DEFAULT_STYLE) == ""
    assert style_css(Style(fg=(255, 0, 0), bg=4, bold=True, dim=True, italic=True,
                           underline=True)) == (
        "color:#ff0000;background-color:#208ffb;font-weight:bold;opacity:0.7;"
        "font-style:italic;text-decoration:underline")
    inverse = style_css(Style(fg=1, inverse=True))
    assert "background-color:#e75c58" in inverse and "color:var(--jp-layout-color0" in inverse
    assert "color:" in style_css(Style(inverse=True))  # visible even with default colours


# ------------------------------------------------------------------ parse / html
def test_parse_ansi_spans() -> None:
    assert parse_ansi("\x1b[1;31mred\x1b[0m plain \x1b[4mu") == [
        Span("red", BOLD_RED), Span(" plain "), Span("u", Style(underline=True))]


def test_parse_ansi_continues_from_a_style() -> None:
    assert parse_ansi("x\x1b[22my", BOLD_RED) == [Span("x", BOLD_RED), Span("y", Style(fg=1))]


@pytest.mark.parametrize("text, plain", [
    ("\x1b[2Jclear\x1b[?25l\x1b[1A", "clear"),  # non-SGR CSI dropped
    ("\x1b]0;window title\x07text", "text"),  # OSC title, BEL terminated
    ("\x1b]8;;https://x.org\x1b\\link\x1b]8;;\x1b\\ after", "link after"),  # OSC 8, ST
    ("\x1b(Bcharset\x1b7\x1b=", "charset"),  # other escapes
    ("\x1b[>4;2mprivate", "private"),
    ("a\x1b\nb", "a\nb"),  # lone ESC before a control
    ("a\x1b[12\nb", "a\nb"),  # malformed CSI: the newline survives
    ("stray \x1b]title without end\nnext line", "stray \nnext line"),
    ("cut at the end \x1b[3", "cut at the end "),
    ("\x1bPdcs payload\x1b\\after", "after"),
])
def test_strip_ansi_drops_every_escape(text: str, plain: str) -> None:
    assert strip_ansi(text) == plain
    assert "".join(span.text for span in parse_ansi(text)) == plain


def test_private_sgr_does_not_change_style() -> None:
    assert parse_ansi("\x1b[>4;2mx\x1b[?1mx") == [Span("xx")]


def test_html_escapes_log_text() -> None:
    out = spans_to_html(parse_ansi("<script>alert('x')</script> & \"q\""))
    assert out == "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;q&quot;"
    red = spans_to_html(parse_ansi("\x1b[31m<b>"))
    assert red == '<span style="color:#e75c58">&lt;b&gt;</span>'


def test_html_merges_adjacent_equal_styles() -> None:
    style = Style(fg=2)
    assert spans_to_html([Span("a", style), Span("b", Style(fg=2)), Span(""), Span("c")]) == (
        '<span style="color:#00a250">ab</span>c')


def test_truecolor_and_256_render_inline() -> None:
    out = spans_to_html(parse_ansi("\x1b[38;2;10;20;30;48;5;208mx"))
    assert out == '<span style="color:#0a141e;background-color:#ff8700">x</span>'


TAG = re.compile(r'<span style="[^"<>]*">|</span>')
NASTY = ["<", ">", "&", '"', "'", "a", " ", "\n", "\x1b", "[", "]", "m", "1", "3", ";",
         "\x1b[31m", "\x1b[0m", "\x1b[38;2;1;2;3m", "\x07", "\\", "<script>", "\u00e9"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(NASTY), max_size=40).map("".join))
def test_html_contains_no_markup_from_log_text(text: str) -> None:
    out = spans_to_html(parse_ansi(text))
    inner = TAG.sub("", out)
    assert "<" not in inner and ">" not in inner and '"' not in inner
    assert html.unescape(inner) == strip_ansi(text)


# ------------------------------------------------------------------ tokenizer
def tokens_whole(text: str) -> list[object]:
    return merge(EscapeTokenizer().feed(text))


def merge(tokens: list[object]) -> list[object]:
    out: list[object] = []
    for tok in tokens:
        if isinstance(tok, str) and out and isinstance(out[-1], str):
            out[-1] += tok
        else:
            out.append(tok)
    return out


def test_tokenizer_yields_csi_objects() -> None:
    assert EscapeTokenizer().feed("a\x1b[1;31mb\x1b[2K") == [
        "a", Csi("1;31", "", "m"), "b", Csi("2", "", "K")]
    assert Csi("1;31", "", "m").is_sgr and not Csi("2", "", "K").is_sgr
    assert not Csi(">4", "", "m").is_sgr and not Csi("1", " ", "m").is_sgr


def test_tokenizer_carries_a_split_sequence() -> None:
    tok = EscapeTokenizer()
    assert tok.feed("red \x1b[3") == ["red "]
    assert tok.pending == "\x1b[3"
    assert tok.feed("1mX") == [Csi("31", "", "m"), "X"]
    assert tok.pending == ""


def test_tokenizer_carry_is_bounded() -> None:
    tok = EscapeTokenizer()
    seen = []
    for char in "\x1b[" + "1" * (3 * MAX_PARAM_CHARS) + "m":
        seen += tok.feed(char)
        assert len(tok.pending) <= 2 * MAX_PARAM_CHARS + 2
    assert merge(seen) == tokens_whole("\x1b[" + "1" * (3 * MAX_PARAM_CHARS) + "m")


STREAM = ["a", "\n", "\r", "\x1b", "[", "]", "P", "\\", "\x07", "1", ";", "m", "K", " ",
          "\x1b[31m", "\x1b]8;;u\x1b\\", "\x18", "(", "B", "?"]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(STREAM), max_size=40).map("".join), st.data())
def test_tokens_do_not_depend_on_split_points(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    tok = EscapeTokenizer()
    pieces: list[object] = []
    for a, b in zip(bounds, bounds[1:]):
        pieces += tok.feed(text[a:b])
    assert merge(pieces) == tokens_whole(text)
