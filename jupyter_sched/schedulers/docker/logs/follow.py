"""Following a running replica container: its log history and its live output stream, joined.

Two reader threads feed one queue, which the consumer's generator drains:

* **history** (the logs endpoint, with timestamps): first one plain read of everything recorded so far,
  then a follow from the last timestamp seen. When the follow ends, the container is inspected: if it is
  still running (the engine ended the stream early, a known daemon behaviour; the connection broke) or
  is being restarted by its retry policy, the stream is re-opened from the last timestamp, skipping the
  records at that timestamp that were already read; once the replica has ended, one more plain read
  picks up whatever the follow missed. If the engine cannot be reached any more, iteration raises
  ``DockerNotAvailableError``. The thread reads at most ``_AHEAD`` batches ahead of the consumer.
* **live** (``attach``, opened *before* the history read, so the two overlap): every write of the
  container as it happens. It never waits for the consumer (a container blocks while an attached reader
  does not read), and is dropped if the consumer falls ``_LIVE_BACKLOG`` bytes behind. When it ends (the
  container exited or restarts, the connection broke) it is re-opened while the container runs.

Per stream, a :class:`~jupyter_sched.schedulers.docker.logs.seam.Seam` joins the two (see there), and a
:class:`~jupyter_sched.schedulers.docker.logs.frames.Splitters` turns the text into items; text without a line
end that stays quiet for ``QUIET_S`` becomes an item of its own.
"""

from __future__ import annotations

import codecs
import os
import queue
import socket
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from jupyter_sched.schedulers.common.log_files import QUIET_S
from jupyter_sched.schedulers.docker.logs.frames import STDERR, STDOUT, Cursor, Frame, Splitters, frame_batches
from jupyter_sched.schedulers.docker.logs.log_source import RESUMABLE, LogSource
from jupyter_sched.schedulers.docker.logs.seam import Seam

_AHEAD = 64
_LIVE_BACKLOG = 32 << 20
_RETRY_LIVE_S = 0.5


def _decoder() -> "codecs.IncrementalDecoder":
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _shutdown(fileno: int) -> None:
    """Interrupts a read blocked on the socket ``fileno`` in another thread."""
    try:
        sock = socket.socket(fileno=os.dup(fileno))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


