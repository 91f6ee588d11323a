"""The usage extension of the scheduler contract: a mixin, so the TorchX-compatible methods stay as
they are and a backend that cannot measure simply does not inherit it.

``usage(app_id)`` returns one :class:`~jupyter_sched.specs.usage.UsageSample` per replica: a live sample
for a running replica, a final one (``running=False``, the totals kept after it ended) for one that
ended, and nothing for a replica that has not started. It never starts or stops anything.
"""

from __future__ import annotations

import abc
from typing import List

from jupyter_sched.specs.usage import UsageSample

__all__ = ["UsageMixin", "supports_usage"]


class UsageMixin(abc.ABC):
    """A scheduler that can say what each replica of an app uses (CPU, memory, GPU)."""

    @abc.abstractmethod
    def usage(self, app_id: str) -> List[UsageSample]:
        """One sample per started replica, in (role, replica) order. Raises ``UnknownAppException`` for an
        app the scheduler does not know."""


def supports_usage(scheduler: object) -> bool:
    return isinstance(scheduler, UsageMixin)
