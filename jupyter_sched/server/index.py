"""The user's jobs across sessions and backends, read the way the CLI reads them (``Runner.list`` and
``Runner.status`` over each session), cached so any number of sidebars cost one listing per interval.

The listing itself, its rows and what it keeps (ended apps' statuses, failed replicas' stderr tails, a
backend's backoff) are the front ends' one :class:`~jupyter_sched.frontend.jobs.listing.Lister`; this
module adds which sessions and backends to ask, the launch registry, and the caching of whole listings.

Which sessions: the configured ones (``default`` unless told), every session directory in the local log
dir (``<log_dir>/<session>/``), and every session whose notebook kept a launch registry
(``<log_dir>/.notebook/<session>.jsonl``). Which backends: the configured ones (local_cwd, local_dir,
local_docker, slurm by default) plus any a notebook of that session launched on (``torchx:*`` included).
A backend that cannot be asked (no Docker engine, no Slurm) is named in ``notices`` and asked again only
after ``backoff`` seconds, so one missing engine costs nothing per poll.

What is cached: one listing, reused for ``refresh_interval`` seconds (or twice as long as listing took,
if that is longer, so a large history cannot keep the server busy); the status of an app that has ended
(it cannot change), bounded (least recently listed dropped first). Apps still running are asked for
their status at each listing, and their usage once per listing for all of them (``Runner.usage_many``:
a replica's first CPU reading waits once per listing, not once per app, and readings are kept between
listings). A stale listing is refreshed on a thread of its own while requests get the previous one, so
a request never waits for a listing but the very first; job details, logs and cancels never queue behind
one. Each listing also tells :mod:`.ended` which jobs it saw end, so a job that started and ended between two
listings is still told once (``GET jobs/ended``).

Every text a row carries that a user or a job wrote (its name, why it ended) and every notice goes
through the one masking rule (:mod:`jupyter_sched.specs.output.masking`) when the row is made, so no secret of a
failed job's error file reaches a browser or a notebook's saved record. The registry says which notebook launched an app
(``JPY_SESSION_NAME``, the path Jupyter gives the notebook's kernel) and when.

Every blocking call runs on the caller's thread (the server calls this from its executor threads), but the
refresh of a stale listing, which runs on its own.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs import listing as jobs_listing
from jupyter_sched.frontend.jobs.listing import Lister, first_role, one_line
from jupyter_sched.frontend.jobs.rows import job_row
from jupyter_sched.frontend.jobs.tracked import TrackedCache
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers.common.state_dir import NOTEBOOK_REGISTRY
from jupyter_sched.server.ended import EndedJobs
from jupyter_sched.specs import AppStatus, parse_app_handle
from jupyter_sched.specs.output.masking import mask_out
from jupyter_sched.specs.status.handles import check_name, parse_safe_handle


@dataclass
class IndexSettings:
    schedulers: List[str]
    sessions: List[str]
    log_dir: str
    root_dir: str = ""
    refresh_interval: float = 1.0
    backoff: float = 30.0
    max_sessions: int = 64
    status_cache: int = 20_000
    quiet: frozenset = frozenset()
    """Backends asked by default only: one that cannot answer (no Docker engine, no Slurm here) is skipped
    without a notice, unless a notebook of the session launched on it."""


@dataclass
class Listing(jobs_listing.Listing):
    """The frontend's listing, with when the server made it, how long it took, and whether it was the first."""

    at: float = 0.0
    seconds: float = 0.0
    cold: bool = False


FRESH_S = 0.5
"""How long a running app's status is reused by the job routes (a job view refreshes every second)."""


class UnknownJob(LookupError):
    """No backend knows the handle (never submitted, or its records were removed)."""


