"""The usage extension of the scheduler contract: a mixin, so the TorchX-compatible methods stay as
they are and a backend that cannot measure simply does not inherit it.

``usage(app_id)`` returns one :class:`~jupyter_sched.specs.status.usage.UsageSample` per replica: a live sample
for a running replica, a final one (``running=False``, the totals kept after it ended) for one that
ended, and nothing for a replica that has not started. It never starts or stops anything.
"""

from __future__ import annotations

import abc
from typing import Dict, List, Sequence

from jupyter_sched.specs.errors import UnknownAppException
from jupyter_sched.specs.status.usage import UsageSample

__all__ = ["UsageMixin", "supports_usage"]


class UsageMixin(abc.ABC):
    """A scheduler that can say what each replica of an app uses (CPU, memory, GPU)."""

    @abc.abstractmethod
    def usage(self, app_id: str) -> List[UsageSample]:
        """One sample per started replica, in (role, replica) order. Raises ``UnknownAppException`` for an
        app the scheduler does not know."""

    def usage_many(self, app_ids: Sequence[str]) -> Dict[str, List[UsageSample]]:
        """:meth:`usage` of several apps at once, by app id; an app the scheduler does not know is left
        out. A backend whose first reading of a replica must wait (a CPU % needs two readings) overrides
        this to wait once for all of them."""
        out: Dict[str, List[UsageSample]] = {}
        for app_id in app_ids:
            try:
                out[app_id] = self.usage(app_id)
            except UnknownAppException:
                continue
        return out


def supports_usage(scheduler: object) -> bool:
    return isinstance(scheduler, UsageMixin)
