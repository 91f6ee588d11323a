"""Why a replica failed and what an app's message adds, in the words the panes and ``JobFailed`` share.

Pure functions of an ``AppStatus`` (no widgets, no I/O): the status pane's header and failure lines, the
cell's record and the one-line ``JobFailed`` all take a failed replica's reason from :func:`replica_reason`,
so one replica is explained the same way everywhere, and spelled one way (``python/0``).

The order of what explains a failure best:

1. out of memory, as the backend recorded it on the replica (``replica.msg``), in plain words:
   ``out of memory (limit 128 MiB, peak 21.4 MiB)`` rather than the ``MemoryError`` the program printed;
2. its owner's exit: a local replica stopped because the process that launched it exited, which in a
   notebook is the kernel's restart or shutdown (said so when the job's kernel is known);
3. the error file the replica wrote (TorchX's ``{"message": ...}``), then the last line it wrote to
   stderr (a Python traceback ends with the exception), then its exit code.

The last stderr lines are the one input that is not in the status: a front end passes them as a
:data:`StderrOf` (``(role, k) -> lines``), which :mod:`.stderr_tails` reads from the scheduler's logs,
once per failed replica. :func:`first_failure` and :func:`app_reason` ask for them only when nothing
before them explains the failure (:func:`needs_stderr`), so a listing of many failed apps with error files
reads no log. Every front end takes the app's failure from here: which replica failed first
(:func:`failed_replicas`), its line (:func:`failure_line`: ``python/0 FAILED (exit code 3): error: loss
is NaN``) and the app's one line (:func:`app_reason`: ``train FAILED: python/0 error: loss is NaN``, the
server's ``reason``, which JupyterLab's sidebar, job view, notification and record show as sent).

What they return is shown (the panes, ``JobFailed``, the notebook's saved record, the server's rows and
details), so it has its secrets masked by the one rule (:func:`jupyter_sched.specs.output.masking.mask_out`): an
error file that says ``WANDB_API_KEY=sk-...`` or ``{"WANDB_API_KEY": "sk-..."}`` gives a reason with
``********`` in its place. The error file is masked as JSON before its message is taken out, and any text
before it is cut to length, so neither a value under a secret key nor half a secret gets through.
"""

from __future__ import annotations

import json
import re
import signal
from typing import Callable, List, Optional, Sequence, Tuple

from jupyter_sched.specs import NONE, AppState, AppStatus, ReplicaStatus
from jupyter_sched.specs.output.labels import app_label
from jupyter_sched.specs.output.masking import mask_out

__all__ = [
    "StderrOf", "app_label", "app_message", "app_reason", "error_file_message", "exit_text", "failed_replicas",
    "failure_line", "first_failure", "needs_stderr", "out_of_memory", "owner_exit", "replica_reason",
]  # fmt: skip

StderrOf = Callable[[str, int], Sequence[str]]
"""``(role, k) -> the last lines replica k of role wrote on stderr`` (empty when unknown); see
:mod:`.stderr_tails`."""

OWNER_EXIT = re.compile(r"\bowner process (\d+) exited\b")
_OOM = re.compile(r"^(?:killed|failed): (out of memory\b.*)$")
_BARE_STATE = re.compile(r"^[A-Z][A-Z_]+$")
_SIGNALLED = {-15, -9, 128 + 15, 128 + 9}


def exit_text(code: Optional[int]) -> str:
    """An exit code as a person reads it: ``1``, ``-15 (SIGTERM)``, ``137 (128+SIGKILL)``; ``""`` for None."""
    if code is None:
        return ""
    number = -code if code < 0 else code - 128 if 128 < code < 160 else 0
    try:
        name = signal.Signals(number).name if number else ""
    except ValueError:
        name = ""
    if not name:
        return str(code)
    return f"{code} ({name})" if code < 0 else f"{code} (128+{name})"


def error_file_message(text: Optional[str]) -> str:
    """The message of a TorchX-style error file (``{"message": {"message": ...}}``), or its first line;
    secrets masked."""
    if not text or text == NONE:
        return ""
    text = mask_out(text)  # as JSON while it is JSON: a secret key's value is hidden whatever its type
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip().splitlines()[0] if text.strip() else ""
    message = data.get("message", data) if isinstance(data, dict) else data
    if isinstance(message, dict):
        message = message.get("message", "")
    return str(message or "").strip()


def out_of_memory(replica: ReplicaStatus) -> str:
    """``out of memory (limit ..., peak ...)`` when the backend says the replica failed at its memory
    limit (its ``msg``: ``killed: out of memory ...`` or ``failed: out of memory ...``), else ""."""
    for part in (replica.msg or "").split("; "):
        match = _OOM.match(part.strip())
        if match:
            return match.group(1)
    return ""


def owner_exit(status: Optional[AppStatus]) -> Optional[int]:
    """The pid of the owner whose exit stopped the app (a local app's message says so), else None."""
    match = OWNER_EXIT.search(status.msg or "") if status is not None else None
    return int(match.group(1)) if match else None


def owner_reason(pid: int, kernel_pid: Optional[int]) -> str:
    """Why a replica was stopped when its owner exited: a kernel's restart or shutdown, when the app was
    launched by that kernel."""
    if kernel_pid is not None and pid == kernel_pid:
        return (
            f"stopped when the kernel that launched it (process {pid}) was restarted or shut down;"
            " launch with --detach to keep a job through a restart"
        )
    return f"stopped when its owner, process {pid}, exited"


