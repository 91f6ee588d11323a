"""The errors of function jobs: each says what happened, where, and what to do about it.

:class:`FunctionError` is what a notebook sees when the function raised in a replica: the remote
traceback text (as the replica printed it), the replica (``role/k``) and the exception's type; the
original exception object too when it could be pickled back. IPython shows it as that traceback rather
than one through our code (``_render_traceback_``).
"""

from __future__ import annotations

from typing import List, Optional


class FunctionError(RuntimeError):
    """The function raised in a replica. ``.replica`` is ``role/k``, ``.rank`` the replica's rank,
    ``.remote_traceback`` the text the replica printed, ``.exc_type`` the exception's qualified type name,
    ``.exception`` the exception itself when it could be unpickled here (else None), ``.handle`` the app."""

    def __init__(
        self,
        handle: str,
        replica: str,
        rank: int,
        exc_type: str,
        message: str,
        remote_traceback: str,
        exception: Optional[BaseException] = None,
    ) -> None:
        super().__init__(f"{exc_type}: {message} (raised in replica {replica} of {handle})")
        self.handle = handle
        self.replica = replica
        self.rank = rank
        self.exc_type = exc_type
        self.message = message
        self.remote_traceback = remote_traceback
        self.exception = exception

    def __str__(self) -> str:
        head = super().__str__()
        return f"{head}\n\nremote traceback ({self.replica}):\n{self.remote_traceback.rstrip()}"

    def _render_traceback_(self) -> List[str]:
        return [
            f"\x1b[31mFunctionError\x1b[0m in replica {self.replica} of {self.handle}:",
            *self.remote_traceback.rstrip().splitlines(),
        ]


class MissingResultError(RuntimeError):
    """A replica ended without writing its result (killed, out of memory, cancelled, or the bootstrap
    could not start); the message names the replica and where its logs are."""


class ResultError(RuntimeError):
    """A replica's result cannot be had: the replica could not write it (``.writing``: a full disk, a
    read-only directory), or it cannot be read here (a truncated or foreign file, or a value whose class
    exists only where the replica ran). The message names the app (``.handle``), the replica
    (``.replica``, ``role/k``), the file (``.path``) and the reason (``.reason``)."""

    def __init__(self, handle: str, replica: str, rank: int, path: str, reason: str, writing: bool = False) -> None:
        what = f"replica {replica} of {handle}" if handle else f"replica {replica}"
        if writing:
            text = f"{what} could not write its result to {path}: {reason}"
        else:
            text = f"cannot read the result of {what} from {path}: {reason}"
        super().__init__(text)
        self.handle = handle
        self.replica = replica
        self.rank = rank
        self.path = path
        self.reason = reason
        self.writing = writing

    def _render_traceback_(self) -> List[str]:
        """IPython shows the message alone: a traceback through the reading code would say nothing more."""
        return [f"\x1b[31mResultError\x1b[0m: {self}"]


class UnpicklableError(TypeError):
    """Something the call needs cannot be sent to a replica; raised before anything is launched.
    ``.path`` is how it is reached from the call (e.g. ``train -> global 'log' -> attribute 'fh'``)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class IncompatibleImageError(ValueError):
    """The image's Python (minor version) or cloudpickle (major version) cannot read what this
    interpreter pickles; raised before launch, naming both versions and the fix."""
