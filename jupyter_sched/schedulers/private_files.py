"""Files and directories only their owner can read: 0700 directories, 0600 files, whatever the umask.

What jupyter_sched writes may hold secrets: logs (what jobs print), state and job scripts (the replicas'
env, tokens passed with ``-e``), a function job's pickled call (its arguments) and results (its return
values). A directory that already exists is left as it is (a log root the user chose, perhaps shared on
purpose); every directory created here, parents included, is private.
"""

from __future__ import annotations

import os
from typing import Union

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_private_dirs(path: str) -> None:
    """``os.makedirs(path, exist_ok=True)`` where every directory it creates is 0700 (``makedirs`` gives
    ``mode`` to the last one only). Directories that already exist are left as they are."""
    parent = os.path.dirname(path)
    if parent and parent != path and not os.path.isdir(parent):
        make_private_dirs(parent)
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def private_file(path: str) -> str:
    """Creates ``path`` (empty, if missing) readable by its owner only (0600); returns it."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    os.chmod(path, FILE_MODE)
    return path


def write_private(path: str, data: Union[bytes, str]) -> None:
    """Replaces ``path`` at once (a reader sees the old file or the new one, never a part) with a 0600
    file holding ``data``. On an error (a full disk) nothing is left behind and ``path`` is unchanged."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), FILE_MODE)
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
