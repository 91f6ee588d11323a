"""TorchX's Ray scheduler through the bridge: the job's working directory, which the bridge owns.

TorchX's Ray scheduler takes the first role's ``image`` as a local directory: it writes its driver
(``ray_driver.py``, ``ray_common.py``, ``actors.json``) into it, uploads it as the Ray job's
``working_dir`` and then deletes it if it is under the temporary directory. Given a directory of the
user's, that writes into it or deletes it. So the bridge never hands TorchX one: every Ray job gets a new
directory under the temporary directory (:func:`stage`), holding a copy of the workspace (``--workspace``,
or a role image that names a local directory), ``.torchxignore`` applied as TorchX applies it, or nothing
at all (a component's default image, such as ``python:3.12-slim``, means nothing to Ray: the job runs in
the cluster's own environment). The copy exists while TorchX builds the request (it reads
``requirements.txt`` there) and again from the submit until TorchX has uploaded it; in between, a dry run
only names it, so a dry run that is never submitted leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile
from typing import Container, Dict, Iterable, Optional, Tuple

from jupyter_sched.schedulers.common.ignore import compile_patterns, dockerignore_lines, is_ignored
from jupyter_sched.schedulers.common.workspace_source import LocalWorkspace, WorkspaceSource
from jupyter_sched.specs import AppDef

__all__ = [
    "IGNORE_FILE", "LOG_POLL_S", "STAGE_PREFIX", "UPLOAD_LOGGERS", "failure_summary", "is_unknown_job", "remove",
    "stage", "working_dir_source",
]  # fmt: skip

STAGE_PREFIX = "jupyter_sched_ray_"
IGNORE_FILE = ".torchxignore"
UPLOAD_LOGGERS = ("ray.dashboard.modules.dashboard_sdk", "ray._private.runtime_env.packaging")
"""Ray's loggers that say, at INFO, how the working directory is packed and uploaded on each submit."""
LOG_POLL_S = 1.0
"""Seconds between two reads of a Ray job's log while it is followed: a line shows within this (plus
one request to the dashboard) of reaching the job's log."""


def stage(source: Optional[WorkspaceSource], target: Optional[str] = None) -> str:
    """A directory (0700) with a copy of ``source``'s files, less those its ``.torchxignore`` names (docker's
    ignore rules, as TorchX reads them), or empty: ``target``, which must not exist, else a new one under
    the temporary directory."""
    if target is None:
        target = tempfile.mkdtemp(prefix=STAGE_PREFIX)
    else:
        os.mkdir(target, 0o700)
    if source is None:
        return target
    try:
        patterns = compile_patterns(dockerignore_lines(source.read_text(IGNORE_FILE) or ""))
        with tempfile.TemporaryFile() as spool:
            with tarfile.open(fileobj=spool, mode="w") as tar:
                for rel_dir, dirs, files in source.walk():
                    for name in list(dirs):
                        rel = f"{rel_dir}/{name}" if rel_dir else name
                        if is_ignored(rel, patterns):
                            dirs.remove(name)
                        else:
                            source.add(tar, rel)
                    for name in files:
                        rel = f"{rel_dir}/{name}" if rel_dir else name
                        if not is_ignored(rel, patterns):
                            source.add(tar, rel)
            spool.seek(0)
            with tarfile.open(fileobj=spool, mode="r") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(target, filter=_inside)
                else:  # pragma: no cover - Pythons before 3.10.12: names were checked by the walk
                    tar.extractall(target)
    except BaseException:
        remove(target)
        raise
    return target


def _inside(member: tarfile.TarInfo, path: str) -> Optional[tarfile.TarInfo]:
    """tarfile's "data" filter, skipping (not failing on) what it refuses: a symlink that leads out of
    the workspace is left out of the copy."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None


def working_dir_source(app: AppDef, staged: Container[str]) -> Tuple[Optional[str], Optional[WorkspaceSource]]:
    """Where the job's working directory comes from: ``(path, None)`` when the first role's image is a
    directory the bridge already staged (from a workspace), else ``(None, source)``: a copy of the
    directory the first role's image names, or None for an empty one. Raises ValueError when roles name
    different directories (Ray uploads one working directory per job)."""
    first = app.roles[0].image
    for i, role in enumerate(app.roles[1:], 1):
        if role.image != first and role.image not in staged and role.image and os.path.isdir(role.image):
            raise ValueError(
                f"roles[{i}].image={role.image!r}: torchx:ray uploads one working directory per job, the"
                f" first role's ({first!r}); give every role that directory (or --workspace DIR)"
            )
    if first in staged:
        return first, None
    if first and os.path.isdir(first):
        return None, LocalWorkspace(os.path.abspath(first))
    return None, None


_ACTOR_LINE = re.compile(r"^(?:\x1b\[[0-9;]*m)?\([A-Za-z_]+ pid=(\d+)[^)]*\)(?:\x1b\[[0-9;]*m)? ?(.*)$")
_FAILED_ACTOR = re.compile(r"exec_module\(\)\S*\s*\(pid=(\d+)")
_RETURN_CODE = re.compile(r"exec_module failed with return code (-?\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure_summary(lines: Iterable[str]) -> Optional[str]:
    """What a failed Ray job's log says went wrong, in one line: the last line the failed replica printed
    (a Python traceback ends with the exception) and the exit code TorchX's driver reports, or None."""
    last: Dict[str, str] = {}
    failed, code = "", None
    for line in lines:
        actor = _ACTOR_LINE.match(line.rstrip("\n"))
        if actor and actor.group(2).strip():
            last[actor.group(1)] = last[""] = _ANSI.sub("", actor.group(2)).strip()
        failed = next((m.group(1) for m in [_FAILED_ACTOR.search(line)] if m), failed)
        code = next((m.group(1) for m in [_RETURN_CODE.search(line)] if m), code)
    said = last.get(failed) or last.get("", "")
    parts = ([said] if said else []) + ([f"exit code {code}"] if code is not None else [])
    return "; ".join(parts)[:300] or None


_APP_ID = re.compile(r"^(?P<address>.+?:\d+)-(?P<job>.+)$")


def job_message(app_id: str) -> Optional[str]:
    """Ray's message for the job ``app_id`` (TorchX's ``HOST:PORT-JOB``: the dashboard, then the job), read
    from the cluster's job API; None for an app id of another shape."""
    match = _APP_ID.match(app_id)
    if match is None:
        return None
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(f"http://{match.group('address')}")
    return client.get_job_info(match.group("job")).message


def job_message_summary(message: Optional[str]) -> Optional[str]:
    """Ray's own message for a failed job, in one line, for a job whose log names no failed replica (its
    driver failed before any actor ran: the cluster's ``python3`` lacks Ray, a runtime environment could
    not be set up): the last line of the logs Ray quotes (a traceback ends with the exception), then Ray's
    first line without its "last available logs" preamble. None for no message."""
    text = _ANSI.sub("", message or "").strip()
    if not text:
        return None
    head, _, logs = text.partition("\n")
    head = head.split(", last available logs", 1)[0].strip().rstrip(":")
    last = next((line.strip() for line in reversed(logs.splitlines()) if line.strip()), "")
    return "; ".join(part for part in (last, head) if part)[:300] or None


def remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def is_unknown_job(error: BaseException) -> bool:
    """True when Ray's job API answered that it has no such job (HTTP 404)."""
    return "status code 404" in str(error)
