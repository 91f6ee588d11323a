"""A function job's directory is *incomplete* until its app is recorded; what an interrupted submit leaves
is removed by the next process that uses the same root.

A submit writes the job directory (the pickled call, which holds the function's arguments and so perhaps
secrets, and the bootstrap), schedules the app, then records the app's handle in ``meta.json``. A submitter
killed in between (SIGKILL, the OOM killer) cannot remove the directory, and no app would ever refer to
it. So before anything of the job exists, :func:`begin` creates a marker beside it whose name says the
directory is incomplete (``.<job dir>.incomplete``); :func:`done` removes it once ``meta.json`` is written.
The marker is a symbolic link whose text is the submitter's identity (``host/pid/start``, see
``process_identity``): created in one step, so it is never found empty, and it points nowhere.

The directory itself keeps its final name from the start: the replicas are started inside ``schedule`` (a
local replica may be running before ``schedule`` returns), by the path their app names, so the directory
cannot be renamed once the app exists without a moment when that path is missing.

:func:`sweep` (called by ``launch`` and ``attach`` before they use a root) removes, for each marker older
than :data:`INCOMPLETE_AGE` whose submitter is gone, the directory it marks (unless ``meta.json`` is there:
a recorded job is never removed) and then the marker. A marker of a live submitter, of one on another host
(a cluster's shared ``job_dir``: it cannot be checked from here) or a recent one is left alone. Each process
sweeps a root at most once per :data:`INCOMPLETE_AGE`, so a sweep of many jobs does not list the root at
every submit.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from typing import Dict, List, Optional

from jupyter_sched.functions.results import META_FILE
from jupyter_sched.schedulers.common.process_identity import is_gone, this_process

INCOMPLETE_AGE = 60.0
"""Seconds a marker must have existed before its directory may be removed (the one place this is set)."""
SUFFIX = ".incomplete"

_swept: Dict[str, float] = {}
_lock = threading.Lock()


def marker_of(job_dir: str) -> str:
    """The marker that says ``job_dir`` is incomplete: ``.<name>.incomplete`` beside it."""
    parent, name = os.path.split(job_dir.rstrip(os.sep))
    return os.path.join(parent, f".{name}{SUFFIX}")


def begin(job_dir: str) -> None:
    """Marks ``job_dir`` incomplete, owned by this process; call before creating it."""
    os.symlink(this_process(), marker_of(job_dir))


def done(job_dir: str) -> None:
    """``job_dir``'s app is recorded (or the directory was removed): drops its marker."""
    try:
        os.unlink(marker_of(job_dir))
    except FileNotFoundError:
        pass


def sweep(root: str, min_age: float = INCOMPLETE_AGE, force: bool = False) -> List[str]:
    """Removes what interrupted submits left under ``root`` (see the module docstring); returns the
    directories removed. Once per ``min_age`` per root in this process, unless ``force``."""
    now = time.time()
    with _lock:
        if not force and now - _swept.get(root, -min_age) < min_age:
            return []
        _swept[root] = now
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        if not (name.startswith(".") and name.endswith(SUFFIX)) or len(name) <= len(SUFFIX) + 1:
            continue
        marker = os.path.join(root, name)
        owner = _owner(marker, now, min_age)
        if owner is None or not is_gone(owner):
            continue
        job_dir = os.path.join(root, name[1 : -len(SUFFIX)])
        if not os.path.exists(os.path.join(job_dir, META_FILE)):
            shutil.rmtree(job_dir, ignore_errors=True)
            if os.path.lexists(job_dir):
                continue  # could not be removed (permissions): keep the marker, so a later sweep tries again
            removed.append(job_dir)
        try:
            os.unlink(marker)
        except FileNotFoundError:  # another process swept it at the same time
            pass
    return removed


def _owner(marker: str, now: float, min_age: float) -> Optional[str]:
    """The submitter a marker names, if it is a marker old enough to be judged; else None."""
    try:
        if now - os.lstat(marker).st_mtime < min_age:
            return None
        return os.readlink(marker)
    except OSError:  # not a symbolic link (not ours), or already gone
        return None
