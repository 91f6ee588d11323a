"""The Docker engine's multiplexed stream format, parsed in one place.

``GET /containers/{id}/logs`` and ``POST /containers/{id}/attach`` of a container without a TTY answer with
the same framing: an 8-byte header (stream id, three zero bytes, big-endian payload length) then the
payload. Stream ids: 1 stdout, 2 stderr, 3 an error of the engine itself (raised here). Reads are parsed in
large chunks (no per-frame socket reads); a frame cut by a read boundary waits for its rest.
"""

from __future__ import annotations

import struct
from typing import Iterable, Iterator, List, Tuple

HEADER = struct.Struct(">BxxxL")
STDOUT, STDERR, SYSTEM_ERR = 1, 2, 3

Frame = Tuple[int, bytes]


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
