"""Small HTML and text helpers shared by the panes and the rich reprs: state pills, times, tables.

Everything here returns strings and escapes every value it is given, because app names, arguments,
environment values and log text come from users and jobs, and widget HTML goes straight into ``innerHTML``.
``esc`` is also safe from maths rendering: JupyterLab, Notebook 7 and nbconvert typeset ``$...$``, ``\\(...\\)``
and ``\\begin{...}`` in HTML outputs (ipywidgets' HTML widget too), so an env block ``A=$A B=$B`` would lose
the text between the dollars. Every ``$`` and such backslash is wrapped in an element of the class the
typesetters skip, which also ends the text run they search; the characters themselves stay (select, copy
and ``textContent`` see them unchanged).

Colours are JupyterLab's ANSI palette with a translucent background so they read in light and dark
themes; a state is always shown as a word too, never by colour alone.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
import time
from typing import Any, Iterable, Mapping, Optional, Sequence

# exit codes in the panes are spelled as JobFailed spells them
from jupyter_sched.frontend.jobs.reasons import exit_text as exit_text

STATE_COLORS: Mapping[str, str] = {
    "UNSUBMITTED": "#808080",
    "SUBMITTED": "#808080",
    "PENDING": "#808080",
    "RUNNING": "#208ffb",
    "SUCCEEDED": "#00a250",
    "FAILED": "#e75c58",
    "CANCELLED": "#ddb62b",
    "UNKNOWN": "#808080",
}

MONO = "font-family:var(--jp-code-font-family, Menlo, 'DejaVu Sans Mono', consolas, monospace)"
PANE_STYLE = (
    "font-family:var(--jp-ui-font-family, system-ui, sans-serif);font-size:13px;line-height:1.45;"
    "color:var(--jp-content-font-color1, inherit)"
)
"""The font of every pane, set on its outermost element: the live widget (ipywidgets' HTML sets a 28 px line
height) and the cell's record (JupyterLab's rendered-HTML styles) then look the same."""
TABLE_STYLE = "border-collapse:collapse;font-size:12px;line-height:1.45;margin:2px 0;table-layout:auto"
CELL_STYLE = "padding:1px 8px;text-align:left;vertical-align:top;line-height:1.45;border:none"
ROW_STYLE = "border-bottom:1px solid rgba(128,128,128,0.25);background:none"
CODE_STYLE = "background:rgba(128,128,128,0.12);border-radius:3px;padding:0 4px;font-size:12px"


NO_MATH = "tex2jax_ignore mathjax_ignore"
"""Classes MathJax 2 and 3 skip (JupyterLab, Notebook 7, nbconvert's templates): never typeset inside."""
_MATH_TRIGGER = re.compile(r"\$|\\(?=[(\[]|begin\b|ref\b|eqref\b)")


def esc(value: Any) -> str:
    """``html.escape(str(value))`` made safe from maths rendering (see the module docstring); None
    becomes an empty string. For element content only, never inside an attribute."""
    if value is None:
        return ""
    text = html.escape(str(value), quote=True)
    if "$" not in text and "\\" not in text:
        return text
    return _MATH_TRIGGER.sub(lambda m: f'<span class="{NO_MATH}">{m.group(0)}</span>', text)


def as_of(ts: Optional[float] = None) -> str:
    """``as of 14:02:11``: the moment a shown state was true (a saved notebook must not present an old
    state as current)."""
    return f"as of {fmt_clock(time.time() if ts is None else ts)}"


def pill(state: Any) -> str:
    """The state as a coloured pill: the word and its colour (UNKNOWN in italics)."""
    name = str(state)
    color = STATE_COLORS.get(name, "#808080")
    italic = ";font-style:italic" if name == "UNKNOWN" else ""
    return (
        f'<span class="jsched-pill" style="display:inline-block;padding:0 7px;border-radius:8px;'
        f"border:1px solid {color};background:{color}22;color:{color};font-weight:600;font-size:11px;"
        f'line-height:16px{italic}">{esc(name)}</span>'
    )


def fmt_clock(ts: Optional[float]) -> str:
    """A UNIX timestamp as local ``HH:MM:SS`` (with the date when it is not today); ``-`` for None."""
    if ts is None:
        return "-"
    when = _dt.datetime.fromtimestamp(ts)
    if when.date() == _dt.date.today():
        return when.strftime("%H:%M:%S")
    return when.strftime("%Y-%m-%d %H:%M:%S")


def fmt_duration(seconds: Optional[float]) -> str:
    """``4.2s``, ``3m05s``, ``2h03m``; ``-`` for None."""
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def elapsed(started: Optional[float], finished: Optional[float], now: Optional[float] = None) -> Optional[float]:
    """Seconds from ``started`` to ``finished`` (or to ``now`` while it runs)."""
    if started is None:
        return None
    end = finished if finished is not None else (time.time() if now is None else now)
    return end - started


def plural(n: int, word: str) -> str:
    """``1 line``, ``2 lines``, ``12,345 lines``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], raw: bool = False) -> str:
    """An HTML table. Cells are escaped unless ``raw`` (then the caller escaped them)."""
    cell = (lambda v: v) if raw else esc
    head = "".join(f'<th style="{CELL_STYLE};font-weight:600">{esc(h)}</th>' for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""
    body = "".join(
        f'<tr style="{ROW_STYLE}">' + "".join(f'<td style="{CELL_STYLE}">{cell(v)}</td>' for v in row) + "</tr>"
        for row in rows
    )
    return f'<table style="{TABLE_STYLE}">{thead}<tbody>{body}</tbody></table>'


def code(text: Any) -> str:
    """Inline monospace text that selects as one unit (for handles and command lines)."""
    return f'<code style="{MONO};{CODE_STYLE};user-select:all;white-space:pre-wrap">{esc(text)}</code>'


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table with columns padded to their widest cell."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(str(v))) for w, v in zip(widths, row)]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)
