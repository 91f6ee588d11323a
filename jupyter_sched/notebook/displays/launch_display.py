"""``job = jupyter_sched.submit(...)`` shows the job, as ``job = %sched_run ...`` does.

IPython displays only a cell's last expression, so an assigned Job would show nothing and give no sign
that anything started. ``submit`` therefore looks at the code that called it (:mod:`.callsite`): when
the Job is stored (``job = submit(...)``, on any line of a cell or inside a function), it displays the
job there, the live panes in a kernel with widgets, else its record; IPython's own display of ``job``
later in the same cell is then one line, not a second pane. A call whose value is used otherwise
(``submit(f).result()``, ``[submit(f, x) for x in xs]``) or is the cell's last expression shows nothing
more than IPython shows. Outside IPython nothing is displayed.
"""

from __future__ import annotations

from types import FrameType
from typing import Any


def show_if_assigned(job: Any, caller: FrameType) -> bool:
    """Displays ``job`` if ``caller`` (the frame that called ``submit``) stores it; True if it did."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    if get_ipython() is None:
        return False
    from jupyter_sched.notebook.magics.callsite import site_of

    if not site_of(caller).assigned:
        return False
    from IPython.display import display

    from jupyter_sched.notebook.displays.job_display import shown_in_this_cell

    display(job)
    shown_in_this_cell(job)
    return True
