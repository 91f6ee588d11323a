"""The replica side of a notebook job: run the snapshotted notebook with nbclient, saving as it goes.

:class:`NotebookRun` is what a job's ``call.pkl`` holds for a notebook (the function the bootstrap
calls): the notebook as it was at submit, its parameters already injected. Called in the replica, it

* starts a kernel: by default the replica's own Python (``sys.executable -m ipykernel_launcher``, from a
  kernel spec written on the fly), so kernel names of the machine that submitted do not matter; a named
  kernel must exist where the notebook runs, else the run fails at start listing those that do. The
  kernel talks over IPC sockets in a private temporary directory rather than TCP ports, so notebooks run
  side by side cannot race for a port. It is the replica's child and ends with it: the local backend's
  SIGTERM reaches the replica, whose handler (nbclient's) shuts the kernel down; if the replica is killed
  outright, the kernel's parent poller (``JPY_PARENT_PID``) ends it within a second;
* copies every output to the replica's stdout/stderr, so the logs show the notebook as it runs;
* writes, atomically, the partial output notebook after each cell (and, during a long cell, on new output
  at most every :data:`AUTOSAVE_S` seconds) and ``progress.json`` (cell k of n, its first line, when it
  started), with papermill's per-cell ``metadata.papermill`` (status, start_time, end_time, duration,
  exception) and the notebook's (parameters, start and end, exception);
* returns the values the notebook recorded (:mod:`.record`), or raises :class:`NotebookCellError` naming
  the cell that raised (``cell 7 (In [7]) raised ZeroDivisionError: ...``), later cells not run, the
  output saved with that cell marked ``failed``.

"cell k" counts every cell of the executed notebook (markdown and the injected cell too) from 1, as a
reader finds it by scrolling; ``In [n]`` is its execution count. The files sit in the job directory
(``JUPYTER_SCHED_FN_DIR``): ``<stem>.output.ipynb`` (``<stem>.output-<rank>.ipynb`` for ranks above 0),
any nbconvert format asked for beside it, and ``progress.json`` (rank 0's).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from jupyter_sched.functions.notebooks import record as records
from jupyter_sched.schedulers.common.private_files import write_private  # private (0600): outputs hold the parameters

AUTOSAVE_S = 5.0
"""At most this often, a long cell's new output is saved into the partial notebook."""
PROGRESS_FILE = "progress.json"
FOLDER_DIR = "folder"
KERNEL_NAME = "jupyter-sched-python"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class NotebookCellError(Exception):
    """A cell of a notebook job raised (or ran past the timeout); the message names the cell, a note (PEP
    678) holds the cell's own traceback."""

    __notes__: List[str]


class KernelNotFound(LookupError):
    """The named kernel is not installed where the notebook runs."""


def output_name(stem: str, rank: int, ext: str = "ipynb") -> str:
    return f"{stem}.output.{ext}" if rank == 0 else f"{stem}.output-{rank}.{ext}"


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")[:120]


class NotebookRun:
    """One notebook with its parameters injected, as it was at submit; calling it runs it (module doc)."""

    def __init__(
        self,
        nb: Dict[str, Any],
        *,
        stem: str,
        input_path: str,
        cwd: str,
        kernel: Optional[str],
        timeout: Optional[float],
        output_formats: Tuple[str, ...],
        folder: Optional[Dict[str, bytes]] = None,
    ) -> None:
        self.nb = nb
        self.stem = stem
        self.input_path = input_path
        self.cwd = cwd
        self.kernel = kernel
        self.timeout = timeout
        self.output_formats = output_formats
        self.folder = folder
        self.__name__ = stem
        self.__qualname__ = os.path.basename(input_path)

    def __repr__(self) -> str:
        return f"<notebook run of {self.input_path}>"

    def __call__(self) -> Dict[str, Any]:
        job_dir = os.environ.get("JUPYTER_SCHED_FN_DIR") or tempfile.mkdtemp(prefix=f"{self.stem}-")
        rank = int(os.environ.get("RANK", "0") or 0)
        cwd = self.working_dir(job_dir)
        scratch = tempfile.mkdtemp(prefix="jsnb-")  # short: IPC socket paths are limited to about 100 bytes
        try:
            return Execution(self, job_dir, rank, cwd, scratch).run()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def working_dir(self, job_dir: str) -> str:
        """Where the kernel starts: a copy of the notebook's folder (``with_folder``), else its folder
        when this machine sees it, else the job directory."""
        if self.folder is not None:
            root = os.path.join(job_dir, FOLDER_DIR)
            for rel, data in self.folder.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            return root
        if os.path.isdir(self.cwd):
            return self.cwd
        print(f"jupyter_sched: the notebook's folder {self.cwd} is not on this machine; running in {job_dir}"
              " (Notebook(..., with_folder=True) sends a copy)", file=sys.stderr)  # fmt: skip
        return job_dir


