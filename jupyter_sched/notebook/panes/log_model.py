"""The log model rendered as HTML for the notebook's panes and records: :class:`HtmlLogMux`.

The model itself (terminals per source, write order, bounded memory) is
:class:`jupyter_sched.frontend.logview.log_model.LogMux`, which ``job.logs()`` uses without any of this. Here each
replica gets a gutter colour, stderr lines a red tint, and every character of log text is escaped (and made
safe from maths rendering, :func:`~jupyter_sched.notebook.panes.theme.esc`).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from jupyter_sched.frontend.logview.log_model import ALL, KEEP_LINES, MAX_LINE_CHARS, LogMux, Source
from jupyter_sched.logs.ansi import PALETTE_16
from jupyter_sched.notebook.panes.theme import esc

GUTTER_COLORS = (PALETTE_16[4], PALETTE_16[2], PALETTE_16[5], PALETTE_16[6], PALETTE_16[3], PALETTE_16[12])
STDERR_BG = "background:rgba(231,92,88,0.10)"


class HtmlLogMux(LogMux):
    """A :class:`LogMux` that renders its views as HTML (see the module docstring)."""

    def __init__(
        self,
        sources: Sequence[Source],
        keep_lines: int = KEEP_LINES,
        max_line_chars: int = MAX_LINE_CHARS,
        reorder_s: float = 0.0,
    ) -> None:
        super().__init__(sources, keep_lines, max_line_chars, reorder_s)
        self.colors: Dict[str, str] = {r: GUTTER_COLORS[i % len(GUTTER_COLORS)] for i, r in enumerate(self.replicas)}

    def to_html(self, view: str = ALL, last_n: int = 400, max_chars: Optional[int] = None) -> Tuple[str, int]:
        """The rows of ``view`` as escaped HTML lines (content of a ``<pre>``) and the hidden count.

        ``max_chars`` bounds the HTML: rows are rendered newest first until the next one would pass it
        (the newest is always shown), and the older ones are counted as hidden. Without it, 400 lines of
        4,000 characters with a colour per character would be tens of megabytes per update."""
        rows, hidden = self.rows(view, last_n)
        gutter = self.has_gutter(view)
        out: List[str] = []
        size = 0
        for n, (i, line) in enumerate(reversed(rows)):
            source = self.sources[i]
            body = line.to_html()
            # stderr keeps its "!" marker; the red tint is for errors, not for progress bars (tqdm writes
            # its frames to stderr): a line redrawn in place is not tinted
            tinted = source.is_stderr and not line.redrawn
            if gutter:
                mark = "!" if source.is_stderr else "|"
                color = "#e75c58" if tinted else self.colors[source.replica]
                body = (
                    f'<span style="color:{color};user-select:none">'
                    f"{esc(source.replica.ljust(self.width))} {mark} </span>{body}"
                )
            if tinted:
                body = f'<span style="{STDERR_BG}">{body}</span>'
            size += len(body) + 1
            if max_chars is not None and out and size > max_chars:
                hidden += len(rows) - n
                break
            out.append(body)
        return "\n".join(reversed(out)), hidden