class JobIndex:
    def __init__(self, settings: IndexSettings, runner_factory: Callable[[str], Runner] = get_runner) -> None:
        self.settings = settings
        self._runner_factory = runner_factory
        self._runners: "OrderedDict[str, Runner]" = OrderedDict()
        self._runners_lock = threading.Lock()
        self._refresh_lock = threading.Lock()  # the listing and the refresh under way
        self._refreshing: Optional[threading.Event] = None
        self._stale = False
        self._refresher: Optional[threading.Thread] = None
        self._cache_lock = threading.Lock()  # the status cache and first-seen times
        self._listing = Listing()
        self._recent: "OrderedDict[str, Tuple[float, AppStatus]]" = OrderedDict()  # running apps' statuses
        self._registry_cache: Dict[str, Tuple[Tuple[float, int], List[Dict[str, Any]]]] = {}
        #: the one listing of the front ends (frontend.jobs.listing): ended apps' statuses and stderr tails
        #: kept, a backend that failed asked again only after ``backoff``
        self.lister = Lister(self.runner, backoff=settings.backoff, quiet=settings.quiet,
                             status_cache=settings.status_cache, notebook_path=self._notebook_path)  # fmt: skip
        #: the jobs each listing saw end, with cursors (``GET jobs/ended``): fed by the listing thread alone
        self.ended = EndedJobs()
        #: each job's TorchX tracker block (``GET jobs/<h>``'s ``tracker``), read again only when it changed
        self.tracked = TrackedCache()

    # -- runners ----------------------------------------------------------------------------------------
    def runner(self, session: str) -> Runner:
        """The server's Runner of ``session`` (it submits nothing, so closing it stops nothing)."""
        with self._runners_lock:
            runner = self._runners.get(session)
            if runner is None:
                runner = self._runners[session] = self._runner_factory(session)
                while len(self._runners) > self.settings.max_sessions * 2:
                    _, old = self._runners.popitem(last=False)
                    old.close()
            else:
                self._runners.move_to_end(session)
            return runner

    def close(self) -> None:
        """Waits (briefly) for a refresh under way, then closes the runners."""
        with self._refresh_lock:
            refresher = self._refresher
        if refresher is not None:
            refresher.join(10)
        with self._runners_lock:
            for runner in self._runners.values():
                runner.close()
            self._runners.clear()

    def runner_for(self, handle: str) -> Runner:
        return self.runner(parse_safe_handle(handle).session_name or "default")

    # -- the listing --------------------------------------------------------------------------------------
    def listing(self) -> Listing:
        """The current listing. A fresh one is returned as it is; a stale one too, while a refresh runs on
        its own thread. Only the very first listing (there is no previous one) is waited for."""
        listing, done = self._current()
        if listing is not None:
            return listing
        assert done is not None
        done.wait()
        return self._listing

    def listing_now(self) -> Optional[Listing]:
        """:meth:`listing` without waiting: None while there has never been one (a refresh is started). Cheap
        enough for the server's event loop, so a request for the list never queues for a worker thread."""
        return self._current()[0]

    def _current(self) -> Tuple[Optional[Listing], Optional[threading.Event]]:
        with self._refresh_lock:
            listing = self._listing
            # a listing that takes long is reused longer, so a large history cannot keep the server busy
            # (the first one reads every app once and is not a measure of the next ones)
            slow = 0.0 if listing.cold else 2 * listing.seconds
            if listing.at and not self._stale and time.time() - listing.at < max(self.settings.refresh_interval, slow):
                return listing, None
            done = self._refreshing
            if done is None:
                self._stale = False
                done = self._refreshing = threading.Event()
                self._refresher = threading.Thread(target=self._refresh_in_background, args=(done, not listing.at),
                                                   name="jsched-server-listing", daemon=True)  # fmt: skip
                self._refresher.start()
            return (listing if listing.at else None), done

    def _refresh_in_background(self, done: threading.Event, cold: bool) -> None:
        listing: Optional[Listing] = None
        try:
            listing = self._refresh(cold=cold)
        except Exception as e:  # noqa: BLE001 - a listing that failed keeps the previous one, and says why
            with self._refresh_lock:
                previous = self._listing
            message = mask_out(f"the jobs list could not be refreshed: {type(e).__name__}: {one_line(e)}")
            listing = Listing(rows=previous.rows, notices=[message], sessions=previous.sessions,
                              schedulers=previous.schedulers, at=time.time(), cold=cold)  # fmt: skip
        finally:
            with self._refresh_lock:
                if listing is not None:
                    self._listing = listing
                self._refreshing = None
                self._refresher = None
            done.set()

    def invalidate(self) -> None:
        """The next request starts a refresh (a cancel changed a state)."""
        with self._refresh_lock:
            self._stale = True

    def _refresh(self, cold: bool = False) -> Listing:
        start = time.monotonic()
        registry = self._registry()
        sessions = self._sessions(registry)
        found = self.lister.list(sessions, self.settings.schedulers, registry, usage=True)
        self.ended.observe(found.rows)
        return Listing(
            rows=found.rows, notices=found.notices, sessions=found.sessions, schedulers=found.schedulers,
            at=time.time(), seconds=time.monotonic() - start, cold=cold,
        )  # fmt: skip

    # -- sessions and the notebook registry ----------------------------------------------------------------
    def _sessions(self, registry: Dict[str, List[Dict[str, Any]]]) -> List[str]:
        names = list(self.settings.sessions)
        try:
            with os.scandir(self.settings.log_dir) as it:
                names += sorted(e.name for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
        except OSError:
            pass
        names += sorted(registry)
        out: List[str] = []
        for name in dict.fromkeys(names):
            try:
                check_name(name, "session name")
            except ValueError:
                continue
            if name:
                out.append(name)
        return out[: self.settings.max_sessions]

    def _registry(self) -> Dict[str, List[Dict[str, Any]]]:
        """Per session, the launches its notebooks recorded (handle, name, submitted, notebook)."""
        directory = os.path.join(self.settings.log_dir, NOTEBOOK_REGISTRY)
        out: Dict[str, List[Dict[str, Any]]] = {}
        try:
            files = sorted(f for f in os.listdir(directory) if f.endswith(".jsonl"))
        except OSError:
            return out
        for name in files:
            session = name[: -len(".jsonl")]
            path = os.path.join(directory, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            key = (st.st_mtime, st.st_size)
            cached = self._registry_cache.get(path)
            if cached is None or cached[0] != key:
                cached = (key, _read_registry(path))
                self._registry_cache[path] = cached
            out[session] = cached[1]
        return out

    def _notebook_path(self, path: Optional[str]) -> Optional[str]:
        """The notebook's path as the Jupyter server names it (relative to its root, ``/``-separated) when
        it is under the root, else as recorded."""
        if not path or not isinstance(path, str):
            return None
        root = self.settings.root_dir
        if root and os.path.isabs(path):
            rel = os.path.relpath(path, root)
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return path

    # -- one job -----------------------------------------------------------------------------------------
    def status(self, handle: str) -> AppStatus:
        """The app's status; UnknownJob if no backend knows it. An ended app's is the one kept (it cannot
        change); a running app's is asked at most every :data:`FRESH_S` (64 job views opened on one app at
        once ask its backend once, not 64 times)."""
        kept = self.lister.kept(handle)
        with self._cache_lock:
            recent = self._recent.get(handle)
        if kept is not None and kept.is_terminal():
            return kept
        if recent is not None and time.monotonic() - recent[0] < FRESH_S:
            return recent[1]
        status = self.runner_for(handle).status(handle)
        if status is None:
            raise UnknownJob(handle)
        if status.is_terminal():
            self.lister.remember(handle, status)
        with self._cache_lock:
            self._recent[handle] = (time.monotonic(), status)
            while len(self._recent) > 4096:
                self._recent.popitem(last=False)
        return status

    def detail(self, handle: str) -> Dict[str, Any]:
        """The app's row (from the last listing, else built now), its status per replica (secrets masked),
        each replica's usage, and what it told TorchX's tracker API (masked; read when its files changed)."""
        status = self.status(handle)
        parsed = parse_app_handle(handle)
        listed = next((r for r in self._listing.rows if r.handle == handle), None)
        entry = next((e for e in reversed(self._registry().get(parsed.session_name, [])) if e["handle"] == handle),
                     None)  # fmt: skip
        pid = (entry or {}).get("kernel_pid")
        row = job_row(
            handle, status, app_id=parsed.app_id, scheduler=parsed.scheduler_backend, session=parsed.session_name,
            name=listed.name if listed else (entry or {}).get("name") or parsed.app_id.rsplit("-", 1)[0],
            listed_state=status.state, seen=listed.seen if listed else time.time(),
            notebook=listed.notebook if listed else self._notebook_path((entry or {}).get("notebook")),
            kernel_pid=pid if isinstance(pid, int) else None,
            stderr_of=self.lister.stderr.of(self.runner_for(handle), handle),
            metrics=self.lister.metrics.of(self.runner_for(handle), handle, first_role(status)),
        )  # fmt: skip
        usage: List[Dict[str, Any]] = []
        try:
            usage = [{**s.to_json(), "running": s.running} for s in self.runner_for(handle).usage(handle)]
        except Exception:  # noqa: BLE001 - a backend that cannot measure usage shows none
            usage = []
        tracker = self.tracked.of(self.lister.metrics.directory(self.runner_for(handle), handle), handle)
        return {**row.to_json(), "status": mask_out(status.to_json()), "usage": usage, "tracker": tracker}

    def cancel(self, handle: str) -> Dict[str, Any]:
        status = self.status(handle)
        if status.is_terminal():
            return {"handle": handle, "cancelled": False, "state": status.state.name,
                    "message": f"{handle} already ended ({status.state}); nothing to cancel"}  # fmt: skip
        self.runner_for(handle).cancel(handle)
        with self._cache_lock:
            self._recent.pop(handle, None)
        self.invalidate()  # the next listing shows the change
        return {"handle": handle, "cancelled": True, "state": status.state.name, "message": f"cancelling {handle}"}


def _read_registry(path: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    try:
        with open(path) as f:
            lines = f.readlines()
    except OSError:
        return out
    for line in lines:
        try:
            entry = json.loads(line)
            parse_app_handle(entry["handle"])
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
