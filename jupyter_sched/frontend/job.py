"""The object ``%sched_run`` and ``jupyter_sched.submit`` return: a handle on a launched app that the user keeps.

``job.status``, ``job.wait()``, ``job.result()``, ``job.logs()``, ``job.cancel()`` and ``job.handle`` only
call the Runner: they work in a plain Python process, without IPython. How a job is shown is the front end's:
the notebook registers its live view (status pane over log pane) and its displays as IPython formatters when
the extension loads (``jupyter_sched.notebook.panes.job_view``); :meth:`Job.view` returns the view of whichever
front end registered one.

:class:`JobFailed` is what ``job.result()`` (and ``%sched_run --wait``) raises when the app did not succeed,
so that Run All, papermill and nbval stop at the failed job, as submitit's ``job.result()`` and ipyparallel's
``%px`` do; ``job.wait()`` keeps returning the status (it is the "tell me how it ended" call). IPython shows
the exception as its one line (``_render_traceback_``), not a traceback through our code.
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, List, Optional

from jupyter_sched.frontend.jobs.reasons import app_message, failure_line, first_failure
from jupyter_sched.frontend.jobs.stderr_tails import stderr_of
from jupyter_sched.frontend.logview.log_model import ALL, MAX_LINE_CHARS, app_sources, read_snapshot
from jupyter_sched.specs import AppState, AppStatus, parse_app_handle
from jupyter_sched.specs.output.labels import app_label

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.frontend.jobs.metrics import JobMetrics
    from jupyter_sched.frontend.jobs.usage_table import UsageSamples
    from jupyter_sched.runner import Runner

#: How a front end that shows jobs live makes a job's view (the notebook registers its panes on load).
VIEW_MAKERS: List[Callable[["Job"], Any]] = []


class LogLines(List[str]):
    """The lines of :meth:`Job.logs`; ``omitted`` counts earlier lines left out (by ``tail``). IPython
    displays it as the log text, a line per line (``.text``); ``repr()`` and ``print`` are the list's."""

    omitted: int = 0
    tail: Optional[int] = None

    def __repr__(self) -> str:
        more = f"  # {self.omitted} earlier lines omitted (tail={self.tail})" if self.omitted else ""
        return super().__repr__() + more

    @property
    def text(self) -> str:
        """The lines as text, after a note of the earlier lines left out, if any."""
        note = [f"[{self.omitted} earlier lines omitted (tail={self.tail})]"] if self.omitted else []
        return "\n".join(note + list(self))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's display: the text itself, not a list of strings."""
        p.text(self.text if self.text else "(no log lines)")


