"""The one listing of jobs over sessions x schedulers, which the notebook, the CLI and the server all use.

For each session and each scheduler: ``Runner.list``, then each app's status (:func:`~.rows.job_row`
makes its row). A scheduler that cannot be asked (no Docker engine, no Slurm, not installed) is a
**notice** naming it and why, never an exception: one missing backend must not hide the others. A
:class:`Lister` that lives on (a notebook's list pane, the server) keeps what cannot change:

* the status of an app that has ended (bounded, least recently listed dropped first), so a long history
  is read once;
* when each app was first seen (orders apps not started yet);
* a failed replica's last stderr lines (its reason, when its status does not say why);
* with ``backoff``, a scheduler that failed is not asked again for that long (its notice is repeated).

``launches`` are the launch records that notebooks keep (``handle``, ``name``, ``submitted``,
``notebook``, ``kernel_pid``): their name and notebook win over the scheduler's, and an app id listed by two
schedulers of one session (``torchx:local_cwd`` and ``local_cwd``) is one row, under the scheduler it was
launched on.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.frontend.jobs.metrics import LastValues
from jupyter_sched.frontend.jobs.rows import JobRow, job_row, usage_now
from jupyter_sched.frontend.jobs.stderr_tails import StderrTails
from jupyter_sched.specs import AppStatus, UnknownSchedulerException, make_app_handle, parse_app_handle
from jupyter_sched.specs.output.masking import mask_out

Launch = Mapping[str, Any]
"""A launch record's entry: ``handle``, ``name``, ``submitted``, ``notebook``, ``kernel_pid``."""


@dataclass
class Listing:
    rows: List[JobRow] = field(default_factory=list)
    """One row per app, in no particular order (see :mod:`.order`)."""
    notices: List[str] = field(default_factory=list)
    """One line per scheduler that could not be asked, masked."""
    sessions: List[str] = field(default_factory=list)
    schedulers: List[str] = field(default_factory=list)
    """The schedulers asked (those skipped quietly left out)."""


