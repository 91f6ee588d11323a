"""A replica's log file and its time index, appended to by the IO loop, and what happens when the disk is full.

A write that fails (ENOSPC, EDQUOT, EIO, EFBIG, or any other ``OSError``) must not stop the loop: every
other replica of every app shares it. So the failure is contained in the sink. The bytes that reached the
file stay (the index records exactly them), the sink stops writing, remembers why in :attr:`LogSink.error`
and counts what it had to drop; the loop keeps reading the replica's pipe, so the replica never blocks on
a full pipe and is not killed. The replica's status then says its logs are truncated, and why.

The files are created 0600: a replica's output may hold secrets, and another user of a shared machine must
not read it (the directories above are 0700 too, see ``spawn.make_dirs``).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from jupyter_sched.schedulers.common.log_files import INDEX_RECORD, index_path

FILE_MODE = 0o600


@dataclass(eq=False)
class LogSink:
    """One ``<stream>.log`` and its ``<stream>.idx``, appended to with raw ``os.write``."""

    path: str
    fd: int = -1
    index_fd: int = -1
    size: int = 0
    """Bytes in the log file (and recorded in the index)."""
    error: str = ""
    """Why writing stopped ("" while it works); from then on the rest of the stream is read and dropped."""
    dropped: int = 0

    def open(self) -> None:
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
            self.index_fd = os.open(index_path(self.path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        except OSError as e:
            self._fail(e, "creating")

    def write(self, chunk: bytes, now: float) -> bool:
        """Appends ``chunk``; False (and :attr:`error` set) if it could not be written in full."""
        if self.error:
            self.dropped += len(chunk)
            return False
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError as e:
            written = len(chunk) - len(view)
            self.size += written
            self.dropped += len(view)
            self._index(now)  # the bytes that did land stay readable by time
            self._fail(e, "writing")
            return False
        self.size += len(chunk)
        return self._index(now)

    def _index(self, now: float) -> bool:
        try:
            os.write(self.index_fd, INDEX_RECORD.pack(self.size, now))
            return True
        except OSError as e:
            if not self.error:
                self._fail(e, "indexing")
            return False

    def _fail(self, e: OSError, doing: str) -> None:
        name = errno.errorcode.get(e.errno or 0, "OSError")
        self.error = f"{doing} {os.path.basename(self.path)}: {e.strerror or e} ({name})"

    def close(self) -> None:
        for fd in (self.fd, self.index_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self.index_fd = -1
