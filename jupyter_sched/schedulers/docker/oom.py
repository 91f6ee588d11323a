"""Whether a container was killed for memory, when the engine's ``OOMKilled`` flag forgot to say so.

The engine learns of an out-of-memory kill from two events of the container runtime: the kernel's OOM
notice and the task's exit. When the exit is handled first, the flag stays ``false`` although the engine
still logs the container's ``oom`` event a moment later (seen here about once in 40 kills under load,
Docker 20.10 on cgroup v1). A replica that exited with 137 (SIGKILL) under a memory limit is therefore asked
about in the engine's event log: an ``oom`` event between its start and shortly after its end is the kill.

* The answer for an ended container never changes, so it is kept (per container id). A "no" is kept only
  once the container ended :data:`LATE_EVENT_SECONDS` ago: until then the event may be on its way.
* Asked within that window, the question waits for the event, at most until the window closes: the events
  call streams until its ``until`` time and is closed at the first ``oom``. Only a SIGKILLed container with a
  memory limit, no flag and no cancel pays that wait, once.
* The engine keeps only its last 256 events, so a container asked about long after its end on a busy engine
  may read "no": it then says what the flag said, as before.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, Optional

from jupyter_sched.schedulers.docker.record.state import parse_time

LATE_EVENT_SECONDS = 2.0
"""How long after a container's end its ``oom`` event may still arrive."""
SIGKILL_EXIT = 137
_KEEP = 1024  # answers kept (ended containers)


class OomEvents:
    """One scheduler's memo of which ended containers the engine's event log says were killed for memory."""

    def __init__(self) -> None:
        self._known: Dict[str, bool] = {}
        self._lock = threading.Lock()

    def marked(self, api: Any, info: Dict[str, Any], cancelled: bool) -> Dict[str, Any]:
        """``info`` (a container inspect), with ``State.OOMKilled`` set if the event log says it was
        killed for memory though the flag says not; else ``info`` itself."""
        state = info.get("State") or {}
        if state.get("OOMKilled") or cancelled or not _may_be_oom(info):
            return info
        if not self.killed(api, info["Id"], parse_time(state.get("StartedAt")), parse_time(state.get("FinishedAt"))):
            return info
        return {**info, "State": {**state, "OOMKilled": True}}

    def killed(self, api: Any, container_id: str, started: Optional[float], finished: Optional[float]) -> bool:
        """Whether the engine logged an ``oom`` event for the container between ``started`` and shortly
        after ``finished``."""
        with self._lock:
            if container_id in self._known:
                return self._known[container_id]
        now = time.time()
        end = (finished or now) + LATE_EVENT_SECONDS
        found = _oom_event(api, container_id, (started or end - 3600) - 1, end)
        if found or time.time() >= end:
            with self._lock:
                if len(self._known) >= _KEEP:
                    self._known.pop(next(iter(self._known)))
                self._known[container_id] = found
        return found


def _may_be_oom(info: Dict[str, Any]) -> bool:
    state = info.get("State") or {}
    memory = (info.get("HostConfig") or {}).get("Memory") or 0
    return state.get("Status") in ("exited", "dead") and state.get("ExitCode") == SIGKILL_EXIT and memory > 0


def _oom_event(api: Any, container_id: str, since: float, until: float) -> bool:
    """Whether the engine's event log has an ``oom`` event for the container in ``[since, until]``; if
    ``until`` is still ahead, this waits for the event until then."""
    events = api.events(
        since=f"{since:.3f}", until=f"{until:.3f}", filters={"container": container_id, "event": "oom"}, decode=True
    )
    try:
        for event in events:
            if event.get("status") == "oom" or event.get("Action") == "oom":
                return True
        return False
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
