"""How an app is named in stream and error output that a notebook front end turns links into.

JupyterLab (4.x) links ``word://...`` in a cell's stream and error output, starting at the last letters
before ``://``: a handle such as ``local_cwd://default/train-b3k2x9q0d1`` printed there becomes plain
``local_`` followed by a dead ``cwd://default/train-b3k2x9q0d1`` link, whatever quotes or backticks
surround it. Such output names an app by its id and scheduler instead (:func:`app_label`); the id finds it
in its session (``%sched_job train-b3k2x9q0d1``), and HTML output (the panes) still shows the handle.
"""

from __future__ import annotations

from jupyter_sched.specs.status.handles import parse_app_handle


def app_label(handle: str) -> str:
    """``train-b3k2x9q0d1 on local_cwd`` for ``local_cwd://default/train-b3k2x9q0d1``; anything that is not
    a handle is returned as given."""
    try:
        scheduler, _, app_id = parse_app_handle(handle)
    except Exception:  # noqa: BLE001 - not a handle: say it as given
        return handle
    return f"{app_id} on {scheduler}"
