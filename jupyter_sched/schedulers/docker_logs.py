"""Reading a replica container's log through the engine's logs endpoint.

Items follow the ``Scheduler.log_iter`` contract (whole lines ending in ``\\n``, ``\\r`` progress frames as
their own items, a final partial line at the end), assembled by a :class:`LineSplitter` *per stream* from
the raw multiplexed stream, which is parsed here in large reads (no per-frame socket reads, no whole-log
string). One splitter per stream because the engine stores a line longer than 16 KiB as several partial
records, and a line of the other stream can land between them: with streams combined, that line stays
whole and so does the long one (which one comes first is the engine's order of complete lines).

Following (``should_tail=True``) asks the engine for timestamps. When the follow stream ends, the
container is inspected: if it is still running (the engine ended the stream early, a known daemon
behaviour) or it is being restarted by its retry policy, the stream is re-opened with ``since`` = the last
timestamp seen; once it has ended, one more plain read from that timestamp picks up whatever the stream
missed. Frames at the resume timestamp that were already yielded are skipped, so nothing is lost or
repeated. A follow connection that breaks (an engine restart, a proxy) is resumed the same way; if the
engine cannot be reached any more, iteration raises ``DockerNotAvailableError`` (which says how to start
one). A plain read that breaks raises it too, rather than return a silently truncated log.

Limits of the engine (Docker 20.10, default ``json-file`` log driver): its log copier stores a record only
at ``\\n`` (or every 16 KiB, or at exit), so a ``\\r`` progress bar arrives when its line ends, not frame by
frame; and ``json-file`` stores each record as JSON text, so invalid UTF-8 is already U+FFFD when it is read
back -- including a multi-byte character that the 16 KiB split happens to cut in two (its bytes are lost on
disk). The ``local`` driver would keep the bytes, but on 20.10 it drops the ``\\n`` that ends a line longer
than 16 KiB, which is worse, so the replicas keep the engine's default driver.
"""

from __future__ import annotations

import calendar
import re
import struct
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from jupyter_sched.logs.lines import LineSplitter
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.docker_engine import lost_engine

if TYPE_CHECKING:  # pragma: no cover
    import docker

_HEADER = struct.Struct(">BxxxL")
_CHUNK = 1 << 16
_SYSTEM_ERR = 3
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_FIXED_TS_LEN = len("2006-01-02T15:04:05.000000000Z")
_RESUMABLE = ("running",)
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
        self._api = client.api
        self._id = container_id
        self._regex = re.compile(regex) if regex else None
        self._since = docker_time(since) if since else None
        self._until = docker_time(until) if until else None
        self._should_tail = should_tail and until is None
        self._stdout = stream in (Stream.STDOUT, Stream.COMBINED)
        self._stderr = stream in (Stream.STDERR, Stream.COMBINED)
        self._is_cancelled = is_cancelled
        self.resumes = 0
        """How many times following re-opened the stream (restarts, or a stream the engine ended early)."""

    def __iter__(self) -> Iterator[str]:
        items = _engine_errors(self._follow() if self._should_tail else self._read_all())
        if self._regex is None:
            return items
        pattern = self._regex
        return (item for item in items if pattern.search(item))

    # -- requests ----------------------------------------------------------------------------------------
    def _open(self, follow: bool, timestamps: bool, since: Optional[str]) -> Any:
        params: Dict[str, Any] = {
            "stdout": int(self._stdout),
            "stderr": int(self._stderr),
            "follow": int(follow),
            "timestamps": int(timestamps),
            "tail": "all",
        }
        if since:
            params["since"] = since
        if self._until:
            params["until"] = self._until
        url = self._api._url("/containers/{0}/logs", self._id)
        kwargs: Dict[str, Any] = {"params": params, "stream": True}
        if follow:
            kwargs["timeout"] = None  # a quiet replica may print nothing for a long time
        response = self._api._get(url, **kwargs)
        self._api._raise_for_status(response)
        return response

    def _chunks(self, response: Any, follow: bool) -> Iterator[bytes]:
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

    # -- one plain read: what is there now ----------------------------------------------------------------
    def _read_all(self) -> Iterator[str]:
        splitters = _Splitters()
        feed = splitters.feed
        unpack = _HEADER.unpack_from
        rest = b""
        for data in self._chunks(self._open(False, False, self._since), follow=False):
            if rest:
                data = rest + data
            n = len(data)
            pos = 0
            runs = _Runs()
            while pos + 8 <= n:
                kind, size = unpack(data, pos)
                end = pos + 8 + size
                if end > n:
                    break
                if kind == _SYSTEM_ERR:
                    raise RuntimeError(f"docker logs: {data[pos + 8 : end].decode('utf-8', 'replace')}")
                runs.add(kind, data[pos + 8 : end])
                pos = end
            rest = data[pos:]
            for kind, body in runs.done():
                yield from feed(kind, body)
        yield from splitters.flush()

    # -- follow until the replica has ended ---------------------------------------------------------------------
    def _follow(self) -> Iterator[str]:
        state = self._settle()
        if state not in _RESUMABLE:  # it has already ended: nothing to follow, one plain read
            if state != "removed":
                yield from self._read_all()
            return
        splitters = _Splitters()
        cursor = _Cursor(self._since)
        while True:
            received = False
            for kind, data in cursor.payloads(self._chunks(self._open(True, True, cursor.since), follow=True)):
                received = True
                yield from splitters.feed(kind, data)
            state = self._settle()
            if state not in _RESUMABLE:
                break
            self.resumes += 1
            if not received:
                time.sleep(0.05)  # an engine that keeps ending the stream at once: don't spin
        if state != "removed":  # the replica has ended: whatever the follow stream did not deliver
            for kind, data in cursor.payloads(self._chunks(self._open(False, True, cursor.since), follow=False)):
                yield from splitters.feed(kind, data)
        yield from splitters.flush()

    def _settle(self) -> str:
        """The container's state once it is running or has ended (waits through restarts and start-up)."""
        delay = 0.02
        while True:
            try:
                state = self._api.inspect_container(self._id)["State"]["Status"]
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