def replica_reason(
    replica: ReplicaStatus,
    status: Optional[AppStatus] = None,
    stderr: Sequence[str] = (),
    kernel_pid: Optional[int] = None,
) -> str:
    """One line saying why ``replica`` failed (see the module docstring for the order); ``stderr`` is its
    last stderr lines, if known."""
    explained = _explained(replica, status, kernel_pid)
    if explained:
        return explained
    last = next((line.strip() for line in reversed(stderr) if line.strip()), "")
    if last:
        return str(mask_out(last))[:300]
    return f"exit code {replica.exit_code}" if replica.exit_code is not None else "failed"


def _explained(replica: ReplicaStatus, status: Optional[AppStatus], kernel_pid: Optional[int]) -> str:
    """The reason from what the status itself says (out of memory, an owner's exit, the error file), or ""."""
    oom = out_of_memory(replica)
    if oom:
        return oom
    pid = owner_exit(status)
    if pid is not None and (replica.exit_code in _SIGNALLED or replica.exit_code is None):
        return owner_reason(pid, kernel_pid)
    message = error_file_message(replica.structured_error_msg)
    return " ".join(message.split())[:300] if message else ""


def needs_stderr(replica: ReplicaStatus, status: Optional[AppStatus] = None) -> bool:
    """Whether the replica's last stderr lines could be its reason: nothing in the status explains its
    failure (a front end reads its log only then)."""
    return not _explained(replica, status, None)


def failed_replicas(status: Optional[AppStatus]) -> List[ReplicaStatus]:
    """The FAILED replicas, first to fail first (then by role and index): the first is the one a one-line
    account of the app names, in every front end."""
    if status is None:
        return []
    failed = [rep for role in status.roles for rep in role.replicas if rep.state == AppState.FAILED]
    return sorted(failed, key=lambda r: (r.finished is None, r.finished or 0.0, r.role, r.id))


def first_failure(
    status: Optional[AppStatus], stderr_of: Optional[StderrOf] = None, kernel_pid: Optional[int] = None
) -> Optional[Tuple[ReplicaStatus, str]]:
    """The first replica to fail and its reason (:func:`replica_reason`, its stderr asked of ``stderr_of``
    only when it is needed), or None when no replica failed."""
    failed = failed_replicas(status)
    if not failed:
        return None
    rep = failed[0]
    stderr = stderr_of(rep.role, rep.id) if stderr_of is not None and needs_stderr(rep, status) else ()
    return rep, replica_reason(rep, status, stderr, kernel_pid)


def failure_line(replica: ReplicaStatus, reason: str) -> str:
    """``python/0 FAILED (exit code 3): error: loss is NaN``: a failed replica as the panes, ``JobFailed``,
    ``jupyter-sched status``, the server's rows and every saved record name it (``python/0 FAILED (exit code
    3)`` when its exit code is all that is known, not the code twice)."""
    code = f" (exit code {exit_text(replica.exit_code)})" if replica.exit_code is not None else ""
    head = f"{replica.role}/{replica.id} FAILED{code}"
    return head if not reason or reason == f"exit code {replica.exit_code}" else f"{head}: {reason}"


def app_reason(
    name: str, status: Optional[AppStatus], stderr_of: Optional[StderrOf] = None, kernel_pid: Optional[int] = None
) -> str:
    """How an app ended, in one line: ``train SUCCEEDED``, ``train CANCELLED``, ``train FAILED: python/0
    error: loss is NaN`` (the replica and reason of :func:`first_failure`, as the panes and ``JobFailed``
    give them); empty while it runs. The server's rows and details carry it, and JupyterLab shows it as
    sent. Masked (the name too: a job's name is the user's text)."""
    if status is None or not status.is_terminal():
        return ""
    text = f"{name} {status.state}"
    if status.state != AppState.SUCCEEDED:
        first = first_failure(status, stderr_of, kernel_pid)
        if first is not None:
            text += f": {first[0].role}/{first[0].id} {first[1]}"
    return str(mask_out(text))


def app_message(status: Optional[AppStatus]) -> str:
    """What the app's message adds to the panes: without the notes about single replicas (``role[k]: ...``,
    which the panes show with the replica, spelled ``role/k``), without a scheduler's bare state word
    (Slurm's ``RUNNING``, ``COMPLETED``: the state pill says it), and without an owner's exit that the
    failed replicas' reasons already give."""
    if status is None or not status.msg or status.msg == NONE:
        return ""
    explained = owner_exit(status) is not None and any(
        rep.exit_code in _SIGNALLED or rep.exit_code is None
        for role in status.roles for rep in role.replicas if rep.state == AppState.FAILED
    )  # fmt: skip
    text = status.msg
    for role in status.roles:
        for rep in role.replicas:
            if rep.msg:
                text = text.replace(f"{rep.role}[{rep.id}]: {rep.msg}", "")
    kept: List[str] = []
    for part in text.split("; "):
        head, sep, rest = part.partition(": ")
        if sep and _BARE_STATE.match(head):  # Slurm's "FAILED: sh[0]: ..."
            part = rest
        if explained and (OWNER_EXIT.match(part) or part.startswith("its replicas ")):
            continue
        if part.strip() and not _BARE_STATE.match(part.strip()):
            kept.append(part.strip())
    return str(mask_out("; ".join(kept)))
