"""Usage of local replicas: psutil over each replica's whole process tree, sampled by one thread.

psutil rather than hand-read ``/proc``: it is the well-kept library for exactly this (process trees, CPU
times, RSS) and the reading code stays portable. Each tick walks each replica's tree through the kernel's
per-task ``children`` lists, so the cost grows with the replicas' own processes, not with every process on
the machine (one pass over all parents stands in where the kernel lacks those lists).

* CPU: the tree's user + system seconds, including children it has reaped; ``cpu_percent`` is its change
  over the last tick, as % of one core. The total never goes down (time of an orphan reaped by init is
  lost rather than subtracted).
* Memory: the sum of the tree's resident sets; the peak is the highest sum sampled (a spike shorter than
  the sampling interval can be missed; a cgroup limit reports the exact peak instead).

The owner samples its running replicas every ``interval`` seconds, keeps the peak, and writes the latest
samples to ``usage.json`` in the app's directory, so another process (``jupyter-sched top``) reads them
with the peak. When a replica ends, its totals (peak, CPU seconds, wall seconds) go into the app's record.

A replica is first sampled ``FIRST_SAMPLE_S`` after it starts (at once if it has a memory limit, so that a
failure at the limit can quote a peak): sampling competes for the CPU with the submit and with the IO
loop, and a replica that ends sooner has next to nothing to measure. Such a replica has no totals (rather
than zeros). The sampling thread outlives a quiet moment by one interval, so a run of short apps does not
start a thread each, and nothing on the submit or exit path waits for it or wakes it for nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import psutil

from jupyter_sched.schedulers.local.processes.posix import PORTABLE, leave_signals_to_the_main_thread
from jupyter_sched.schedulers.local.record.state import replace_file
from jupyter_sched.schedulers.local.usage.gpu_usage import gpus_of, read_gpus
from jupyter_sched.specs.status.usage import GpuSample, UsageSample

USAGE_FILE = "usage.json"
DEFAULT_INTERVAL = 1.0
FIRST_SAMPLE_S = 0.1


@dataclass
class _Tree:
    """What the sampler keeps of one replica between ticks."""

    role: str
    replica: int
    pid: int
    started: float
    mem_limit_bytes: Optional[int] = None
    peak_fn: Optional[Callable[[], Optional[int]]] = None
    procs: Dict[int, psutil.Process] = field(default_factory=dict)
    cpu_seconds: float = 0.0
    last_cpu: Optional[float] = None
    last_at: float = 0.0
    peak: int = 0
    latest: Optional[UsageSample] = None
    due: float = 0.0
    """When (``time.monotonic``) its first sample is due."""


class _Children:
    """Children of a pid, from the kernel's per-task ``children`` lists (only the tree's own processes are
    read), or, where the kernel has no such file (and on the portable path: no ``/proc`` at all), from one
    pass over every process's parent."""

    def __init__(self) -> None:
        self._map: Optional[Dict[int, List[int]]] = _parent_map() if PORTABLE else None

    def __call__(self, pid: int) -> List[int]:
        if self._map is None:
            try:
                out: List[int] = []
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/children") as f:
                        out.extend(int(c) for c in f.read().split())
                return out
            except FileNotFoundError:
                if os.path.exists(f"/proc/{pid}"):  # the process is there, the file is not
                    self._map = _parent_map()
            except (OSError, ValueError):
                return []
        return (self._map or {}).get(pid, [])