class _Cursor:
    """Where a timestamped read has got to: the last frame timestamp, and how many frames carried it."""

    def __init__(self, since: Optional[str]) -> None:
        self._initial = since
        self.last: Optional[bytes] = None
        self.same = 0

    @property
    def since(self) -> Optional[str]:
        return _since_of_ts(self.last) if self.last is not None else self._initial

    def payloads(self, chunks: Iterator[bytes]) -> Iterator[Tuple[int, bytes]]:
        """(stream id, joined payloads) per run of one stream's complete frames in each chunk, without
        their timestamps and without the frames this cursor has already passed."""
        unpack = _HEADER.unpack_from
        width = _FIXED_TS_LEN
        rest = b""
        skip_ts, skip = self.last, self.same  # a re-read starts at `last`: drop what was yielded already
        last, same = self.last, self.same
        try:
            for data in chunks:
                if rest:
                    data = rest + data
                n = len(data)
                pos = 0
                runs = _Runs()
                while pos + 8 <= n:
                    kind, size = unpack(data, pos)
                    end = pos + 8 + size
                    if end > n:
                        break
                    frame = data[pos + 8 : end]
                    pos = end
                    if kind == _SYSTEM_ERR:
                        raise RuntimeError(f"docker logs: {frame.decode('utf-8', 'replace')}")
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
                    runs.add(kind, body)
                rest = data[pos:]
                done = runs.done()
                if done:
                    self.last, self.same = last, same
                    yield from done
        finally:
            self.last, self.same = last, same


class _Runs:
    """Collects one chunk's frame payloads as runs of the same stream: (stream id, joined payloads)."""

    __slots__ = ("_runs", "_kind", "_parts")

    def __init__(self) -> None:
        self._runs: List[Tuple[int, bytes]] = []
        self._kind = -1
        self._parts: List[bytes] = []

    def add(self, kind: int, payload: bytes) -> None:
        if kind != self._kind:
            if self._parts:
                self._runs.append((self._kind, b"".join(self._parts)))
                self._parts = []
            self._kind = kind
        self._parts.append(payload)

    def done(self) -> List[Tuple[int, bytes]]:
        if self._parts:
            self._runs.append((self._kind, b"".join(self._parts)))
            self._parts = []
        return self._runs


class _Splitters:
    """A :class:`LineSplitter` per stream (see the module docstring). At the end, the streams' final
    partial lines come out in the order they began."""

    __slots__ = ("_by_kind", "_open")

    def __init__(self) -> None:
        self._by_kind: Dict[int, LineSplitter] = {}
        self._open: List[int] = []  # streams with a partial line, oldest first

    def feed(self, kind: int, data: bytes) -> List[str]:
        splitter = self._by_kind.get(kind)
        if splitter is None:
            splitter = self._by_kind[kind] = LineSplitter()
        items = splitter.feed(data)
        if splitter.pending:
            if kind not in self._open:
                self._open.append(kind)
        elif kind in self._open:
            self._open.remove(kind)
        return items

    def flush(self) -> List[str]:
        order = self._open + [kind for kind in self._by_kind if kind not in self._open]
        return [item for kind in order for item in self._by_kind[kind].flush()]


def _engine_errors(items: Iterator[str]) -> Iterator[str]:
    """``items``, with a lost connection to the engine raised as ``DockerNotAvailableError``."""
    try:
        yield from items
    except Exception as e:  # noqa: BLE001
        lost = lost_engine(e)
        if lost is not None:
            raise lost from e
        raise


def frames_of(data: bytes) -> List[Tuple[int, bytes]]:
    """Splits a complete multiplexed stream into (stream id, payload) frames (for tests and tools)."""
    frames = []
    pos = 0
    while pos + 8 <= len(data):
        kind, size = _HEADER.unpack_from(data, pos)
        frames.append((kind, data[pos + 8 : pos + 8 + size]))
        pos += 8 + size
    return frames