def one_line(e: BaseException, limit: int = 600) -> str:
    """An exception's message on one line, at most ``limit`` characters."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notice(scheduler: str, e: BaseException) -> str:
    """The notice for a scheduler that could not be asked, masked."""
    if isinstance(e, UnknownSchedulerException):
        return f"{scheduler}: not an installed scheduler (see `jupyter-sched builtins`)"
    return str(mask_out(f"{scheduler}: {type(e).__name__}: {one_line(e)}"))


class Lister:
    """Lists jobs with ``runner(session)`` (a ``Runner`` per session). ``statuses=False`` rows carry only
    what the listings say (no status is read: no times, counts or reason), for a quick lookup by name."""

    def __init__(
        self,
        runner: Callable[[str], Any],
        *,
        backoff: float = 0.0,
        quiet: Iterable[str] = (),
        status_cache: int = 20_000,
        notebook_path: Callable[[Optional[str]], Optional[str]] = lambda p: p if isinstance(p, str) and p else None,
    ) -> None:
        self.runner = runner
        self.backoff = backoff
        self.quiet = frozenset(quiet)
        """Schedulers asked by default only: one that cannot answer is skipped without a notice, unless a
        launch record of the session names it."""
        self.status_cache = status_cache
        self.notebook_path = notebook_path
        self._lock = threading.Lock()
        self._statuses: "OrderedDict[str, AppStatus]" = OrderedDict()
        self._seen: Dict[str, float] = {}
        self._down: Dict[str, Tuple[float, str]] = {}
        self.stderr = StderrTails()
        """Failed replicas' last stderr lines, read once each: a failure's reason as the panes give it."""
        self.metrics = LastValues(status_cache)
        """Each row's metrics' last values, from its summary file, read again only when it changed."""

    # -- the listing ------------------------------------------------------------------------------------
    def list(
        self,
        sessions: Sequence[str],
        schedulers: Sequence[str],
        launches: Mapping[str, Sequence[Launch]] = {},  # noqa: B006 - read only
        *,
        statuses: bool = True,
        usage: bool = False,
    ) -> Listing:
        """Every app of ``sessions`` on ``schedulers`` (and on any scheduler a launch record of the session
        names). ``usage``: running apps' usage now, asked once per session for all of them
        (``Runner.usage_many``)."""
        out = Listing(sessions=list(sessions))
        rows: Dict[Tuple[str, str], JobRow] = {}
        for session in sessions:
            known = {str(e["handle"]): e for e in launches.get(session, ())}
            by_id = {parse_app_handle(h).app_id: h for h in known}
            used = [parse_app_handle(h).scheduler_backend for h in known]
            for scheduler in dict.fromkeys([*schedulers, *used]):
                quiet = scheduler in self.quiet and scheduler not in used
                listed = self._list(session, scheduler, None if quiet else out.notices)
                if scheduler not in out.schedulers and (listed or not quiet or scheduler not in self._down):
                    out.schedulers.append(scheduler)
                for app in listed:
                    handle = make_app_handle(scheduler, session, app.app_id)
                    launched = by_id.get(app.app_id)
                    if (session, app.app_id) in rows and launched != handle:
                        continue  # listed twice: the scheduler it was launched on wins
                    rows[(session, app.app_id)] = self._row(session, scheduler, app, known.get(handle), statuses)
        out.rows = list(rows.values())
        if usage:
            self._add_usage([row for row in out.rows if row.running])
        self._forget({row.handle for row in out.rows}, sessions)
        return out

    def _list(self, session: str, scheduler: str, notices: Optional[List[str]]) -> List[Any]:
        down = self._down.get(scheduler)
        if down is not None and time.monotonic() < down[0]:
            if notices is not None and down[1] not in notices:
                notices.append(down[1])
            return []
        try:
            apps = list(self.runner(session).list(scheduler))
        except Exception as e:  # noqa: BLE001 - one backend that cannot answer must not hide the others
            message = notice(scheduler, e)
            wait = 3600.0 if isinstance(e, UnknownSchedulerException) else self.backoff
            if wait:
                self._down[scheduler] = (time.monotonic() + wait, message)
            if notices is not None and message not in notices:
                notices.append(message)
            return []
        self._down.pop(scheduler, None)
        return apps

    def _row(self, session: str, scheduler: str, app: Any, launch: Optional[Launch], statuses: bool) -> JobRow:
        handle = make_app_handle(scheduler, session, app.app_id)
        status = self.status_for_listing(handle, app.state) if statuses else None
        launch = launch or {}
        name = launch.get("name") or getattr(app, "name", "") or app.app_id.rsplit("-", 1)[0]
        with self._lock:
            submitted = launch.get("submitted")
            first = float(submitted) if isinstance(submitted, (int, float)) else time.time()
            seen = self._seen.setdefault(handle, first)
        pid = launch.get("kernel_pid")
        return job_row(
            handle, status, app_id=app.app_id, name=str(name), scheduler=scheduler, session=session,
            listed_state=app.state, seen=seen, notebook=self.notebook_path(launch.get("notebook")),
            kernel_pid=pid if isinstance(pid, int) else None, stderr_of=self.stderr.of(self.runner(session), handle),
            metrics=self.metrics.of(self.runner(session), handle, first_role(status)),
        )  # fmt: skip

    def _add_usage(self, running: List[JobRow]) -> None:
        by_session: Dict[str, List[JobRow]] = {}
        for row in running:
            by_session.setdefault(row.session, []).append(row)
        for session, rows in by_session.items():
            try:
                samples = self.runner(session).usage_many([row.handle for row in rows])
            except Exception:  # noqa: BLE001 - usage is a bonus column: a backend without it shows none
                continue
            for row in rows:
                row.usage = usage_now(s for s in samples.get(row.handle, []) if s.running) or row.usage

    # -- statuses -----------------------------------------------------------------------------------------
    def status_for_listing(self, handle: str, listed: Any) -> Optional[AppStatus]:
        """The app's status: the one kept if it had ended and the listing still says so, else asked (a
        failure to ask gives the one kept, if any: a row with the listing's state beats no row)."""
        with self._lock:
            kept = self._statuses.get(handle)
            if kept is not None and kept.is_terminal() and kept.state == listed:
                self._statuses.move_to_end(handle)
                return kept
        try:
            status = self.runner(parse_app_handle(handle).session_name or "default").status(handle)
        except Exception:  # noqa: BLE001 - see above
            return kept
        if status is not None:
            self.remember(handle, status)
        return status

    def kept(self, handle: str) -> Optional[AppStatus]:
        """The status last read for ``handle`` in a listing (or remembered), if still kept."""
        with self._lock:
            return self._statuses.get(handle)

    def remember(self, handle: str, status: AppStatus) -> None:
        with self._lock:
            self._statuses[handle] = status
            self._statuses.move_to_end(handle)
            while len(self._statuses) > self.status_cache:
                old, _ = self._statuses.popitem(last=False)
                self._seen.pop(old, None)

    def seen(self, handle: str) -> Optional[float]:
        with self._lock:
            return self._seen.get(handle)

    def _forget(self, listed: set, sessions: Sequence[str]) -> None:
        """Drops what is kept of apps of these sessions no longer listed (their records were removed)."""
        asked = set(sessions)
        with self._lock:
            for handle in [h for h in self._statuses if h not in listed and _session(h) in asked]:
                del self._statuses[handle]
            for handle in [h for h in self._seen if h not in listed and _session(h) in asked]:
                del self._seen[handle]
        self.stderr.keep_only(listed | {h for h in self._statuses if _session(h) not in asked})


def first_role(status: Optional[AppStatus]) -> Optional[str]:
    """The role whose replica 0 is a row's "rank 0" for its metrics (the first the status lists)."""
    return status.roles[0].role if status is not None and status.roles else None


def _session(handle: str) -> str:
    return parse_app_handle(handle).session_name or "default"


__all__ = ["Launch", "Lister", "Listing", "first_role", "notice", "one_line"]
