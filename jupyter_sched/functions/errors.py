"""The errors of function jobs: each says what happened, where, and what to do about it.

:class:`FunctionError` is what a notebook sees when the function raised in a replica: the remote
traceback text (as the replica printed it), the replica (``role/k``) and the exception's type; the
original exception object too when it could be pickled back. IPython shows it as that traceback rather
than one through our code (``_render_traceback_``). :meth:`FunctionError.rerun_here` calls the same
function with the same arguments in this process, where ``%debug`` and breakpoints work.

An error of a sweep's run also names the run by its parameters (``run``, e.g. ``lr=1.0, epochs=4``) and
says how to get the other runs' values (``hint``): see :meth:`RunContext.in_run`. Every error that can be
run again here says how to debug it in one sentence, :func:`debug_hint`, whether it came from
``job.result()``, ``sweep.results()`` or ``%sched_run --wait``: only the call that re-runs it differs.
"""

from __future__ import annotations

from typing import Any, List, Optional, TypeVar

from jupyter_sched.specs.output.labels import app_label

E = TypeVar("E", bound="RunContext")

#: How a notebook re-runs the call of a job's FunctionError, for the debug hint (``job`` is the name the docs and
#: ``job = %sched_run ...`` use; the magic puts the assigned name instead).
JOB_RERUN = "job.exception().rerun_here()"


def debug_hint(rerun_call: str) -> str:
    """How to debug a failed call, the same words wherever it failed: ``rerun_call`` is the code that runs
    it again here (``job.exception().rerun_here()``, ``sweep.rerun_here(1)``)."""
    return f"to debug it here: {rerun_call} raises it again in this kernel, then %debug opens the failing frame"


class RunContext:
    """What an error of one run of a sweep adds: the run's parameters and how to get the others; and for
    any error that can be run again here, how to debug it."""

    run: str = ""
    """The run, by its parameters (``lr=1.0, epochs=4``); empty outside a sweep."""
    hint: str = ""
    """What to do instead (``sweep.results(errors="return")`` ...); empty outside a sweep."""
    rerun_call: str = ""
    """The code that runs the failed call again here (``sweep.rerun_here(1)``); empty: no debug hint."""

    def in_run(self: E, run: str, hint: str = "", rerun_call: str = "") -> E:
        """This error, naming the sweep's run ``run`` (its parameters) and ending with ``hint`` and, when
        ``rerun_call`` is given, how to debug it with that call."""
        self.run, self.hint = run, hint
        if rerun_call:
            self.rerun_call = rerun_call
        return self

    def advice(self) -> List[str]:
        """The lines after the error: the hint, then how to debug it (see :func:`debug_hint`)."""
        return [line for line in (self.hint, debug_hint(self.rerun_call) if self.rerun_call else "") if line]

    def run_text(self, text: str) -> str:
        """``text`` with the run in front and the advice after, as set by :meth:`in_run`."""
        head = f"run {self.run}: {text}" if self.run else text
        return "\n".join([head, *self.advice()])


class FunctionError(RunContext, RuntimeError):
    """The function raised in a replica. ``.replica`` is ``role/k``, ``.rank`` the replica's rank,
    ``.remote_traceback`` the text the replica printed, ``.exc_type`` the exception's qualified type name,
    ``.exception`` the exception itself when it could be unpickled here (else None), ``.handle`` the app,
    ``.call_file`` the pickled call (``call.pkl`` in the job directory) that :meth:`rerun_here` runs.

    ``.shown_above``: where its traceback was already shown (``%sched_run --wait`` sets it to the job's log
    in the cell's panes), so IPython shows the error's line and what to do, not the same traceback twice."""

    rerun_call = JOB_RERUN
    shown_above = ""

    def __init__(
        self,
        handle: str,
        replica: str,
        rank: int,
        exc_type: str,
        message: str,
        remote_traceback: str,
        exception: Optional[BaseException] = None,
        call_file: str = "",
        world_size: int = 1,
    ) -> None:
        super().__init__(f"{exc_type}: {message} (raised in replica {replica} of {app_label(handle)})")
        self.handle = handle
        self.replica = replica
        self.rank = rank
        self.exc_type = exc_type
        self.message = message
        self.remote_traceback = remote_traceback
        self.exception = exception
        self.call_file = call_file
        self.world_size = world_size
        if not call_file:  # nothing to re-run (rerun_here says why): no hint to follow
            self.rerun_call = ""

    def __str__(self) -> str:
        head = self.run_text(super().__str__())
        return f"{head}\n\nremote traceback ({self.replica}):\n{self.remote_traceback.rstrip()}"

    def __repr__(self) -> str:
        """One readable line (a list of ``results(errors="return")`` shows each error so)."""
        where = f"run {self.run}" if self.run else f"replica {self.replica}"
        return f"<FunctionError in {where}: {self.exc_type}: {_short(self.message)}>"

    def _render_traceback_(self) -> List[str]:
        app = app_label(self.handle)  # not the handle: JupyterLab would link half of it in error output
        where = f"run {self.run} (replica {self.replica} of {app})" if self.run else f"replica {self.replica} of {app}"
        if self.shown_above:
            return [
                f"\x1b[31mFunctionError\x1b[0m in {where}: {self.exc_type}: {_short(self.message)}",
                f"(its traceback is {self.shown_above})",
                *self.advice(),
            ]
        return [
            f"\x1b[31mFunctionError\x1b[0m in {where}:",
            *self.remote_traceback.rstrip().splitlines(),
            *self.advice(),
        ]

    def rerun_here(self) -> Any:
        """Calls the same function with the same arguments in this process and returns its value (or
        raises what it raises, here, so ``%debug`` and breakpoints work). ``RANK``, ``LOCAL_RANK`` and
        ``WORLD_SIZE`` are this replica's for the call. Its tracebacks show each frame's file or cell and
        source line. Needs the job directory (``call_file``): gone if it was deleted."""
        __tracebackhide__ = True  # noqa: F841 - IPython and pytest start the traceback at the user's code
        if not self.call_file:
            raise ValueError(
                f"no call to re-run: the FunctionError of {app_label(self.handle)} does not name its job directory"
            )
        from jupyter_sched.functions.calls.rerun import run_file

        return run_file(self.call_file, self.rank, self.world_size)


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class MissingResultError(RunContext, RuntimeError):
    """A replica ended without writing its result (killed, out of memory, cancelled, or the bootstrap
    could not start), or a sweep's run never ran (cancelled while queued, could not launch); the message
    names the replica and where its logs are, or the run and why."""

    def __str__(self) -> str:
        return self.run_text(super().__str__())

    def __repr__(self) -> str:
        return f"<MissingResultError: {_short(str(self))}>"


class ResultError(RunContext, RuntimeError):
    """A replica's result cannot be had: the replica could not write it (``.writing``: a full disk, a
    read-only directory), or it cannot be read here (a truncated or foreign file, or a value whose class
    exists only where the replica ran). The message names the app (``.handle``), the replica
    (``.replica``, ``role/k``), the file (``.path``) and the reason (``.reason``)."""

    def __init__(self, handle: str, replica: str, rank: int, path: str, reason: str, writing: bool = False) -> None:
        what = f"replica {replica} of {app_label(handle)}" if handle else f"replica {replica}"
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

    def __str__(self) -> str:
        return self.run_text(super().__str__())

    def __repr__(self) -> str:
        return f"<ResultError: {_short(str(self))}>"

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
