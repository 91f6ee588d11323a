"""Pure log-text model for ``jupyter_sched``: bytes in, bounded escaped HTML out.

The layer between a scheduler's raw output and a notebook log pane, with no I/O and no
IPython or ipywidgets imports (standard library only), so all of it is unit- and
property-testable:

* :mod:`.lines` -- :class:`LineSplitter`: byte chunks -> log items (incremental UTF-8,
  live ``\\r`` progress frames, bounded lines); :func:`split_lines`.
* :mod:`.escapes` -- :class:`EscapeTokenizer`: escape sequences, carried across pieces.
* :mod:`.ansi` -- SGR -> :class:`Style` / :class:`Span`; :func:`spans_to_html` with
  inline CSS and every character of log text escaped; :func:`strip_ansi`.
* :mod:`.terminal` -- :class:`TerminalBuffer`: terminal semantics for ``\\r``, ``\\n``,
  ``\\b``, ``ESC[K`` and colours, bounded lines, rendered as text or HTML.
* :mod:`.buffer` -- :class:`BoundedBuffer`: a ring of the last N items with counts.
* :mod:`.interleave` -- :func:`interleave`: stdout/stderr write order recovered from a combined log.
* :mod:`.reorder` -- timed items of several streams merged into time order, live, with a short bounded hold.
* :mod:`.control_strings` -- terminal control strings removed before job output reaches a terminal.
* :mod:`.metric_lines` -- metric records (``jupyter_sched.track``) as text: a metrics file's lines and the
  marked ``@@jupyter_sched:metrics {...}`` lines of stderr, parsed strictly (a torn line is None).

Typical flow, one model per replica *and* stream::

    splitter, term = LineSplitter(), TerminalBuffer()
    for chunk in reads:
        term.feed("".join(splitter.feed(chunk)))   # feed batches, not single lines
    term.feed("".join(splitter.flush()))
    html = term.to_html(last_n=200)                 # inside a <pre>
"""

from .ansi import (
    DEFAULT_STYLE,
    Color,
    Span,
    Style,
    apply_sgr,
    parse_ansi,
    spans_to_html,
    strip_ansi,
    style_css,
)
from .buffer import BoundedBuffer
from .escapes import Csi, EscapeTokenizer
from .interleave import interleave
from .lines import LineSplitter, split_lines
from .terminal import Line, TerminalBuffer

__all__ = [
    "BoundedBuffer", "Color", "Csi", "DEFAULT_STYLE", "EscapeTokenizer", "Line",
    "LineSplitter", "Span", "Style", "TerminalBuffer", "apply_sgr", "interleave", "parse_ansi",
    "spans_to_html", "split_lines", "strip_ansi", "style_css",
]