class Job:
    """A launched (or re-attached) app. Cheap to create: nothing runs until it is asked something.

    ``line_chars`` says how long a log line of :meth:`logs` may be before it is cut (asked at each call: the
    notebook's ``SchedMagics.max_line_chars``)."""

    def __init__(
        self,
        handle: str,
        runner: "Runner",
        name: Optional[str] = None,
        line_chars: Callable[[], int] = lambda: MAX_LINE_CHARS,
    ) -> None:
        self.handle = handle
        self.scheduler, self.session_name, self.app_id = parse_app_handle(handle)
        self.name = name or self.app_id.rsplit("-", 1)[0]
        self.runner = runner
        self.line_chars = line_chars
        self.last_status: Optional[AppStatus] = None
        #: Set by :meth:`cancel`: a CANCELLED end is then the user's doing, not a failure.
        self.cancel_requested = False
        #: ``--fail-fast``: waits cancel the other replicas as soon as one has failed.
        self.fail_fast = False
        #: The replicas end with this process (local schedulers without ``--detach``), as far as known.
        self.bound_to_kernel = False
        #: The pid of the kernel that launched the app, when a notebook kernel did (the notebook's session
        #: records it, also for a later kernel): a local app its exit ended is then said to be the kernel's.
        self.kernel_pid: Optional[int] = None

    def __repr__(self) -> str:
        """The handle, and the state only once it is final (a running state here would go stale in a
        saved notebook; ``job.state`` asks the scheduler)."""
        status = self.last_status
        if status is not None and status.is_terminal():
            return f"<Job {self.handle} {status.state}>"
        return f"<Job {self.handle}>"

    # -- the API --------------------------------------------------------------------------------------
    def fetch_status(self) -> Optional[AppStatus]:
        """Asks the scheduler (None if it does not know the app) and remembers the answer."""
        status = self.runner.status(self.handle)
        self.last_status = status
        return status

    @property
    def status(self) -> Optional[AppStatus]:
        """The app's current status (asks the scheduler)."""
        return self.fetch_status()

    @property
    def state(self) -> AppState:
        status = self.fetch_status()
        return status.state if status is not None else AppState.UNKNOWN

    @property
    def metrics(self) -> "JobMetrics":
        """What the replicas logged with ``jupyter_sched.track``: ``job.metrics()`` a pandas DataFrame (long
        form; ``wide=True`` a column per key), ``job.metrics.summary`` the summaries; see
        ``jupyter_sched.frontend.jobs.metrics``."""
        from jupyter_sched.frontend.jobs.metrics import JobMetrics

        return JobMetrics(self)

    def usage(self) -> "UsageSamples":
        """What each replica uses now (ended replicas: their kept totals); see ``Runner.usage``. A list
        of UsageSample that displays as a small table (human units, local times)."""
        from jupyter_sched.frontend.jobs.usage_table import UsageSamples

        return UsageSamples(self.runner.usage(self.handle))

    def wait(self, timeout: Optional[float] = None, fail_fast: Optional[bool] = None) -> Optional[AppStatus]:
        """Blocks until the app ends (or ``timeout`` seconds) and returns its status, whatever the
        outcome (:meth:`result` raises instead when the app did not succeed). Waits in short slices, so
        an interrupt (■) arrives at once; interrupting only stops waiting. Clicks in the job's panes are
        handled meanwhile (ipykernel 7). ``fail_fast`` (default: as launched, ``--fail-fast``) cancels
        the other replicas as soon as one has failed."""
        fail_fast = self.fail_fast if fail_fast is None else fail_fast
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            status = self.runner.wait(self.handle, wait_interval=0.5, timeout=step, fail_fast=fail_fast)
            self.last_status = status
            if status is None or status.is_terminal():
                return status
            if deadline is not None and time.monotonic() >= deadline:
                return status

    def watch_fail_fast(self) -> None:
        """Applies ``--fail-fast`` while nobody waits: a daemon thread runs the Runner's fail-fast wait."""
        self.fail_fast = True
        threading.Thread(
            target=self.runner.wait, args=(self.handle, 1.0), kwargs={"fail_fast": True},
            name=f"jupyter_sched-fail-fast-{self.app_id}", daemon=True,
        ).start()  # fmt: skip

    def result(self, timeout: Optional[float] = None) -> AppStatus:
        """Waits like :meth:`wait`, then returns the final status if the app SUCCEEDED and raises
        :class:`JobFailed` otherwise: FAILED, CANCELLED (unless it was cancelled through this Job), or no
        longer known. ``TimeoutError`` if it is still running after ``timeout`` seconds."""
        status = self.wait(timeout)
        if status is not None and not status.is_terminal():
            raise TimeoutError(f"{app_label(self.handle)} is still {status.state} after {timeout} s")
        failure = self.failure(status)
        if failure is not None:
            raise failure
        assert status is not None
        return status

    def failure(self, status: Optional[AppStatus]) -> Optional[Exception]:
        """The exception that ``status`` (an ended app) calls for, or None: SUCCEEDED, or CANCELLED after
        :meth:`cancel` was called on this Job (the user stopped it here, e.g. the pane's Cancel)."""
        if status is not None and status.state == AppState.SUCCEEDED:
            return None
        if status is not None and status.state == AppState.CANCELLED and self.cancel_requested:
            return None
        return JobFailed(self, status, failure_message(self, status, self.fail_fast))

    def failure_reason(self, status: Optional[AppStatus]) -> str:
        """Why the app that ended with ``status`` failed, in the words of its panes and ``JobFailed``: its
        first failed replica's reason (the kernel's restart that stopped it, out of memory, its last stderr
        line, its exit code), else the app's message; "" if nothing says. A sweep's row shows it for a run
        that ended without a result."""
        first = first_failure(status, stderr_of(self.runner, self.handle), self.kernel_pid)
        if first is not None:
            return first[1]
        return " ".join(app_message(status).split())[:300] if status is not None else ""

    def cancel(self) -> None:
        """Asks the app to stop (returns at once; ``wait()`` to see it end)."""
        self.cancel_requested = True
        self.runner.cancel(self.handle)

    def logs(
        self,
        role: Optional[str] = None,
        k: Optional[int] = None,
        streams: Optional[str] = None,
        regex: Optional[str] = None,
        tail: Optional[int] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> LogLines:
        """Every log line written so far (``tail=N``: only the last N), ``\r`` and colours resolved, as
        plain text. Several replicas are interleaved and prefixed ``role/k |`` (``!`` for stderr). The
        result is a list that also says what it left out: ``.omitted`` earlier lines (0 unless ``tail``
        cut some), never silently."""
        sources = app_sources(self.fetch_status(), role, None if k is None else [k], streams)
        keep = max(tail, 1) if tail is not None else sys.maxsize
        mux = read_snapshot(self.runner, self.handle, sources, keep, self.line_chars(), regex, since, until)
        n = keep if tail is not None else mux.total(ALL) + len(sources)
        lines = LogLines(mux.plain(ALL, n))
        lines.omitted, lines.tail = mux.rows(ALL, n)[1], tail
        return lines

    def view(self) -> Any:
        """The live view of the front end that shows jobs in this process (in a notebook: the status pane
        over the log pane, made on first use). RuntimeError where none is registered (plain Python)."""
        if not VIEW_MAKERS:
            raise RuntimeError(
                "no front end shows jobs live in this process: in IPython, %load_ext jupyter_sched first"
            )
        return VIEW_MAKERS[-1](self)

    def summary(self, final_only: bool = True) -> str:
        """One line: the final state if the app had ended when last asked, else that it was launched
        (``final_only=False``: the state last seen, for a record that says when it was true)."""
        status = self.last_status
        if status is None or not status.is_terminal():
            if final_only or status is None:
                return f"{self.name} launched: {self.handle}"
            return f"{self.name} {status.state}: {self.handle}"
        line = f"{self.name} {status.state}: {self.handle}"
        codes = sorted({r.exit_code for role in status.roles for r in role.replicas if r.exit_code is not None})
        if codes:
            line += f" (exit code{'s' if len(codes) > 1 else ''} {', '.join(map(str, codes))})"
        return line


# -- how a waited-for app ended ----------------------------------------------------------------------------


class JobFailed(RuntimeError):
    """The app did not succeed. ``.job`` is the Job (its handle, logs, ...), ``.status`` its final
    AppStatus (None if the scheduler lost it), ``.state`` the final AppState."""

    def __init__(self, job: Job, status: Optional[AppStatus], message: str) -> None:
        super().__init__(message)
        self.job = job
        self.handle = job.handle
        self.status = status
        self.state = status.state if status is not None else AppState.UNKNOWN

    def _render_traceback_(self) -> List[str]:
        return [f"\x1b[31mJobFailed\x1b[0m: {self}"]


def failure_message(job: Job, status: Optional[AppStatus], fail_fast: bool = False) -> str:
    """One line: the app, its final state, the first failed replica and why it failed (the one reason of
    :mod:`jupyter_sched.frontend.jobs.reasons`, as every front end gives it), and the app as its id and
    scheduler (JupyterLab would link half of a handle in an error output: see ``specs.labels``)."""
    label = app_label(job.handle)
    if status is None:
        return f"{job.name}: the scheduler no longer knows {label} (its records were removed)"
    first = first_failure(status, stderr_of(job.runner, job.handle), job.kernel_pid)
    line = f"{job.name} {status.state}"
    if first is not None:
        line += f": {failure_line(*first)}"
        if fail_fast and "fail_fast" in (status.msg or ""):
            line += "; the other replicas were stopped (--fail-fast)"
    elif status.state == AppState.CANCELLED:
        line += ": cancelled outside this wait (a %sched_cancel, another kernel or the CLI)"
    else:
        message = app_message(status)
        if message:
            line += f": {' '.join(message.split())[:300]}"
    return f"{line} [{label}]"
