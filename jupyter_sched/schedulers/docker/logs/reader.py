"""Reading a replica container's log: the engine's log history, and its live output while following.

Items follow the ``Scheduler.log_iter`` rule that every backend shares (written out in ``log_files``):

* a line the program ended with ``\\n`` is one item (``\\r\\n`` stays inside it);
* a ``\\r`` progress frame is an item of its own;
* while following, text without a line end that has been quiet for ``QUIET_S`` is an item of its own,
  so a prompt or a slow progress bar shows at once; what follows it on that line is the next item;
* a snapshot never cuts a line; the final text of a stream without a line end is its last item.

Concatenating the items of one stream gives back exactly what the program wrote (see ``seam`` for
the one exception of a follow that starts in the middle of a ``\\r``-framed line). Items are assembled by
a :class:`LineSplitter` *per stream*: the engine stores a line longer than 16 KiB as several partial
records, and a line of the other stream can land between them; with streams combined, that line stays
whole and so does the long one.

A plain read (``should_tail=False``, or a replica that has ended) is one request to the logs endpoint,
parsed in large reads. A follow of a running replica reads two sources (see ``follow``): the
history from the logs endpoint, resumable by timestamp, and the live stream from ``attach``, because the
``json-file`` driver stores a record only at ``\\n`` (or every 16 KiB, or at exit) and so would deliver a
``\\r`` bar only when its line ends. ``seam`` joins the two without losing or repeating text.

Limits of the engine (Docker 20.10, default ``json-file`` log driver): it stores each record as JSON
text, so invalid UTF-8 is already U+FFFD when it is read back, including a multi-byte character that the
16 KiB split happens to cut in two (its bytes are lost on disk). The ``local`` driver would keep the
bytes, but on 20.10 it drops the ``\\n`` that ends a line longer than 16 KiB, which is worse, so the
replicas keep the engine's default driver.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.docker.engine import lost_engine
from jupyter_sched.schedulers.docker.logs.follow import Follow
from jupyter_sched.schedulers.docker.logs.frames import Splitters, frame_batches
from jupyter_sched.schedulers.docker.logs.log_source import RESUMABLE, LogSource

if TYPE_CHECKING:  # pragma: no cover
    import docker

__all__ = ["DockerLogIterator"]


class DockerLogIterator(LogSource):
    """Iterates the log of one replica container (a :class:`LogSource`); see the module docstring."""

    def __init__(
        self,
        client: "docker.DockerClient",
        container_id: str,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        stream: Stream = Stream.COMBINED,
        is_cancelled: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__(client, container_id, since, until, stream, is_cancelled)
        self._regex = re.compile(regex) if regex else None
        self._should_tail = should_tail and until is None

    def __iter__(self) -> Iterator[str]:
        items = _engine_errors(self._follow() if self._should_tail else self._read_all())
        if self._regex is None:
            return items
        pattern = self._regex
        return (item for item in items if pattern.search(item))

    # -- one plain read: what is there now ----------------------------------------------------------------
    def _read_all(self) -> Iterator[str]:
        splitters = Splitters()
        feed = splitters.feed
        for batch in frame_batches(self.chunks(self.open_logs(False, False, self.since), follow=False), join=True):
            for kind, body in batch:
                yield from feed(kind, body)
        yield from splitters.flush()

    # -- follow until the replica has ended ---------------------------------------------------------------------
    def _follow(self) -> Iterator[str]:
        state = self.settle()
        if state not in RESUMABLE:  # it has already ended: nothing to follow, one plain read
            if state != "removed":
                yield from self._read_all()
            return
        yield from Follow(self).items()


def _engine_errors(items: Iterator[str]) -> Iterator[str]:
    """``items``, with a lost connection to the engine raised as ``DockerNotAvailableError``."""
    try:
        yield from items
    except Exception as e:  # noqa: BLE001 - lost_engine decides
        lost = lost_engine(e)
        if lost is not None:
            raise lost from e
        raise
