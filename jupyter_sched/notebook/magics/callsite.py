"""Where a line magic's result goes: ``job = %sched_run ...`` assigns it, ``%sched_run ...`` alone shows it.

IPython turns ``job = %sched_run ARGS`` into ``job = get_ipython().run_line_magic('sched_run', 'ARGS')``
and displays only the value of a cell's last *expression*, so an assigned Job would show nothing (the
README's first example). The magic therefore looks at its call site: the frame that called
``run_line_magic``, and the instruction right after that call. A ``STORE_*`` there means the result is
assigned (so the magic displays the view itself, and an interrupt can still bind the Job to that name);
anything else (the cell's last expression, or an expression whose value is dropped) leaves display to
IPython, so nothing is shown twice. Reading bytecode beats parsing the cell's text: it is exact for a name
assigned on any line of a cell, inside functions too, and costs nothing. (``obj.attr = %sched_run`` loads
``obj`` after the call, so it counts as not assigned: it shows nothing, as before.) ``jupyter_sched.submit``
asks the same of the frame that called it (:func:`site_of`).
"""

from __future__ import annotations

import dis
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Optional

_SKIP = {"COPY", "DUP_TOP", "CACHE", "EXTENDED_ARG", "NOP"}
_STORES = {"STORE_NAME", "STORE_GLOBAL", "STORE_FAST", "STORE_DEREF", "STORE_ATTR", "STORE_SUBSCR"}


@dataclass
class CallSite:
    """The code that called the magic: ``target`` is what its result is stored in (a name, or
    ``None`` when it is not assigned); ``frame`` the caller's frame."""

    frame: FrameType
    store: Optional[str]
    target: Optional[str]

    @property
    def assigned(self) -> bool:
        return self.store is not None

    @property
    def global_name(self) -> Optional[str]:
        """The notebook variable the result is assigned to (None inside a function or for ``x.y =``)."""
        return self.target if self.store in ("STORE_NAME", "STORE_GLOBAL") else None

    def bind(self, namespace: Any, value: Any) -> bool:
        """Stores ``value`` under the assigned name when the caller is the notebook's top level (its
        globals are ``namespace``): what the assignment would have done had the magic returned."""
        if self.global_name and self.frame.f_globals is namespace:
            namespace[self.global_name] = value
            return True
        return False


def magic_call_site() -> Optional[CallSite]:
    """The call site of the running line magic, or None when it was not called through
    ``run_line_magic`` (e.g. a test calling the method directly)."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "run_line_magic":
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return None
    return site_of(caller)


def site_of(caller: FrameType) -> CallSite:
    """The call site of the call ``caller`` is making now (e.g. the frame that called
    ``jupyter_sched.submit``): assigned or not, to what."""
    after = next(
        (i for i in dis.get_instructions(caller.f_code) if i.offset > caller.f_lasti and i.opname not in _SKIP),
        None,
    )
    if after is None or after.opname not in _STORES:
        return CallSite(caller, None, None)
    target = after.argval if isinstance(after.argval, str) else None
    return CallSite(caller, after.opname, target)
