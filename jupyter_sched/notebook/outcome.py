"""How a waited-for app ended, as the notebook reports it: :class:`JobFailed` and its one-line message.

``%sched_run --wait`` and ``job.result()`` raise :class:`JobFailed` when the app did not succeed, so that
Run All, papermill and nbval stop at the failed job, as submitit's ``job.result()`` and ipyparallel's
``%px`` do. ``job.wait()`` keeps returning the status (it is the "tell me how it ended" call). IPython
shows the exception as its one line (``_render_traceback_``), not a traceback through our code.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, List, Optional

from jupyter_sched.runner import failed_replica
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.specs import AppState, AppStatus

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.job import Job

NONE = "<NONE>"


class JobFailed(RuntimeError):
    """The app did not succeed. ``.job`` is the Job (its handle, logs, ...), ``.status`` its final
    AppStatus (None if the scheduler lost it), ``.state`` the final AppState."""

    def __init__(self, job: "Job", status: Optional[AppStatus], message: str) -> None:
        super().__init__(message)
        self.job = job
        self.handle = job.handle
        self.status = status
        self.state = status.state if status is not None else AppState.UNKNOWN

    def _render_traceback_(self) -> List[str]:
        return [f"\x1b[31mJobFailed\x1b[0m: {self}"]


def replica_error(job: "Job", role: str, replica: Any) -> str:
    """What went wrong in one replica: its structured error if the backend recorded one, else the last
    line it wrote to stderr (a Python traceback ends with the exception), else its exit code."""
    structured = getattr(replica, "structured_error_msg", NONE)
    if structured and structured != NONE:
        try:
            data = json.loads(structured)
            message = data.get("message", data) if isinstance(data, dict) else data
            if isinstance(message, dict):
                message = message.get("message", message)
            return " ".join(str(message).split())[:300]
        except ValueError:
            return " ".join(structured.split())[:300]
    try:
        lines = list(job.runner.log_lines(job.handle, role, replica.id, streams=Stream.STDERR))
    except Exception:  # noqa: BLE001 - no stderr to read: say what we know
        lines = []
    last = next((line.strip() for line in reversed("".join(lines).splitlines()) if line.strip()), "")
    if last:
        return last[:300]
    return f"exit code {replica.exit_code}" if replica.exit_code is not None else "no error recorded"


def failure_message(job: "Job", status: Optional[AppStatus], fail_fast: bool = False) -> str:
    """One line: the app, its final state, the first failed replica and its error, the handle."""
    if status is None:
        return f"{job.name}: the scheduler no longer knows {job.handle} (its records were removed)"
    first = failed_replica(status)
    line = f"{job.name} {status.state}"
    if first is not None:
        role, replica = first
        code = f" (exit code {replica.exit_code})" if replica.exit_code is not None else ""
        line += f": {role}/{replica.id} FAILED{code}: {replica_error(job, role, replica)}"
        if fail_fast and "fail_fast" in (status.msg or ""):
            line += "; the other replicas were stopped (--fail-fast)"
    elif status.state == AppState.CANCELLED:
        line += ": cancelled outside this wait (a %sched_cancel, another kernel or the CLI)"
    elif status.msg and status.msg != NONE:
        line += f": {' '.join(status.msg.split())[:300]}"
    return f"{line} [{job.handle}]"