def _parent_map() -> Dict[int, List[int]]:
    kids: Dict[int, List[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info.get("ppid")
        if ppid:
            kids.setdefault(ppid, []).append(proc.pid)
    return kids


def _tree_pids(pid: int, kids: Callable[[int], List[int]]) -> List[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids(p))
    return out


def _read_tree(tree: _Tree, kids: Callable[[int], List[int]]) -> Optional[Tuple[int, float]]:
    """(rss, cpu seconds) of the tree now; None if its leader is gone."""
    rss, cpu, alive = 0, 0.0, False
    seen = {}
    for pid in _tree_pids(tree.pid, kids):
        proc = tree.procs.get(pid)
        try:
            if proc is None:
                proc = psutil.Process(pid)
            with proc.oneshot():
                times = proc.cpu_times()
                mem = proc.memory_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        seen[pid] = proc
        alive = alive or pid == tree.pid
        rss += mem.rss
        cpu += times.user + times.system + times.children_user + times.children_system
    tree.procs = seen
    return (rss, cpu) if alive else None


def _sample(tree: _Tree, kids: Callable[[int], List[int]], now: float, gpus=None) -> Optional[UsageSample]:  # type: ignore[no-untyped-def]
    read = _read_tree(tree, kids)
    if read is None:
        return None
    rss, cpu = read
    cpu = max(cpu, tree.cpu_seconds)
    percent = 0.0
    if tree.last_cpu is not None and now > tree.last_at:
        percent = max(0.0, cpu - tree.last_cpu) / (now - tree.last_at) * 100.0
    tree.last_cpu, tree.last_at, tree.cpu_seconds = cpu, now, cpu
    tree.peak = max(tree.peak, rss, (tree.peak_fn() if tree.peak_fn else None) or 0)
    tree.latest = UsageSample(
        role=tree.role,
        replica=tree.replica,
        cpu_percent=percent,
        cpu_seconds=cpu,
        rss_bytes=rss,
        peak_rss_bytes=tree.peak,
        mem_limit_bytes=tree.mem_limit_bytes,
        gpus=gpus_of(list(tree.procs), gpus),
        wall_seconds=max(0.0, time.time() - tree.started),
    )
    return tree.latest


class UsageSampler:
    """Samples the trees it tracks every ``interval`` seconds on one daemon thread, started by :meth:`track`
    when there is none and ended once nothing has been tracked for an interval (see the module docstring)."""

    def __init__(self, interval: float = DEFAULT_INTERVAL, on_tick: Optional[Callable[[], None]] = None) -> None:
        self.interval = interval
        self._on_tick = on_tick
        self._trees: Dict[Tuple[str, str, int], _Tree] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._next_at = 0.0
        """When (``time.monotonic``) the thread wakes next by itself."""

    def track(self, key: Tuple[str, str, int], pid: int, started: float, mem_limit_bytes: Optional[int] = None,
              peak_fn: Optional[Callable[[], Optional[int]]] = None) -> None:
        """Starts sampling the tree of ``pid``; ``key`` is (app id, role, replica)."""
        tree = _Tree(key[1], key[2], pid, started, mem_limit_bytes, peak_fn)
        tree.due = time.monotonic() + (0.0 if mem_limit_bytes is not None else FIRST_SAMPLE_S)
        new = None
        with self._lock:
            self._trees[key] = tree
            if self._thread is None:
                new = self._thread = threading.Thread(target=self._run, name="jupyter_sched-usage", daemon=True)
                self._next_at = tree.due
            early = tree.due < self._next_at
        if new is not None:
            new.start()  # not under the lock, which finish() takes on the IO loop: starting waits for the thread
        elif early:  # the thread would wake too late for this tree's first sample
            self._wake.set()

    def finish(self, key: Tuple[str, str, int], finished: float) -> Optional[UsageSample]:
        """Stops sampling ``key`` and returns its final sample (``running=False``, wall time up to
        ``finished``; CPU seconds as of the last tick), or None if it was not tracked or never sampled.
        Called on the IO loop: it neither waits for the sampling thread nor wakes it."""
        with self._lock:
            tree = self._trees.pop(key, None)
        peak = max(tree.peak, (tree.peak_fn() if tree.peak_fn else None) or 0) if tree is not None else 0
        if tree is None or (tree.latest is None and not peak):
            return None  # never measured (it ended before the first tick): no totals rather than zeros
        return UsageSample(
            role=tree.role,
            replica=tree.replica,
            cpu_percent=0.0,
            cpu_seconds=tree.cpu_seconds,
            rss_bytes=0,
            peak_rss_bytes=peak,
            mem_limit_bytes=tree.mem_limit_bytes,
            wall_seconds=max(0.0, finished - tree.started),
            timestamp=finished,
            running=False,
        )

    def latest(self, app_id: str) -> List[UsageSample]:
        with self._lock:
            trees = [(k, t) for k, t in self._trees.items() if k[0] == app_id]
        missing = [t for _, t in trees if t.latest is None]
        if missing:  # asked before the first tick reached them
            self.sample_now(missing)
        return [t.latest for _, t in sorted(trees, key=lambda kt: kt[0]) if t.latest is not None]

    def sample_now(self, trees: Optional[Iterable[_Tree]] = None) -> None:
        with self._lock:
            todo = list(self._trees.values()) if trees is None else list(trees)
        if not todo:
            return
        kids, gpus = _Children(), read_gpus()
        now = time.monotonic()
        for tree in todo:
            _sample(tree, kids, now, gpus)

    def tracking(self) -> int:
        with self._lock:
            return len(self._trees)

    def _run(self) -> None:
        leave_signals_to_the_main_thread()  # a SIGTERM must reach the owner's handler, not this thread
        try:
            self._sample_until_idle()
        finally:  # however it ends, the next track() starts another
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None

    def _sample_until_idle(self) -> None:
        tick_at = time.monotonic()  # the next full tick: every tree due, and the usage files
        idle_since: Optional[float] = None
        while True:
            self._wake.clear()
            now = time.monotonic()
            tick = now >= tick_at
            with self._lock:
                due = [t for t in self._trees.values() if t.due <= now and (tick or t.latest is None)]
            if due:
                self.sample_now(due)
            if tick:
                tick_at = now + self.interval
                if due and self._on_tick is not None:
                    try:
                        self._on_tick()
                    except Exception:  # noqa: BLE001 - writing a usage file must never stop sampling
                        pass
            with self._lock:
                if self._trees:
                    idle_since = None
                elif idle_since is None:
                    idle_since = now
                elif now - idle_since >= self.interval:
                    self._thread = None  # under the lock: a track() from now on starts another
                    return
                firsts = [t.due for t in self._trees.values() if t.latest is None and t.due > now]
                self._next_at = min([tick_at, *firsts])
                delay = self._next_at - now
            self._wake.wait(max(0.0, delay))


# -- another process's view --------------------------------------------------------------------------------


def write_usage_file(app_dir: str, samples: List[UsageSample]) -> None:
    """Atomically writes the owner's latest samples, for ``top`` in another process: readable by its owner
    only (0600, like every file of the app), and a write that fails (a full disk) leaves the previous file
    and no temporary one."""
    data = json.dumps({"written": time.time(), "samples": [_sample_json(s) for s in samples]})
    replace_file(os.path.join(app_dir, USAGE_FILE), data.encode())


def read_usage_file(app_dir: str, max_age: float) -> Optional[List[UsageSample]]:
    """The owner's samples if written less than ``max_age`` seconds ago, else None."""
    try:
        with open(os.path.join(app_dir, USAGE_FILE)) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if time.time() - float(data.get("written", 0)) > max_age:
        return None
    return [UsageSample(**{**s, "gpus": [GpuSample(**g) for g in s.get("gpus", [])]}) for s in data.get("samples", [])]


def _sample_json(s: UsageSample) -> dict:
    data = dict(vars(s))
    data["gpus"] = [g.to_json() for g in s.gpus]
    return data


class ForeignProbe:
    """Samples replicas of apps owned by another process (or by nobody, for apps that outlive their
    owner): keeps the last reading per (pid, start time) so successive calls give a CPU %.

    Readings are kept across calls, whichever apps a call asks about (a lister asks app by app), until the
    tree is gone or has not been asked about for :attr:`forget_after` seconds: only a tree seen for the
    first time costs the settling wait, and one call for many apps (:meth:`sample` with all their
    replicas) pays it once."""

    settle_s = 0.2
    forget_after = 60.0

    def __init__(self) -> None:
        self._trees: Dict[Tuple[int, float], _Tree] = {}
        self._asked: Dict[Tuple[int, float], float] = {}
        self._lock = threading.Lock()
        self.settles = 0
        """How many calls waited :attr:`settle_s` for first readings (a figure for tests and benchmarks)."""

    def sample_each(self, replicas: List[Tuple[str, int, int, float, Optional[int]]]) -> List[Optional[UsageSample]]:
        """One sample per replica asked about, in order (None: its process is gone). ``replicas``: (role,
        replica, pid, started, mem limit). A first reading of a tree takes a second one :attr:`settle_s`
        later, so even a one-off ``top --json`` shows a real CPU %."""
        with self._lock:  # two listers at once would each take the other's reading as their previous one
            return self._sample(replicas)

    def _sample(self, replicas: List[Tuple[str, int, int, float, Optional[int]]]) -> List[Optional[UsageSample]]:
        trees = []
        mono = time.monotonic()
        for role, k, pid, started, limit in replicas:
            key = (pid, started)
            tree = self._trees.get(key) or _Tree(role, k, pid, started, limit)
            self._trees[key] = tree
            self._asked[key] = mono
            trees.append(tree)
        kids = _Children()
        fresh = [t for t in trees if t.last_cpu is None]
        if fresh:
            now = time.monotonic()
            for tree in fresh:
                _sample(tree, kids, now)
            time.sleep(self.settle_s)
            self.settles += 1
            kids = _Children()
        now, gpus = time.monotonic(), read_gpus()
        out: List[Optional[UsageSample]] = []
        gone = set()
        for tree in trees:
            sample = _sample(tree, kids, now, gpus)
            out.append(sample)
            if sample is None:
                gone.add((tree.pid, tree.started))
        stale = {key for key, at in self._asked.items() if mono - at > self.forget_after}
        for key in gone | stale:
            self._trees.pop(key, None)
            self._asked.pop(key, None)
        return out


def merge_peak(samples: List[UsageSample], known: Optional[List[UsageSample]]) -> List[UsageSample]:
    """Raises each sample's peak to the owner's recorded peak for the same replica."""
    peaks = {(s.role, s.replica): s.peak_rss_bytes for s in known or []}
    return [
        replace(s, peak_rss_bytes=max(s.peak_rss_bytes, peaks.get((s.role, s.replica), 0))) for s in samples
    ]
