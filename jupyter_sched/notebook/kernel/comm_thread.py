"""Widget messages of our panes handled while a cell blocks (``%sched_run --wait``, ``job.wait()``).

A kernel runs one cell at a time on its main thread; a click in a pane is a ``comm_msg`` on the shell
channel, so while a cell blocks in a wait loop the click waits for the cell to end: Cancel "does nothing".
ipykernel 7 has *subshells* (JEP 91): extra shell threads with their own message loops, and it routes a
``comm_msg`` to the subshell its comm names (``_reply_subshell_for``, ipykernel >= 7.4). So the first time
a pane is shown we ask the kernel for one subshell of our own (as a ``create_subshell_request`` does: the
subshell manager creates it on the shell-channel thread, where we schedule the call and wait for it) and
point our widgets' comms at it: their clicks are then handled on that thread whatever the main thread is
doing. The handlers are already thread-safe (the panes take their locks; clicks could always arrive on
another thread). A click handled there answers with busy/idle status messages of its own, as any
subshell's requests do.

Why not poll the shell channel from the wait loop, as ``jupyter_ui_poll`` does: that replaces the kernel's
``execute_request`` handler and re-enters its event loop, which ipykernel 7 runs on a separate shell-channel
thread; routing a comm to a subshell is the kernel's own mechanism. Elsewhere (ipykernel 6, another kernel,
no kernel) nothing changes: clicks are handled when the cell ends, as before.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

CREATE_TIMEOUT = 10.0
_LOCK = threading.Lock()
_SUBSHELL: Optional[str] = None
_TRIED = False


def _kernel() -> Any:
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return None
    return Kernel.instance() if Kernel.initialized() else None


def subshell_id() -> Optional[str]:
    """The id of our subshell, created on first use; None where the kernel has no subshells."""
    global _SUBSHELL, _TRIED
    with _LOCK:
        if _TRIED:
            return _SUBSHELL
        _TRIED = True
        kernel = _kernel()
        channel = getattr(kernel, "shell_channel_thread", None)
        manager = getattr(channel, "manager", None)
        create = getattr(manager, "_create_subshell", None)
        io_loop = getattr(channel, "io_loop", None)
        if create is None or io_loop is None:
            return None
        made: list = []
        done = threading.Event()

        def on_shell_channel_thread() -> None:  # where the manager creates subshells (JEP 91 requests)
            try:
                made.append(create())
            except Exception:  # noqa: BLE001 - no subshell: clicks wait for the cell, as without this module
                pass
            finally:
                done.set()

        io_loop.add_callback(on_shell_channel_thread)
        if done.wait(CREATE_TIMEOUT) and made:
            _SUBSHELL = str(made[0])
        return _SUBSHELL


def serve_on_side_thread(*widgets: Any) -> bool:
    """Routes the front end's messages to ``widgets`` to our subshell (so they are handled while a cell
    blocks); True if they are. A widget without a kernel comm is left alone."""
    routed = False
    for widget in widgets:
        comm = getattr(widget, "comm", None)
        if comm is None or not hasattr(comm, "_reply_subshell_for"):
            continue
        sid = subshell_id()
        if sid is None:
            return False
        comm._reply_subshell_for = _route(sid)
        routed = True
    return routed


def _route(sid: str) -> Callable[[Any, Any], str]:
    def route(data: Any, default: Any) -> str:
        return sid

    return route
