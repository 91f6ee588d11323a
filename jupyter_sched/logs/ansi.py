"""ANSI SGR styling: escapes -> :class:`Span` runs -> escaped HTML with inline CSS.

Why inline CSS: JupyterLab's ``.ansi-*`` classes are scoped to ``.jp-RenderedText pre``
and do not colour inside an ``HTML`` widget, nbconvert output or VS Code, whereas a
``style=""`` attribute renders everywhere.  The 16 basic colours are JupyterLab's own
palette, so panes look like ordinary cell output.

Why escape everything: log text is untrusted and widget HTML goes straight into
``innerHTML``.  :func:`spans_to_html` passes every character of log text through
:func:`html.escape`; the only markup it emits is ``<span style="...">`` whose CSS is
generated here from integers.

Supported SGR codes: 0 reset; 1 bold, 2 dim, 3 italic, 4 underline, 7 inverse and
their resets 22 (bold and dim), 23, 24, 27; 30-37 / 90-97 foreground, 40-47 /
100-107 background, 39 / 49 default; ``38;5;n`` / ``48;5;n`` (256 colours) and
``38;2;r;g;b`` / ``48;2;r;g;b`` (truecolor), also in the colon form ``38:2::r:g:b``.
Unknown codes are ignored; non-SGR CSI, OSC and other escapes are dropped.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Iterable, Optional, Union

from .escapes import Csi, EscapeTokenizer

__all__ = [
    "Color", "Style", "Span", "DEFAULT_STYLE", "apply_sgr", "parse_ansi",
    "style_css", "spans_to_html", "strip_ansi", "color_css",
]

#: A palette index 0-255 or a truecolor ``(r, g, b)`` triple.
Color = Union[int, tuple[int, int, int]]

#: JupyterLab's ANSI palette (normal 0-7, intense 8-15).
PALETTE_16 = (
    "#3e424d", "#e75c58", "#00a250", "#ddb62b", "#208ffb", "#d160c4", "#60c6c8", "#c5c1b4",
    "#282c36", "#b22b31", "#007427", "#b27d12", "#0065ca", "#a03196", "#258f8f", "#a1a6b2",
)
_CUBE = (0, 95, 135, 175, 215, 255)
#: Used when ``inverse`` swaps a default colour; theme variables with safe fallbacks.
DEFAULT_FG_CSS = "var(--jp-content-font-color0, #000000)"
DEFAULT_BG_CSS = "var(--jp-layout-color0, #ffffff)"


@dataclass(frozen=True, slots=True)
class Style:
    """Immutable character attributes; the default instance means "no styling"."""

    fg: Optional[Color] = None
    bg: Optional[Color] = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False

    def __repr__(self) -> str:  # only what differs from the default, e.g. Style(fg=1, bold=True)
        parts = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name) != f.default]
        return f"Style({', '.join(parts)})"

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_STYLE


DEFAULT_STYLE = Style()


@dataclass(frozen=True, slots=True)
class Span:
    """A run of text drawn in one :class:`Style`."""

    text: str
    style: Style = DEFAULT_STYLE

    def __repr__(self) -> str:
        if self.style == DEFAULT_STYLE:
            return f"Span({self.text!r})"
        return f"Span({self.text!r}, {self.style!r})"


def _int(code: str) -> Optional[int]:
    if code == "":
        return 0  # an omitted parameter means 0
    return int(code) if code.isdigit() else None


def _extended(args: list[str]) -> tuple[Optional[Color], int]:
    """Parse the arguments after 38/48: ``5;n`` or ``2;r;g;b``.  Returns (colour, consumed)."""
    mode = _int(args[0]) if args else None
    if mode == 5 and len(args) >= 2:
        n = _int(args[1])
        return (n if n is not None and n <= 255 else None), 2
    if mode == 2 and len(args) >= 4:
        rgb = [_int(a) for a in args[1:4]]
        ok = all(v is not None and v <= 255 for v in rgb)
        return (tuple(rgb) if ok else None), 4  # type: ignore[return-value]
    return None, len(args) if mode in (2, 5) else min(1, len(args))


def _colon_extended(sub: list[str]) -> Optional[Color]:
    """``38:5:n``, ``38:2:r:g:b`` or ITU form ``38:2:<colourspace>:r:g:b``."""
    if len(sub) >= 2 and _int(sub[1]) == 2 and len(sub) >= 6:
        sub = sub[:2] + sub[3:6]
    color, _ = _extended(sub[1:])
    return color


_BASIC = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 7: "inverse"}
_RESETS = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 27: ("inverse",)}


@lru_cache(maxsize=4096)
def apply_sgr(style: Style, params: str) -> Style:
    """Return ``style`` updated by the SGR parameter string (``"1;31"``, ``""`` = reset).

    Cached: real logs repeat a handful of sequences millions of times.
    """
    codes = params.split(";")
    changes: dict[str, object] = {}
    i = 0
    while i < len(codes):
        code = codes[i]
        i += 1
        if ":" in code:
            sub = code.split(":")
            head = _int(sub[0])
            if head in (38, 48):
                color = _colon_extended(sub)
                if color is not None:
                    changes["fg" if head == 38 else "bg"] = color
            elif head == 4:  # 4:0 = underline off, 4:n = some underline style
                changes["underline"] = _int(sub[1]) != 0
            continue
        n = _int(code)
        if n is None:
            continue
        if n == 0:
            style, changes = DEFAULT_STYLE, {}
        elif n in _BASIC:
            changes[_BASIC[n]] = True
        elif n in _RESETS:
            changes.update(dict.fromkeys(_RESETS[n], False))
        elif 30 <= n <= 37 or 90 <= n <= 97:
            changes["fg"] = n - 30 if n < 90 else n - 82
        elif 40 <= n <= 47 or 100 <= n <= 107:
            changes["bg"] = n - 40 if n < 100 else n - 92
        elif n in (39, 49):
            changes["fg" if n == 39 else "bg"] = None
        elif n in (38, 48):
            color, used = _extended(codes[i:])
            i += used
            if color is not None:
                changes["fg" if n == 38 else "bg"] = color
    return replace(style, **changes) if changes else style  # type: ignore[arg-type]


def color_css(color: Optional[Color]) -> Optional[str]:
    """CSS colour for a palette index or RGB triple (None for the default colour)."""
    if color is None:
        return None
    if isinstance(color, tuple):
        return "#%02x%02x%02x" % color
    if color < 16:
        return PALETTE_16[color]
    if color < 232:
        c = color - 16
        return "#%02x%02x%02x" % (_CUBE[c // 36], _CUBE[c // 6 % 6], _CUBE[c % 6])
    level = 8 + 10 * (color - 232)
    return "#%02x%02x%02x" % (level, level, level)


@lru_cache(maxsize=4096)
def style_css(style: Style) -> str:
    """Inline CSS for a style (``""`` for the default style)."""
    fg, bg = color_css(style.fg), color_css(style.bg)
    if style.inverse:
        fg, bg = bg or DEFAULT_BG_CSS, fg or DEFAULT_FG_CSS
    parts = []
    if fg:
        parts.append(f"color:{fg}")
    if bg:
        parts.append(f"background-color:{bg}")
    if style.bold:
        parts.append("font-weight:bold")
    if style.dim:
        parts.append("opacity:0.7")
    if style.italic:
        parts.append("font-style:italic")
    if style.underline:
        parts.append("text-decoration:underline")
    return ";".join(parts)


def spans_to_html(spans: Iterable[Span]) -> str:
    """Render spans as HTML: text escaped, styled runs wrapped in ``<span style="...">``.

    Adjacent spans with equal styles are merged, so the output does not depend on
    how the text was cut into spans.
    """
    out: list[str] = []
    run: list[str] = []
    current: Optional[Style] = None
    for span in spans:
        if not span.text:
            continue
        if span.style != current and run:
            out.append(_wrap(current, "".join(run)))  # type: ignore[arg-type]
            run = []
        current = span.style
        run.append(span.text)
    if run:
        out.append(_wrap(current, "".join(run)))  # type: ignore[arg-type]
    return "".join(out)


def _wrap(style: Style, text: str) -> str:
    css = style_css(style)
    escaped = html.escape(text)
    if not css:
        return escaped
    return f'<span style="{html.escape(css)}">{escaped}</span>'


def parse_ansi(text: str, style: Style = DEFAULT_STYLE) -> list[Span]:
    """Split complete ``text`` into styled spans, starting from ``style``.

    Only escapes are interpreted; other control characters are left in the text (use
    :class:`~jupyter_sched.logs.terminal.TerminalBuffer` for ``\\r``/``\\b`` semantics).
    An unfinished escape at the very end is dropped.
    """
    spans: list[Span] = []
    for token in EscapeTokenizer().feed(text):
        if isinstance(token, Csi):
            if token.is_sgr:
                style = apply_sgr(style, token.params)
        elif spans and spans[-1].style == style:
            spans[-1] = Span(spans[-1].text + token, style)
        else:
            spans.append(Span(token, style))
    return spans


def strip_ansi(text: str) -> str:
    """``text`` with every escape sequence (SGR, other CSI, OSC, ...) removed."""
    return "".join(t for t in EscapeTokenizer().feed(text) if isinstance(t, str))