class Follow:
    """One follow of one replica container; :meth:`items` is the generator a ``log_iter`` hands out."""

    def __init__(self, reader: LogSource) -> None:
        self._r = reader
        self._queue: "queue.Queue[Tuple[Any, ...]]" = queue.Queue()
        self._slots = threading.Semaphore(_AHEAD)
        self._stop = threading.Event()
        self._kinds = [k for k, on in ((STDOUT, reader.stdout), (STDERR, reader.stderr)) if on]
        self._history_fd: Optional[int] = None
        self._live_fd: Optional[int] = None
        self._live_epoch = 0
        self._live_backlog = 0
        self._lock = threading.Lock()

    # -- the consumer's side -------------------------------------------------------------------------------
    def items(self) -> Iterator[str]:
        seams: Dict[int, Seam] = {k: Seam() for k in self._kinds}
        history_text = {k: _decoder() for k in self._kinds}
        live_text = {k: _decoder() for k in self._kinds}
        splitters = Splitters()
        fed: Dict[int, float] = {}
        live_at: Dict[int, float] = {}
        live_up = self._open_live()
        live_retry_at: Optional[float] = None if live_up else time.monotonic() + _RETRY_LIVE_S
        threading.Thread(target=self._history, name="jsched-docker-history", daemon=True).start()
        try:
            while True:
                now = time.monotonic()
                waits = [at + QUIET_S - now for k, at in fed.items() if splitters.pending(k)]
                waits += [at + QUIET_S - now for k, at in live_at.items() if seams[k].showable]
                if live_retry_at is not None:
                    waits.append(live_retry_at - now)
                try:
                    msg = self._queue.get(timeout=max(0.0, min(waits)) if waits else None)
                except queue.Empty:
                    msg = ("tick",)
                what = msg[0]
                out: List[Tuple[int, str]] = []
                if what == "history":
                    self._slots.release()
                    for kind, bodies in _by_kind(msg[1]):
                        texts = [history_text[kind].decode(b) for b in bodies]
                        out.append((kind, seams[kind].on_history(texts)))
                elif what == "history_done":
                    out.extend((k, seams[k].history_done()) for k in self._kinds)
                elif what == "live":
                    with self._lock:
                        self._live_backlog -= sum(len(b) for _, b in msg[2])
                    for kind, body in msg[2] if msg[1] == self._live_epoch else ():
                        if kind in seams:
                            live_at[kind] = time.monotonic()
                            out.append((kind, seams[kind].on_live(live_text[kind].decode(body))))
                elif what == "live_end" and msg[1] == self._live_epoch:
                    out.extend((k, seams[k].live_ended()) for k in self._kinds)
                    live_retry_at = time.monotonic() + (0 if msg[2] else _RETRY_LIVE_S)
                elif what == "running" and live_retry_at is not None:
                    live_retry_at = time.monotonic()
                elif what == "end":
                    for kind in self._kinds:
                        tail = seams[kind].finish() + history_text[kind].decode(b"", final=True)
                        yield from splitters.feed_text(kind, tail)
                    yield from splitters.flush()
                    return
                elif what == "error":
                    raise msg[1]
                now = time.monotonic()
                for kind, text in out:
                    if text:
                        fed[kind] = now
                        yield from splitters.feed_text(kind, text)
                if self._queue.empty():  # text is quiet only if no more of it is waiting to be read
                    for kind, at in list(fed.items()):
                        if splitters.pending(kind) and now - at >= QUIET_S:
                            yield from splitters.flush_one(kind)
                    for kind, at in list(live_at.items()):
                        if now - at >= QUIET_S and seams[kind].showable:
                            yield from splitters.feed_text(kind, seams[kind].show())
                            yield from splitters.flush_one(kind)
                if live_retry_at is not None and now >= live_retry_at:
                    live_retry_at = now + _RETRY_LIVE_S
                    if all(s.settled for s in seams.values()) and self._open_live():
                        live_retry_at = None
                        seams = {k: Seam(matching=True) for k in self._kinds}
                        live_text = {k: _decoder() for k in self._kinds}
        finally:
            self._stop.set()
            with self._lock:
                fds = [fd for fd in (self._history_fd, self._live_fd) if fd is not None]
            for fd in fds:
                _shutdown(fd)

    # -- live stream ---------------------------------------------------------------------------------------------
    def _open_live(self) -> bool:
        """Attaches to the container's output (only while it runs); False if that is not possible now."""
        r = self._r
        try:
            if r.api.inspect_container(r.container_id)["State"]["Status"] not in RESUMABLE:
                return False
            sock = r.api.attach_socket(
                r.container_id, params={"stdout": int(r.stdout), "stderr": int(r.stderr), "stream": 1, "logs": 0}
            )
        except Exception:  # noqa: BLE001 - the live stream is an addition; the history stays complete
            return False
        self._live_epoch += 1
        r.live_opens += 1
        with self._lock:
            self._live_fd = sock.fileno()
        threading.Thread(
            target=self._live, args=(sock, self._live_epoch), name="jsched-docker-live", daemon=True
        ).start()
        return True

    def _live(self, sock: Any, epoch: int) -> None:
        from docker.utils.socket import read

        gave_up = False
        try:
            for batch in frame_batches(iter(lambda: read(sock, 1 << 16) or b"", b"")):
                size = sum(len(b) for _, b in batch)
                with self._lock:
                    self._live_backlog += size
                    gave_up = self._live_backlog > _LIVE_BACKLOG
                if gave_up or self._stop.is_set():
                    break
                self._queue.put(("live", epoch, batch))
        except Exception:  # noqa: BLE001 - a broken live stream: the history carries on
            pass
        finally:
            with self._lock:
                if self._live_fd == _fileno(sock):
                    self._live_fd = None
            try:
                sock.close()
            except OSError:
                pass
            self._queue.put(("live_end", epoch, not gave_up))

    # -- history --------------------------------------------------------------------------------------------------
    def _history(self) -> None:
        r = self._r
        cursor = Cursor(r.since)
        try:
            self._read(cursor, follow=False)
            self._queue.put(("history_done",))
            while not self._stop.is_set():
                received = self._read(cursor, follow=True)
                state = r.settle()
                if state not in RESUMABLE:
                    break
                r.resumes += 1
                self._queue.put(("running",))
                if not received:
                    time.sleep(0.05)  # an engine that keeps ending the stream at once: don't spin
            else:
                return
            if state != "removed":  # the replica has ended: whatever the follow stream did not deliver
                self._read(cursor, follow=False)
            self._queue.put(("end",))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, which raises it
            if not self._stop.is_set():
                self._queue.put(("error", e))

    def _read(self, cursor: Cursor, follow: bool) -> bool:
        r = self._r
        response = r.open_logs(follow, True, cursor.since)
        with self._lock:
            self._history_fd = _fileno(response.raw)
        r.follow_opens += follow
        received = False
        try:
            for batch in cursor.records(r.chunks(response, follow=follow)):
                received = True
                while not self._slots.acquire(timeout=0.5):
                    if self._stop.is_set():
                        return received
                if self._stop.is_set():
                    return received
                self._queue.put(("history", batch))
        finally:
            with self._lock:
                self._history_fd = None
        return received


def _fileno(obj: Any) -> Optional[int]:
    try:
        return int(obj.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor (not a socket, closed, unsupported)
        return None


def _by_kind(frames: List[Frame]) -> List[Tuple[int, List[bytes]]]:
    """Consecutive records of one stream grouped: (stream id, [payload, ...]), in order."""
    out: List[Tuple[int, List[bytes]]] = []
    for kind, body in frames:
        if out and out[-1][0] == kind:
            out[-1][1].append(body)
        else:
            out.append((kind, [body]))
    return out
