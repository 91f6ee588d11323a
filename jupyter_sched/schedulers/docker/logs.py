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

import calendar
import re
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional

from jupyter_sched.logs.lines import LineSplitter
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.common.log_files import QUIET_S
from jupyter_sched.schedulers.docker.engine import engine_url, lost_engine, raise_for_status
from jupyter_sched.schedulers.docker.frames import Frame, frame_batches, frames_of, runs

if TYPE_CHECKING:  # pragma: no cover
    import docker

__all__ = ["DockerLogIterator", "docker_time", "frames_of", "Cursor", "Splitters", "QUIET_S"]

_CHUNK = 1 << 16
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FIXED_TS_LEN = len("2006-01-02T15:04:05.000000000Z")
RESUMABLE = ("running",)
_WAITING = ("restarting", "created", "paused", "removing")


def docker_time(when: datetime) -> str:
    """A datetime as the engine's ``seconds.nanoseconds``; a naive datetime is local time (like
    ``datetime.now()``), an aware one is exact."""
    delta = when.astimezone(timezone.utc) - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    return f"{seconds}.{delta.microseconds * 1000:09d}"


def _norm_ts(ts: bytes) -> bytes:
    """A frame timestamp in the fixed-width form, so that byte order is time order."""
    if len(ts) == _FIXED_TS_LEN:
        return ts
    head, _, frac = ts.rstrip(b"Z").partition(b".")
    return head[:19] + b"." + frac.ljust(9, b"0")[:9] + b"Z"


def _since_of_ts(ts: bytes) -> str:
    text = ts.decode("ascii")
    seconds = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return f"{seconds}.{text[20:29]}"


class DockerLogIterator:
    """Iterates the log of one replica container; see the module docstring."""

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
        self.api = client.api
        self.container_id = container_id
        self._regex = re.compile(regex) if regex else None
        self.since = docker_time(since) if since else None
        self._until = docker_time(until) if until else None
        self._should_tail = should_tail and until is None
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

    def __iter__(self) -> Iterator[str]:
        items = _engine_errors(self._follow() if self._should_tail else self._read_all())
        if self._regex is None:
            return items
        pattern = self._regex
        return (item for item in items if pattern.search(item))

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
        except Exception as e:  # noqa: BLE001
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
            except Exception as e:  # noqa: BLE001
                if getattr(e, "status_code", None) == 404:
                    return "removed"
                raise
            if state not in _WAITING:
                return state
            if state == "created" and self._is_cancelled():
                return state + " (cancelled)"
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

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
        from jupyter_sched.schedulers.docker.follow import Follow

        yield from Follow(self).items()


class Cursor:
    """Where a timestamped read has got to: the last frame timestamp, and how many frames carried it."""

    def __init__(self, since: Optional[str]) -> None:
        self._initial = since
        self.last: Optional[bytes] = None
        self.same = 0

    @property
    def since(self) -> Optional[str]:
        return _since_of_ts(self.last) if self.last is not None else self._initial

    def records(self, chunks: Iterable[bytes]) -> Iterator[List[Frame]]:
        """(stream id, payload) per record, without its timestamp and without the records this cursor
        has already passed; one list per chunk read."""
        width = _FIXED_TS_LEN
        skip_ts, skip = self.last, self.same  # a re-read starts at `last`: drop what was yielded already
        last, same = self.last, self.same
        try:
            for batch in frame_batches(chunks):
                out: List[Frame] = []
                for kind, frame in batch:
                    if frame[width : width + 1] == b" ":  # the engine's fixed-width timestamps
                        ts, body = frame[:width], frame[width + 1 :]
                    else:
                        cut = frame.find(b" ")
                        ts, body = _norm_ts(frame[:cut]), frame[cut + 1 :]
                    if skip_ts is not None:
                        if ts < skip_ts or (ts == skip_ts and skip > 0):
                            skip -= ts == skip_ts
                            continue
                        skip_ts = None
                    if ts == last:
                        same += 1
                    else:
                        last, same = ts, 1
                    out.append((kind, body))
                if out:
                    self.last, self.same = last, same
                    yield out
        finally:
            self.last, self.same = last, same

    def payloads(self, chunks: Iterable[bytes]) -> Iterator[Frame]:
        """Like :meth:`records`, with consecutive records of one stream joined (per chunk read)."""
        for batch in self.records(chunks):
            yield from runs(batch)


class Splitters:
    """A :class:`LineSplitter` per stream (see the module docstring). At the end, the streams' final
    partial lines come out in the order they began."""

    __slots__ = ("_by_kind", "_open")

    def __init__(self) -> None:
        self._by_kind: Dict[int, LineSplitter] = {}
        self._open: List[int] = []  # streams with a partial line, oldest first

    def feed(self, kind: int, data: bytes) -> List[str]:
        return self._track(kind, self._splitter(kind).feed(data))

    def feed_text(self, kind: int, text: str) -> List[str]:
        return self._track(kind, self._splitter(kind).feed_text(text))

    def pending(self, kind: int) -> bool:
        splitter = self._by_kind.get(kind)
        return bool(splitter and splitter.pending)

    def flush_one(self, kind: int) -> List[str]:
        """The stream's unterminated text as an item (it has been quiet); decoding state is kept."""
        splitter = self._by_kind.get(kind)
        if splitter is None or not splitter.pending:
            return []
        items = splitter.take_pending()
        if kind in self._open:
            self._open.remove(kind)
        return items

    def flush(self) -> List[str]:
        order = self._open + [kind for kind in self._by_kind if kind not in self._open]
        return [item for kind in order for item in self._by_kind[kind].flush()]

    def _splitter(self, kind: int) -> LineSplitter:
        splitter = self._by_kind.get(kind)
        if splitter is None:
            splitter = self._by_kind[kind] = LineSplitter()
        return splitter

    def _track(self, kind: int, items: List[str]) -> List[str]:
        if self._by_kind[kind].pending:
            if kind not in self._open:
                self._open.append(kind)
        elif kind in self._open:
            self._open.remove(kind)
        return items


def _engine_errors(items: Iterator[str]) -> Iterator[str]:
    """``items``, with a lost connection to the engine raised as ``DockerNotAvailableError``."""
    try:
        yield from items
    except Exception as e:  # noqa: BLE001
        lost = lost_engine(e)
        if lost is not None:
            raise lost from e
        raise
