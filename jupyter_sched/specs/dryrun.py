"""AppDryRunInfo: the exact request a scheduler would receive, without running anything."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Generic, Mapping, Optional, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.specs.app import AppDef
    from jupyter_sched.specs.runopts import CfgVal

T = TypeVar("T")


class AppDryRunInfo(Generic[T]):
    """Holds the scheduler-native request (``.request``) and how to print it (``repr(info)``).

    The scheduler sets the app and resolved cfg it was made from, and the runner sets the scheduler name;
    read them with :attr:`app`, :attr:`cfg` and :attr:`scheduler` (the ``_app``/``_cfg``/``_scheduler``
    attributes of TorchX's interface are kept for code written against it).
    """

    def __init__(self, request: T, fmt: Callable[[T], str]) -> None:
        self.request = request
        self._fmt = fmt
        self._app: Optional["AppDef"] = None
        self._cfg: Mapping[str, "CfgVal"] = {}
        self._scheduler: Optional[str] = None

    @property
    def app(self) -> Optional["AppDef"]:
        """The AppDef this request was made for (a copy: the caller's object is never modified)."""
        return self._app

    @property
    def cfg(self) -> Mapping[str, "CfgVal"]:
        """The resolved run options, defaults included."""
        return self._cfg

    @property
    def scheduler(self) -> Optional[str]:
        """The registry name of the scheduler (set by the runner)."""
        return self._scheduler

    def __repr__(self) -> str:
        return self._fmt(self.request)
