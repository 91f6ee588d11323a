"""The writer behind :mod:`jupyter_sched.track`: calls append to a queue, a thread writes them.

The call that logs (:meth:`Recorder.log`) checks its arguments, stamps the record (``seq``, time, step) and
appends it to a deque: no I/O, no lock, no JSON. A daemon thread writes what is queued at most once a
second; :meth:`Recorder.flush` writes it at once (from the caller's thread), and so does the exit (atexit,
and SIGTERM when nobody else handles it: the handler writes, then lets the signal kill the process as
before, so a cancelled replica keeps its last records and its exit status).

Where records go (see :mod:`.layout`): appended to ``<stem>.jsonl`` in the metrics directory, with the
summary rewritten atomically beside it when it changed; or, without a directory, as marked lines written to
file descriptor 2 in one ``write`` each batch. A failing write (a full disk, a removed directory) stops the
metrics, never the job: one line on stderr says so and later records are dropped.

A record is one JSON object per line, ``{"v":1,"w":WRITER,"seq":N,"t":SECONDS,...}`` with one of
``"step":S,"metrics":{KEY:VALUE,...}``, ``"define":{KEY:"min"|"max"}`` or ``"summary":{KEY:VALUE,...}``;
``seq`` increases strictly per writer (``w``, one process), so a record seen both in a file and on stderr
counts once.
"""

from __future__ import annotations

import atexit
import collections
import os
import signal
import sys
import threading
import time
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple

from jupyter_sched.track.layout import (
    LINE_MARK,
    METRICS_OWNER_ENV,
    RECORDS_SUFFIX,
    STOP_ALL,
    STOP_SUFFIX,
    SUMMARY_SUFFIX,
    hand_over,
    replica_stem,
)
from jupyter_sched.track.values import SummaryValue, check_key, encode_number, to_number, to_summary_value

FLUSH_INTERVAL = 1.0
"""Seconds between the writer thread's writes."""
STOP_CHECK_INTERVAL = 0.2
"""``should_stop`` looks for the stop file at most this often (a training loop may ask every step)."""
MAX_CACHED_KEYS = 10_000

#: one queued record: (seq, t, kind, step, payload); kind "m" metrics, "d" define, "s" summary
Queued = Tuple[int, float, str, int, Any]


class MetricStats:
    """One key's summary: count, last, min and max with the step of each (NaN counts, but is never a min or
    max), and the goal if one was defined."""

    __slots__ = ("count", "last", "last_step", "min", "min_step", "max", "max_step", "goal")

    def __init__(self) -> None:
        self.count = 0
        self.last: Optional[float] = None
        self.last_step: Optional[int] = None
        self.min: Optional[float] = None
        self.min_step: Optional[int] = None
        self.max: Optional[float] = None
        self.max_step: Optional[int] = None
        self.goal: Optional[str] = None

    def to_json(self) -> str:
        def num(x: Optional[float]) -> str:
            return "null" if x is None else encode_number(x)

        def st(x: Optional[int]) -> str:
            return "null" if x is None else str(x)

        goal = "null" if self.goal is None else f'"{self.goal}"'
        return (
            f'{{"count":{self.count},"last":{num(self.last)},"last_step":{st(self.last_step)},'
            f'"min":{num(self.min)},"min_step":{st(self.min_step)},"max":{num(self.max)},'
            f'"max_step":{st(self.max_step)},"goal":{goal}}}'
        )


def encode_summary_value(value: SummaryValue) -> str:
    import json

    if isinstance(value, float):
        return encode_number(value)
    return json.dumps(value)


