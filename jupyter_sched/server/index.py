"""The user's jobs across sessions and backends, read the way the CLI reads them (``Runner.list`` and
``Runner.status`` over each session), cached so any number of sidebars cost one listing per interval.

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
one.

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
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs.sweep_names import sweep_of
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers.common.state_dir import NOTEBOOK_REGISTRY
from jupyter_sched.server import rows as table
from jupyter_sched.specs import AppState, AppStatus, UnknownSchedulerException, make_app_handle, parse_app_handle
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
class Listing:
    rows: List[table.Row] = field(default_factory=list)
    notices: List[str] = field(default_factory=list)
    sessions: List[str] = field(default_factory=list)
    schedulers: List[str] = field(default_factory=list)
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
        self._statuses: "OrderedDict[str, AppStatus]" = OrderedDict()
        self._seen: Dict[str, float] = {}
        self._recent: "OrderedDict[str, Tuple[float, AppStatus]]" = OrderedDict()  # running apps' statuses
        self._down: Dict[str, Tuple[float, str]] = {}
        self._registry_cache: Dict[str, Tuple[Tuple[float, int], List[Dict[str, Any]]]] = {}

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
            message = mask_out(f"the jobs list could not be refreshed: {type(e).__name__}: {_one_line(e)}")
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
        notices: List[str] = []
        found: Dict[str, table.Row] = {}
        schedulers_seen: List[str] = []
        for session in sessions:
            entries = registry.get(session, [])
            known = {e["handle"]: e for e in entries}
            used = [parse_app_handle(h).scheduler_backend for h in known]
            for scheduler in dict.fromkeys([*self.settings.schedulers, *used]):
                quiet = scheduler in self.settings.quiet and scheduler not in used
                listed = self._list(session, scheduler, [] if quiet else notices)
                if scheduler not in schedulers_seen and (listed or not quiet or scheduler not in self._down):
                    schedulers_seen.append(scheduler)
                for app in listed:
                    handle = make_app_handle(scheduler, session, app.app_id)
                    found[handle] = self._row(session, scheduler, app, known.get(handle))
        self._add_usage([row for row in found.values() if not AppState[row["state"]].is_terminal])
        self._forget(set(found))
        return Listing(
            rows=list(found.values()), notices=notices, sessions=sessions, schedulers=schedulers_seen,
            at=time.time(), seconds=time.monotonic() - start, cold=cold,
        )  # fmt: skip

    def _list(self, session: str, scheduler: str, notices: List[str]) -> List[Any]:
        down = self._down.get(scheduler)
        if down is not None and time.monotonic() < down[0]:
            if down[1] not in notices:
                notices.append(down[1])
            return []
        try:
            apps = self.runner(session).list(scheduler)
        except UnknownSchedulerException:
            message = f"{scheduler}: not an installed scheduler (see `jupyter-sched builtins`)"
            self._down[scheduler] = (time.monotonic() + 3600, message)
            notices.append(message)
            return []
        except Exception as e:  # noqa: BLE001 - one backend that cannot answer must not hide the others
            message = mask_out(f"{scheduler}: {type(e).__name__}: {_one_line(e)}")
            self._down[scheduler] = (time.monotonic() + self.settings.backoff, message)
            notices.append(message)
            return []
        self._down.pop(scheduler, None)
        return apps

    def _row(self, session: str, scheduler: str, app: Any, entry: Optional[Dict[str, Any]]) -> table.Row:
        handle = make_app_handle(scheduler, session, app.app_id)
        status = self._status_for_listing(handle, app)
        name = mask_out((entry or {}).get("name") or getattr(app, "name", "") or app.app_id.rsplit("-", 1)[0])
        with self._cache_lock:
            seen = self._seen.setdefault(handle, float((entry or {}).get("submitted") or time.time()))
        state = status.state if status is not None else app.state
        row: table.Row = {
            "handle": handle,
            "app_id": app.app_id,
            "name": name,
            "scheduler": scheduler,
            "session": session,
            "state": state.name,
            "seen": seen,
            "sweep": sweep_of(name),
            "notebook": self._notebook_path((entry or {}).get("notebook")),
            "reason": mask_out(table.reason(name, status, _kernel_pid(entry))),
            **table.times(status),
            **table.replica_counts(status),
            "usage": table.usage_totals(status),
        }
        return row

    def _add_usage(self, running: List[table.Row]) -> None:
        """What the running apps use now, asked once per session for all of them (see ``usage_many``)."""
        by_session: Dict[str, List[table.Row]] = {}
        for row in running:
            by_session.setdefault(row["session"], []).append(row)
        for session, rows in by_session.items():
            try:
                samples = self.runner(session).usage_many([row["handle"] for row in rows])
            except Exception:  # noqa: BLE001 - usage is a bonus column: a backend without it shows none
                continue
            for row in rows:
                now = table.usage_now(s for s in samples.get(row["handle"], []) if s.running)
                row["usage"] = now or row["usage"]

    def _status_for_listing(self, handle: str, app: Any) -> Optional[AppStatus]:
        with self._cache_lock:
            cached = self._statuses.get(handle)
            if cached is not None and cached.is_terminal() and cached.state == app.state:
                self._statuses.move_to_end(handle)
                return cached
        try:
            status = self.runner_for(handle).status(handle)
        except Exception:  # noqa: BLE001 - a row with the listing's state beats no row
            return cached
        if status is not None:
            self._remember(handle, status)
        return status

    def _remember(self, handle: str, status: AppStatus) -> None:
        with self._cache_lock:
            self._statuses[handle] = status
            self._statuses.move_to_end(handle)
            while len(self._statuses) > self.settings.status_cache:
                old, _ = self._statuses.popitem(last=False)
                self._seen.pop(old, None)

    def _forget(self, listed: set) -> None:
        """Drops what is kept of apps no longer listed (their records were removed)."""
        with self._cache_lock:
            for handle in [h for h in self._statuses if h not in listed]:
                del self._statuses[handle]
            for handle in [h for h in self._seen if h not in listed]:
                del self._seen[handle]

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
        with self._cache_lock:
            kept = self._statuses.get(handle)
            recent = self._recent.get(handle)
        if kept is not None and kept.is_terminal():
            return kept
        if recent is not None and time.monotonic() - recent[0] < FRESH_S:
            return recent[1]
        status = self.runner_for(handle).status(handle)
        if status is None:
            raise UnknownJob(handle)
        if status.is_terminal():
            self._remember(handle, status)
        with self._cache_lock:
            self._recent[handle] = (time.monotonic(), status)
            while len(self._recent) > 4096:
                self._recent.popitem(last=False)
        return status

    def detail(self, handle: str) -> Dict[str, Any]:
        """The app's row (from the last listing, else built now), its status per replica (secrets masked)
        and each replica's usage."""
        status = self.status(handle)
        parsed = parse_app_handle(handle)
        row = next((r for r in self._listing.rows if r["handle"] == handle), None)
        if row is None:
            name = parsed.app_id.rsplit("-", 1)[0]
            row = {
                "handle": handle, "app_id": parsed.app_id, "name": name, "scheduler": parsed.scheduler_backend,
                "session": parsed.session_name, "sweep": sweep_of(name), "notebook": None,
                **table.times(status), **table.replica_counts(status),
            }  # fmt: skip
        entry = next((e for e in reversed(self._registry().get(parsed.session_name, [])) if e["handle"] == handle),
                     None)  # fmt: skip
        reason = mask_out(table.reason(row["name"], status, _kernel_pid(entry)))
        row = {**row, "state": status.state.name, "reason": reason, **table.times(status),
               **table.replica_counts(status)}  # fmt: skip
        usage: List[Dict[str, Any]] = []
        try:
            usage = [{**s.to_json(), "running": s.running} for s in self.runner_for(handle).usage(handle)]
        except Exception:  # noqa: BLE001 - a backend that cannot measure usage shows none
            usage = []
        return {**row, "status": mask_out(status.to_json()), "usage": usage}

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


def _one_line(e: BaseException, limit: int = 600) -> str:
    """An exception's message on one line, at most ``limit`` characters."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kernel_pid(entry: Optional[Dict[str, Any]]) -> Optional[int]:
    """The pid of the kernel that launched the app (the registry has it), so a local app stopped by that
    kernel's restart is said to be."""
    pid = (entry or {}).get("kernel_pid")
    return pid if isinstance(pid, int) else None


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
