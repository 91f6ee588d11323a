"""One replica container's log endpoints: the history (``GET /containers/{id}/logs``), read plainly or
followed, and the container's state while a follow waits for it.

:class:`LogSource` is what a reader of the log needs from the engine; ``logs`` iterates it, and a follow
(``follow``) reads its history through it beside the live stream. It counts what following opened, so a test
can watch a follow resume.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Optional

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.docker.engine import engine_url, lost_engine, raise_for_status

if TYPE_CHECKING:  # pragma: no cover
    import docker

__all__ = ["RESUMABLE", "LogSource", "docker_time"]

_CHUNK = 1 << 16
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
RESUMABLE = ("running",)
_WAITING = ("restarting", "created", "paused", "removing")


def docker_time(when: datetime) -> str:
    """A datetime as the engine's ``seconds.nanoseconds``; a naive datetime is local time (like
    ``datetime.now()``), an aware one is exact."""
    delta = when.astimezone(timezone.utc) - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    return f"{seconds}.{delta.microseconds * 1000:09d}"


class LogSource:
    """The log endpoints of one replica container, with the reader's choices (streams, since, until)."""

    def __init__(
        self,
        client: "docker.DockerClient",
        container_id: str,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        stream: Stream = Stream.COMBINED,
        is_cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        self.api = client.api
        self.container_id = container_id
        self.since = docker_time(since) if since else None
        self._until = docker_time(until) if until else None
        self.stdout = stream in (Stream.STDOUT, Stream.COMBINED)
        self.stderr = stream in (Stream.STDERR, Stream.COMBINED)
        self._is_cancelled = is_cancelled
        self.resumes = 0
        """How many times following re-opened the history stream (restarts, or a stream the engine ended
        early, or a broken connection)."""
        self.follow_opens = 0
        """How many times following opened the history stream in follow mode."""
        self.live_opens = 0
        """How many times following opened the live stream."""

    # -- requests ----------------------------------------------------------------------------------------
    def open_logs(self, follow: bool, timestamps: bool, since: Optional[str]) -> Any:
        """The logs endpoint's streamed response."""
        params: Dict[str, Any] = {
            "stdout": int(self.stdout),
            "stderr": int(self.stderr),
            "follow": int(follow),
            "timestamps": int(timestamps),
            "tail": "all",
        }
        if since:
            params["since"] = since
        if self._until:
            params["until"] = self._until
        url = engine_url(self.api, "/containers/{0}/logs", self.container_id)
        kwargs: Dict[str, Any] = {"params": params, "stream": True}
        if follow:
            kwargs["timeout"] = None  # a quiet replica may print nothing for a long time
        response = self.api.get(url, **kwargs)
        raise_for_status(response)
        return response

    def chunks(self, response: Any, follow: bool) -> Iterator[bytes]:
        """Raw bytes of the response: big reads when reading a finished log, and whatever has arrived
        (one read of at most 64 KiB) when following, so lines show up as soon as they are written."""
        raw = response.raw
        try:
            if follow:
                read1 = getattr(raw, "read1", None)
                if read1 is None:  # urllib3 < 2
                    yield from raw.stream(_CHUNK, decode_content=False)
                    return
                while True:
                    data = read1(_CHUNK)
                    if not data:
                        return
                    yield data
            else:
                while True:
                    data = raw.read(_CHUNK)
                    if not data:
                        return
                    yield data
        except Exception as e:  # noqa: BLE001 - lost_engine decides
            if not follow or lost_engine(e) is None:
                raise
            # the follow connection broke: like a stream the engine ended, the caller inspects and resumes
        finally:
            response.close()

    def settle(self) -> str:
        """The container's state once it is running or has ended (waits through restarts and start-up);
        "removed" if it is gone."""
        delay = 0.02
        while True:
            try:
                state = self.api.inspect_container(self.container_id)["State"]["Status"]
            except Exception as e:  # noqa: BLE001 - the SDK's errors told apart by their 404; others re-raised
                if getattr(e, "status_code", None) == 404:
                    return "removed"
                raise
            if state not in _WAITING:
                return state
            if state == "created" and self._is_cancelled():
                return state + " (cancelled)"
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