class Recorder:
    """One process's metrics writer for one replica (``metrics_dir`` None: marked stderr lines)."""

    def __init__(self, job_id: str, role: str, replica: int, metrics_dir: Optional[str]) -> None:
        self.job_id, self.role, self.replica, self.metrics_dir = job_id, role, replica, metrics_dir
        self.stem = replica_stem(role, replica)
        self.writer_id = f"{os.getpid():x}-{os.urandom(3).hex()}"
        self.queue: Deque[Queued] = collections.deque()
        self.seq = 0
        self.next_step = 0
        self.keys: set = set()
        self.stats: Dict[str, MetricStats] = {}
        self.goals: Dict[str, str] = {}
        self.user_summary: Dict[str, SummaryValue] = {}
        self.summary_dirty = False
        self.last_seq = -1
        self.io_lock = threading.Lock()
        self.thread: Optional[threading.Thread] = None
        self.closed = threading.Event()
        self.failed: Optional[str] = None
        self.file: Optional[Any] = None
        self.stop_seen = False
        self.stop_checked = 0.0
        self.owner = os.environ.get(METRICS_OWNER_ENV)
        """Who reads the files when this replica runs as another user (``layout.hand_over``)."""

    # -- the calls (any thread; no I/O) -----------------------------------------------------------------
    def key(self, key: Any) -> str:
        if key in self.keys:
            return key
        check_key(key)
        if len(self.keys) < MAX_CACHED_KEYS:
            self.keys.add(key)
        return key

    def log(self, metrics: Mapping[str, Any], step: Optional[int], t: Optional[float] = None) -> None:
        if not isinstance(metrics, Mapping):
            raise TypeError(f"metrics must be a dict of key -> number, not a {type(metrics).__name__}")
        values: Dict[str, float] = {}
        for k, v in metrics.items():
            if k not in self.keys:
                self.key(k)
            tv = type(v)
            values[k] = v if tv is float else float(v) if tv is int or tv is bool else to_number(k, v)
        if step is None:
            step = self.next_step
        elif type(step) is not int:
            step = self.check_step(step)
        self.next_step = step + 1
        self.enqueue("m", step, values, t)

    @staticmethod
    def check_step(step: Any) -> int:
        if isinstance(step, bool) or not hasattr(type(step), "__index__"):
            raise TypeError(f"step must be an integer (or None for the next step), not {type(step).__name__}")
        return int(step.__index__())

    def define(self, key: str, goal: str) -> None:
        self.key(key)
        if goal not in ("min", "max"):
            raise ValueError(f"define_metric({key!r}, goal={goal!r}): goal is 'min' or 'max'")
        self.enqueue("d", 0, {key: goal}, None)

    def set_summary(self, key: str, value: Any) -> SummaryValue:
        self.key(key)
        v = to_summary_value(key, value)
        self.enqueue("s", 0, {key: v}, None)
        return v

    def enqueue(self, kind: str, step: int, payload: Any, t: Optional[float]) -> None:
        if self.failed is not None:
            return
        seq = self.seq
        self.seq = seq + 1
        self.queue.append((seq, time.time() if t is None else t, kind, step, payload))
        if self.thread is None:
            self.start()

    # -- the writer --------------------------------------------------------------------------------------
    def start(self) -> None:
        with self.io_lock:
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self.run, name="jupyter_sched.track writer", daemon=True)
            self.thread.start()
        atexit.register(self.close)
        install_sigterm(self)

    def run(self) -> None:
        while not self.closed.wait(FLUSH_INTERVAL):
            self.flush()

    def close(self) -> None:
        """Writes what is queued and stops the thread (at exit; idempotent)."""
        self.closed.set()
        self.flush()
        with self.io_lock:
            if self.file is not None:
                try:
                    self.file.close()
                except OSError:
                    pass
                self.file = None

    def flush(self) -> None:
        """Writes every queued record now (from the calling thread)."""
        with self.io_lock:
            try:
                self.write_queued()
            except Exception as e:  # noqa: BLE001 - a failing write stops the metrics, never the job
                self.fail(e)

    def write_queued(self) -> None:
        lines: List[str] = []
        w = self.writer_id
        all_stats = self.stats
        while True:
            try:
                seq, t, kind, step, payload = self.queue.popleft()
            except IndexError:
                break
            if kind == "m":
                parts = []
                for k, v in payload.items():
                    # repr of a finite float is exact JSON (v - v is 0.0 only for finite values)
                    parts.append(f'"{k}":{repr(v) if v - v == 0.0 else encode_number(v)}')
                    stats = all_stats.get(k)
                    if stats is None:
                        stats = all_stats[k] = MetricStats()
                        stats.goal = self.goals.get(k)
                    stats.count += 1
                    stats.last, stats.last_step = v, step
                    if v == v:
                        if stats.min is None or v < stats.min:
                            stats.min, stats.min_step = v, step
                        if stats.max is None or v > stats.max:
                            stats.max, stats.max_step = v, step
                body = ",".join(parts)
                lines.append(f'{{"v":1,"w":"{w}","seq":{seq},"t":{t:.6f},"step":{step},"metrics":{{{body}}}}}')
            elif kind == "d":
                body = ",".join(f'"{k}":"{g}"' for k, g in payload.items())
                lines.append(f'{{"v":1,"w":"{w}","seq":{seq},"t":{t:.6f},"define":{{{body}}}}}')
                for k, g in payload.items():
                    self.goals[k] = g
                    if k in self.stats:
                        self.stats[k].goal = g
            else:
                body = ",".join(f'"{k}":{encode_summary_value(v)}' for k, v in payload.items())
                lines.append(f'{{"v":1,"w":"{w}","seq":{seq},"t":{t:.6f},"summary":{{{body}}}}}')
                self.user_summary.update(payload)
            self.last_seq = seq
        if not lines or self.failed is not None:
            return
        if self.metrics_dir is None:
            text = "".join(f"{LINE_MARK}{line}\n" for line in lines)
            try:
                sys.stderr.flush()  # what the program wrote first comes first
            except Exception:  # noqa: BLE001 - a closed or replaced stderr: our lines still go to fd 2
                pass
            write_all(2, text.encode("utf-8"))
            return
        if self.file is None:  # the owner's alone, as the app's other files (0700 directory, 0600 files)
            os.makedirs(self.metrics_dir, mode=0o700, exist_ok=True)
            path = os.path.join(self.metrics_dir, self.stem + RECORDS_SUFFIX)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            hand_over(fd, self.owner)
            self.file = open(fd, "a", encoding="utf-8")
        self.file.write("\n".join(lines) + "\n")
        self.file.flush()
        self.write_summary()

    def summary_json(self) -> str:
        import json

        metrics = ",".join(f'"{k}":{s.to_json()}' for k, s in self.stats.items())
        defined = ",".join(f'"{k}":"{g}"' for k, g in self.goals.items())
        user = ",".join(f'"{k}":{encode_summary_value(v)}' for k, v in self.user_summary.items())
        return (
            f'{{"v":1,"job_id":{json.dumps(self.job_id)},"role":{json.dumps(self.role)},"replica":{self.replica},'
            f'"writer":"{self.writer_id}","seq":{self.last_seq},"t":{time.time():.6f},'
            f'"metrics":{{{metrics}}},"goals":{{{defined}}},"summary":{{{user}}}}}'
        )

    def write_summary(self) -> None:
        assert self.metrics_dir is not None
        path = os.path.join(self.metrics_dir, self.stem + SUMMARY_SUFFIX)
        tmp = f"{path}.{self.writer_id}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        hand_over(fd, self.owner)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(self.summary_json())
        os.replace(tmp, path)

    def fail(self, error: BaseException) -> None:
        if self.failed is not None:
            return
        self.failed = f"{type(error).__name__}: {error}"
        self.queue.clear()
        try:
            write_all(2, f"jupyter_sched.track: metrics stopped ({self.failed}); the job goes on\n".encode())
        except OSError:
            pass

    # -- stopping ------------------------------------------------------------------------------------------
    def should_stop(self) -> bool:
        if self.stop_seen or self.metrics_dir is None:
            return self.stop_seen
        now = time.monotonic()
        if now - self.stop_checked < STOP_CHECK_INTERVAL:
            return False
        self.stop_checked = now
        d = self.metrics_dir
        self.stop_seen = os.path.exists(os.path.join(d, self.stem + STOP_SUFFIX)) or os.path.exists(
            os.path.join(d, STOP_ALL)
        )
        return self.stop_seen


def write_all(fd: int, data: bytes) -> None:
    while data:
        n = os.write(fd, data)
        data = data[n:]


def install_sigterm(recorder: Recorder) -> None:
    """On SIGTERM (how our backends cancel), write what is queued, then die of the signal as before. Only
    where nobody handles SIGTERM yet (the default action) and only from the main thread: a program's own
    handler is never replaced, and it exits through atexit anyway if it exits normally."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_term(signum: int, frame: Any) -> None:
            try:
                recorder.close()
            finally:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError, AttributeError):  # no signals here (an embedded interpreter)
        pass