def kernel_manager(run: NotebookRun, scratch: str) -> Any:
    """An AsyncKernelManager for ``run``'s kernel, over IPC sockets in ``scratch``."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    if run.kernel is None:
        if importlib.util.find_spec("ipykernel") is None:
            raise ImportError(
                f"a notebook job runs its kernel with the replica's Python ({sys.executable}), which"
                " has no ipykernel; pip install ipykernel there, or pass Notebook(..., kernel=NAME)"
            )
        spec_dir = os.path.join(scratch, "kernels", KERNEL_NAME)
        os.makedirs(spec_dir)
        # history in memory: kernels run side by side would otherwise share (and lock) one SQLite file
        argv = [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--HistoryManager.hist_file=:memory:",
        ]
        spec = {"argv": argv,
                "display_name": f"Python ({sys.executable})", "language": "python"}  # fmt: skip
        with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
            json.dump(spec, f)
        specs = KernelSpecManager(kernel_dirs=[os.path.join(scratch, "kernels")], ensure_native_kernel=False)
        name = KERNEL_NAME
    else:
        specs, name = KernelSpecManager(), run.kernel
        known = sorted(specs.find_kernel_specs())
        if name not in known:
            raise KernelNotFound(f"kernel {name!r} is not installed where the notebook runs ({os.uname().nodename},"
                                 f" {sys.executable}); installed: {', '.join(known) or 'none'}. Pass one of those,"
                                 " or kernel=None for this Python")  # fmt: skip
    km = AsyncKernelManager(kernel_name=name, kernel_spec_manager=specs, transport="ipc",
                            ip=os.path.join(scratch, "k"))  # fmt: skip
    km.connection_file = os.path.join(scratch, "connection.json")
    return km


def require(module: str) -> None:
    """Fails at start, naming the fix, when the replica's Python lacks what a notebook job needs: nbclient,
    nbformat, jupyter_client and ipykernel are not among jupyter_sched's own dependencies (they come with
    JupyterLab, or with the ``notebooks`` extra)."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"a notebook job needs {module} in the replica's Python ({sys.executable}); pip install"
            " 'jupyter_sched[notebooks]' there (or JupyterLab, which brings nbclient and ipykernel)"
        )


