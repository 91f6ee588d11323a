"""The Docker engine's multiplexed stream format, parsed in one place.

``GET /containers/{id}/logs`` and ``POST /containers/{id}/attach`` of a container without a TTY answer with
the same framing: an 8-byte header (stream id, three zero bytes, big-endian payload length) then the
payload. Stream ids: 1 stdout, 2 stderr, 3 an error of the engine itself (raised here). Reads are parsed in
large chunks (no per-frame socket reads); a frame cut by a read boundary waits for its rest.

Above the framing: :class:`Cursor`, where a timestamped read of the log history has got to (so a follow
resumes without losing or repeating records), and :class:`Splitters`, a line splitter per stream that turns
payloads into log items.
"""

from __future__ import annotations

import calendar
import struct
import time
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from jupyter_sched.logs.lines import LineSplitter

HEADER = struct.Struct(">BxxxL")
STDOUT, STDERR, SYSTEM_ERR = 1, 2, 3

Frame = Tuple[int, bytes]
_FIXED_TS_LEN = len("2006-01-02T15:04:05.000000000Z")


def frame_batches(chunks: Iterable[bytes], join: bool = False) -> Iterator[List[Frame]]:
    """The complete frames of each chunk read, as one list per chunk (skipping chunks that complete none).
    With ``join``, consecutive payloads of one stream come joined, (stream id, joined payloads) per run:
    the fast path of a plain read, which needs no frame boundaries."""
    unpack = HEADER.unpack_from
    rest = b""
    for data in chunks:
        if rest:
            data = rest + data
        n = len(data)
        pos = 0
        groups: List[Tuple[int, List[bytes]]] = []
        kind = -1
        parts: List[bytes] = []
        while pos + 8 <= n:
            k, size = unpack(data, pos)
            end = pos + 8 + size
            if end > n:
                break
            if k == SYSTEM_ERR:
                raise RuntimeError(f"docker logs: {data[pos + 8 : end].decode('utf-8', 'replace')}")
            if k != kind:
                kind, parts = k, []
                groups.append((kind, parts))
            parts.append(data[pos + 8 : end])
            pos = end
        rest = data[pos:]
        if groups:
            if join:
                yield [(k, b"".join(p)) for k, p in groups]
            else:
                yield [(k, payload) for k, p in groups for payload in p]


def runs(frames: Iterable[Frame]) -> List[Frame]:
    """Consecutive payloads of the same stream joined: (stream id, joined payloads), in order."""
    out: List[Frame] = []
    kind = -1
    parts: List[bytes] = []
    for k, payload in frames:
        if k != kind:
            if parts:
                out.append((kind, b"".join(parts)))
            kind, parts = k, []
        parts.append(payload)
    if parts:
        out.append((kind, b"".join(parts)))
    return out


def frames_of(data: bytes) -> List[Frame]:
    """Splits a complete multiplexed stream into (stream id, payload) frames (for tests and tools)."""
    return [frame for batch in frame_batches([data]) for frame in batch]


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
