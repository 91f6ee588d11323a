"""Reading a Slurm replica's log files (see ``log_files``).

The files are written on the node by ``slurm_replica.py`` (each chunk appended as it is read, with an index
record ``(file size after the chunk, time)`` beside it, the same layout as the local backend's) and read
here from the shared job directory. Slurm cannot wake us, so a follow polls the file, every 0.05 s and at
most every 0.07 s while it stays quiet: with ``QUIET_S`` that keeps a frame or unterminated text within
about 100 ms of the wrapper writing it (one read of a small file per poll and replica; a network file
system's attribute cache may add its own delay).
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Optional

from jupyter_sched.schedulers.log_files import IndexedLogIterator


class SlurmLogIterator(IndexedLogIterator):
    """Iterates one log file of one replica. ``finished()`` says whether the replica can write nothing
    more (Slurm is asked, at the caller's pace)."""

    first_poll_s = 0.05
    max_poll_s = 0.07

    def __init__(
        self,
        log_file: str,
        finished: Callable[[], bool],
        regex: Optional[str] = None,
        should_tail: bool = False,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        super().__init__(log_file, regex=regex, should_tail=should_tail, since=since, until=until)
        self._is_finished = finished

    def _finished(self) -> bool:
        return self._is_finished()
