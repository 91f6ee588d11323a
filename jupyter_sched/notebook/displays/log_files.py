"""A replica's full logs as files next to the notebook, so the pane can link to them.

The pane shows a bounded tail; the whole log stays with the scheduler (files under the local log dir, the
Docker log driver, Slurm's output files), often outside what JupyterLab can open. "Save logs" writes each
replica's complete output, as the scheduler returns it (``\\r`` frames and colours kept, as in a
terminal's scrollback), to ``jsched-logs/<app id>/<role>-<k>.log`` under the kernel's working directory,
the notebook's own directory by default; relative links to them open in JupyterLab and download from
Notebook 7 or VS Code. Written through the Runner like every other log read: nothing here knows where a
backend keeps its files.
"""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from jupyter_sched.notebook.panes.theme import esc, fmt_clock, plural
from jupyter_sched.schedulers.api import Stream

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner

ROOT = "jsched-logs"


def save_logs(runner: "Runner", handle: str, app_id: str, replicas: Sequence[Tuple[str, int]],
              directory: str = ".") -> List[Tuple[str, int, str, int]]:  # fmt: skip
    """Writes each replica's whole log (stdout and stderr as the backend combines them); returns
    ``(role, k, relative path, lines)`` per replica. A replica that cannot be read gets a file saying why."""
    out = []
    base = os.path.join(ROOT, app_id)
    os.makedirs(os.path.join(directory, base), exist_ok=True)
    for role, k in replicas:
        rel = os.path.join(base, f"{role}-{k}.log")
        lines = 0
        with open(os.path.join(directory, rel), "w", encoding="utf-8", errors="replace") as f:
            for streams in (["combined"], ["stdout", "stderr"]):
                try:
                    for stream in streams:
                        if len(streams) > 1:
                            f.write(f"[jupyter_sched: {stream} of {role}/{k}]\n")
                        for item in runner.log_lines(handle, role, k, streams=Stream(stream)):
                            f.write(item)
                            lines += item.count("\n")
                    break
                except Exception as e:  # noqa: BLE001 - say so in the file; the other replicas still get theirs
                    if lines or len(streams) > 1:
                        f.write(f"\n[jupyter_sched: could not read the log of {role}/{k}: {type(e).__name__}: {e}]\n")
                        break
        out.append((role, k, rel, lines))
    return out


def links_html(saved: Sequence[Tuple[str, int, str, int]], as_of_ts: Optional[float] = None,
               ended: bool = False) -> str:  # fmt: skip
    """Relative links to the saved files (they open in JupyterLab). ``as_of_ts``: saved while the app ran,
    so the files hold what was logged by then, and the line says so (``ended``: the app has ended since,
    and a record cannot save again)."""
    items = [
        f'<a href="{html.escape(path, quote=True)}" target="_blank" style="text-decoration:underline">'
        f"{esc(role)}/{k}</a>"
        f' <span style="opacity:0.7">({plural(lines, "line")})</span>'
        for role, k, path, lines in saved
    ]
    if not items:
        return ""
    if not as_of_ts:
        when = ""
    elif ended:
        when = f" as of {fmt_clock(as_of_ts)}, saved while the app ran"
    else:
        when = f" as of {fmt_clock(as_of_ts)} (the app was still running; save again for more)"
    return f'<div style="font-size:12px;margin:2px 0">full logs{esc(when)}: {" &middot; ".join(items)}</div>'