class Execution:
    """One run of a :class:`NotebookRun` in this replica: the client, the files, the records."""

    def __init__(self, run: NotebookRun, job_dir: str, rank: int, cwd: str, scratch: str) -> None:
        for module in ("nbformat", "nbclient", "jupyter_client"):
            require(module)
        import nbformat

        self.run_ = run
        self.job_dir = job_dir
        self.rank = rank
        self.cwd = cwd
        self.scratch = scratch
        self.nb = nbformat.reads(json.dumps(run.nb), as_version=4)  # sources joined, as on reading a file
        self.output_path = os.path.join(job_dir, output_name(run.stem, rank))
        self.code = [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code" and c.source.strip()]
        self.records: Dict[str, Any] = {}
        self.last_save = 0.0
        self.current: Optional[int] = None
        self.cancelled = False

    # -- files --------------------------------------------------------------------------------------------

    def save(self) -> None:
        import nbformat

        write_private(self.output_path, nbformat.writes(self.nb))
        self.last_save = time.monotonic()

    def progress(self, state: str, index: Optional[int], error: str = "") -> None:
        if self.rank != 0:
            return
        cell = self.nb.cells[index] if index is not None else None
        entry = {
            "state": state, "cell": self.code.index(index) + 1 if index in self.code else 0,
            "cells": len(self.code), "index": index, "line": first_line(cell.source) if cell else "",
            "started": (cell.metadata.get("papermill") or {}).get("start_time") if cell else None,
            "output": self.output_path, "updated": now_iso(), **({"error": error} if error else {}),
        }  # fmt: skip
        write_private(os.path.join(self.job_dir, PROGRESS_FILE), json.dumps(entry))

    # -- the client's hooks ------------------------------------------------------------------------------

    def cell_start(self, cell: Any, cell_index: int, **_: Any) -> None:
        if cell_index not in self.code:
            return
        self.current = cell_index
        cell.metadata.papermill.update(start_time=now_iso(), status="running", exception=False)
        k = self.code.index(cell_index) + 1
        print(f"\n--- cell {cell_index + 1} ({k}/{len(self.code)}): {first_line(cell.source)}", flush=True)
        self.progress("running", cell_index)
        self.save()

    def cell_executed(self, cell: Any, cell_index: int, execute_reply: Any = None, **_: Any) -> None:
        failed = bool(execute_reply) and (execute_reply.get("content") or {}).get("status") == "error"
        self.finish_cell(cell, "failed" if failed else "completed")
        for out in cell.outputs:
            for mime, data in (out.get("data") or {}).items():
                found = records.decode(mime, data)
                if found is not None:
                    self.records[found[0]] = found[1]
        self.save()

    def cell_error(self, cell: Any, cell_index: int, **_: Any) -> None:
        cell.metadata.papermill.update(exception=True, status="failed")
        self.nb.metadata.papermill["exception"] = True

    def finish_cell(self, cell: Any, status: str) -> None:
        meta = cell.metadata.papermill
        end = now_iso()
        meta.update(end_time=end, status=status)
        if meta.get("start_time"):
            start = datetime.datetime.fromisoformat(meta["start_time"])
            meta["duration"] = (datetime.datetime.fromisoformat(end) - start).total_seconds()

    def echo(self, out: Any) -> None:
        """One output to the replica's log."""
        kind = out.get("output_type")
        if kind == "stream":
            stream = sys.stderr if out.get("name") == "stderr" else sys.stdout
            stream.write(out.get("text", ""))
            stream.flush()
        elif kind == "error":
            sys.stderr.write(ANSI.sub("", "\n".join(out.get("traceback") or [])) + "\n")
            sys.stderr.flush()
        elif kind in ("display_data", "execute_result"):
            data = out.get("data") or {}
            found = next((records.decode(m, d) for m, d in data.items() if records.decode(m, d)), None)
            if found is not None:
                print(f"[recorded {found[0]}]", flush=True)
            elif "text/plain" in data:
                print(data["text/plain"], flush=True)
            else:
                print(f"[{', '.join(sorted(data))}]", flush=True)

    # -- the run -----------------------------------------------------------------------------------------

    def prepare_metadata(self) -> None:
        papermill = self.nb.metadata.setdefault("papermill", {})
        papermill.update(start_time=now_iso(), end_time=None, duration=None, exception=None,
                         input_path=self.run_.input_path, output_path=self.output_path)  # fmt: skip
        papermill.setdefault("parameters", {})
        papermill.setdefault("environment_variables", {})
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                cell.execution_count = None
                cell.outputs = []
            cell.metadata["papermill"] = {"exception": None, "start_time": None, "end_time": None,
                                          "duration": None, "status": "pending"}  # fmt: skip

    def run(self) -> Dict[str, Any]:
        from nbclient.exceptions import CellExecutionError, CellTimeoutError

        self.prepare_metadata()
        self.save()
        self.progress("starting", None)
        km = kernel_manager(self.run_, self.scratch)
        client = make_client(self, km)
        failure: Optional[BaseException] = None
        reason = ""
        try:
            # the kernel's environment is this process's (the job's variables: track, RANK...) and the mark
            # that makes record() publish; this process's own is left as it is (a Notebook called by hand)
            client.execute(cwd=self.cwd, env={**os.environ, records.JOB_ENV: "1"})
        except CellTimeoutError as e:
            failure, reason = e, self.cell_reason(f"ran longer than timeout={self.run_.timeout} s")
        except CellExecutionError as e:
            failure, reason = e, self.cell_reason(f"raised {e.ename}: {e.evalue}")
        except BaseException as e:  # noqa: BLE001 - a kernel that died (a cancel), an interrupt: saved, then raised
            self.cancelled = client.signalled()
            if self.cancelled:
                failure, reason = e, self.cell_reason("stopped: the job was cancelled (SIGTERM) while it ran")
            else:
                failure, reason = e, self.cell_reason(f"stopped: {type(e).__name__}: {e}")
        finally:
            self.end(failure, reason)
        if isinstance(failure, (CellExecutionError, CellTimeoutError)):
            error = NotebookCellError(reason)
            trace = self.cell_traceback()
            if trace:  # shown after the message in the remote traceback (Python 3.11+), not in str(error)
                error.__notes__ = [f"the cell's traceback:\n{trace}"]
            raise error from None
        if failure is not None:
            raise failure
        return dict(self.records)

    def cell_traceback(self) -> str:
        """The failed cell's traceback as the kernel printed it, without colours ("" if it printed none)."""
        if self.current is None:
            return ""
        for out in self.nb.cells[self.current].get("outputs", []):
            if out.get("output_type") == "error":
                return ANSI.sub("", "\n".join(out.get("traceback") or []))
        return ""

    def cell_reason(self, what: str) -> str:
        index = self.current
        if index is None:
            return f"the notebook {what}"
        count = self.nb.cells[index].get("execution_count") or self.code.index(index) + 1
        return f"cell {index + 1} (In [{count}]) {what}"

    def end(self, failure: Optional[BaseException], reason: str) -> None:
        papermill = self.nb.metadata.papermill
        if failure is not None and self.current is not None:
            cell = self.nb.cells[self.current]
            cell.metadata.papermill.update(exception=True)
            if cell.metadata.papermill.get("status") != "failed":
                self.finish_cell(cell, "failed")
            papermill["exception"] = True
        papermill["end_time"] = now_iso()
        start = datetime.datetime.fromisoformat(papermill["start_time"])
        papermill["duration"] = (datetime.datetime.now(datetime.timezone.utc) - start).total_seconds()
        if failure is None:
            papermill["exception"] = False
        self.save()
        self.convert()
        state = "completed" if failure is None else "cancelled" if self.cancelled else "failed"
        self.progress(state, self.current, reason)
        if reason:
            print(f"jupyter_sched: {reason}", file=sys.stderr, flush=True)
        print(f"jupyter_sched: the output notebook is {self.output_path}", flush=True)

    def convert(self) -> None:
        """The other formats asked for, beside the output notebook; a failure is logged, not raised."""
        for fmt in self.run_.output_formats:
            if fmt == "ipynb":
                continue
            try:
                from nbconvert.exporters import get_exporter

                body, resources = get_exporter(fmt)().from_notebook_node(self.nb)
                ext = str(resources.get("output_extension") or f".{fmt}").lstrip(".")
                path = os.path.join(self.job_dir, output_name(self.run_.stem, self.rank, ext))
                write_private(path, body)
            except Exception as e:  # noqa: BLE001 - the notebook is saved; a missing converter is a note
                print(f"jupyter_sched: could not convert the output to {fmt}: {type(e).__name__}: {e}", file=sys.stderr)


def make_client(execution: Execution, km: Any) -> Any:
    """nbclient's NotebookClient, its outputs echoed to the log and autosaved (its ``output`` extended)."""
    from nbclient import NotebookClient

    class Client(NotebookClient):
        def output(self, outs: List[Any], msg: Dict[str, Any], display_id: Any, cell_index: int) -> Any:
            out = super().output(outs, msg, display_id, cell_index)
            if out is not None:
                execution.echo(out)
                if time.monotonic() - execution.last_save >= AUTOSAVE_S:
                    execution.save()
            return out

        def signalled(self) -> bool:
            """Whether a SIGTERM (or SIGINT) came during the run: nbclient's handler then shuts the kernel
            down, and the cell ends with whatever error that gives."""
            return getattr(self, "_async_cleanup_kernel_future", None) is not None

    client = Client(
        execution.nb, km=km, timeout=execution.run_.timeout, startup_timeout=120, shutdown_kernel="graceful",
        on_cell_start=execution.cell_start, on_cell_executed=execution.cell_executed,
        on_cell_error=execution.cell_error, resources={"metadata": {"path": execution.cwd}},
    )  # fmt: skip
    # graceful: the kernel exits by itself (its atexit handlers run, so jupyter_sched.track's buffered records
    # are written), and is killed only if it has not after jupyter_client's shutdown_wait_time (5 s)
    client.owns_km = True  # we made the manager, but the client stops its kernel at the end as if it had
    return client
