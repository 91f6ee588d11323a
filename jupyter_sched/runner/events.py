"""Runner events: one record per Runner API call, written through Python ``logging``.

TorchX's runner wraps each of its API calls in ``log_event(...)`` and code written for it (and tests)
patch ``runner.api.log_event``; ours keeps that name and shape. Each call becomes a :class:`RunnerEvent`
(which call, on which scheduler and session, for which app, how long it took, the exception if it
raised), logged at DEBUG on the logger ``jupyter_sched.events`` with the event itself attached to the
log record as ``record.event``. Plain ``logging`` rather than a telemetry client: nothing leaves the
process unless the user adds a handler, and any handler (a file, a JSON shipper, a test's caplog) works::

    logging.getLogger("jupyter_sched.events").setLevel(logging.DEBUG)
    logging.getLogger("jupyter_sched.events").addHandler(logging.StreamHandler())

When the logger is not enabled for DEBUG an event costs two clock reads and no serialisation. What is
logged has its secrets masked by the one rule (:mod:`jupyter_sched.specs.output.masking`): the run options (an
``env`` option's ``API_TOKEN``), a workspace URL's credentials and the text of the exception, so no
handler, however it is set up, can print one.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
import traceback
from types import TracebackType
from typing import Any, Dict, Optional, Type

from jupyter_sched.specs.output.masking import mask_text, mask_tree

LOGGER_NAME = "jupyter_sched.events"
logger: logging.Logger = logging.getLogger(LOGGER_NAME)


@dataclasses.dataclass
class RunnerEvent:
    """What one Runner API call did. Times are in microseconds; ``raw_exception`` is the formatted
    traceback of an exception the call raised (None when it returned)."""

    session: str
    scheduler: str
    api: str
    app_id: Optional[str] = None
    app_image: Optional[str] = None
    runcfg: Optional[str] = None
    workspace: Optional[str] = None
    raw_exception: Optional[str] = None
    cpu_time_usec: Optional[int] = None
    wall_time_usec: Optional[int] = None
    start_epoch_time_usec: Optional[int] = None

    def serialize(self) -> str:
        """The event as one JSON object (what the log message carries)."""
        return json.dumps(dataclasses.asdict(self))

    @staticmethod
    def deserialize(data: "str | RunnerEvent") -> "RunnerEvent":
        if isinstance(data, RunnerEvent):
            return data
        fields = {f.name for f in dataclasses.fields(RunnerEvent)}
        loaded: Dict[str, Any] = json.loads(data)
        return RunnerEvent(**{k: v for k, v in loaded.items() if k in fields})

    def __str__(self) -> str:
        return self.serialize()

    def masked(self) -> "RunnerEvent":
        """A copy with secrets masked: in the run options (JSON), the workspace and the exception's text."""
        return dataclasses.replace(
            self,
            runcfg=_masked_cfg(self.runcfg),
            workspace=mask_text(self.workspace) if self.workspace else self.workspace,
            raw_exception=mask_text(self.raw_exception) if self.raw_exception else self.raw_exception,
        )


def _masked_cfg(runcfg: Optional[str]) -> Optional[str]:
    if not runcfg:
        return runcfg
    try:
        return json.dumps(mask_tree(json.loads(runcfg)), default=str)
    except ValueError:
        return mask_text(runcfg)


def record(event: RunnerEvent) -> None:
    """Logs ``event`` on ``jupyter_sched.events`` (DEBUG), secrets masked, if anything listens at that
    level."""
    if logger.isEnabledFor(logging.DEBUG):
        shown = event.masked()
        logger.debug(shown.serialize(), extra={"event": shown})


class log_event:  # noqa: N801  (TorchX's name, which code and tests patch)
    """Context manager that records one Runner API call when the block ends, raised or not.

    ``with log_event("status", "local_cwd", app_id, session="default") as ev: ...``; the block may fill in
    what it learns (``ev.event.app_id = ...`` once a submit returns the id). Exceptions propagate.
    """

    def __init__(
        self,
        api: str,
        scheduler: Optional[str] = None,
        app_id: Optional[str] = None,
        app_image: Optional[str] = None,
        runcfg: Optional[str] = None,
        workspace: Optional[str] = None,
        session: Optional[str] = None,
    ) -> None:
        self.event = RunnerEvent(
            session=session or "",
            scheduler=scheduler or "",
            api=api,
            app_id=app_id,
            app_image=app_image,
            runcfg=runcfg,
            workspace=workspace,
        )
        self._cpu_ns = 0
        self._wall_ns = 0

    def __enter__(self) -> "log_event":
        self._cpu_ns = time.process_time_ns()
        self._wall_ns = time.perf_counter_ns()
        self.event.start_epoch_time_usec = time.time_ns() // 1000
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.event.cpu_time_usec = (time.process_time_ns() - self._cpu_ns) // 1000
        self.event.wall_time_usec = (time.perf_counter_ns() - self._wall_ns) // 1000
        if exc_type is not None:
            self.event.raw_exception = "".join(traceback.format_exception(exc_type, exc, tb))
        record(self.event)
