"""``jupyter_sched.Notebook(path)``: a notebook as a runnable that ``submit``, ``sweep`` and ``map`` accept.

A Notebook is checked when made (the file is a notebook, the options are valid) and read again at each
submit: :meth:`Notebook.__jupyter_sched_call__` (which :func:`jupyter_sched.functions.launch.prepare` asks
of any runnable that has it) snapshots the file, checks the parameters against its ``parameters`` cell,
injects them (:mod:`.params`) and returns the :class:`~.execute.NotebookRun` the job pickles. So the user's
file is never written, an edit after submit does not change a running job, and a refused parameter
(``strict=True``) raises before anything is launched. Calling a Notebook here runs it in this process.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from types import FrameType
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from jupyter_sched.functions.notebooks import params as nbparams
from jupyter_sched.functions.notebooks.execute import NotebookRun, output_name

FORMATS = ("ipynb", "html", "markdown", "python", "script", "rst", "latex", "pdf", "webpdf", "asciidoc")
"""``output_formats``: the notebook itself, or an nbconvert exporter's name."""
FOLDER_LIMIT = 50 * 1024 * 1024
"""Bytes of the notebook's folder ``with_folder=True`` sends at most (it travels inside the job's call)."""
SKIPPED_DIRS = (".ipynb_checkpoints", "__pycache__", ".git", "node_modules", ".venv")


def outside_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first caller outside jupyter_sched (the user's
    ``submit`` or ``sweep`` line), however deep the call came in."""
    frame: Optional[FrameType] = sys._getframe(1)
    level = 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("jupyter_sched"):
        frame, level = frame.f_back, level + 1
    return level


def read_notebook(path: str) -> Dict[str, Any]:
    """The notebook at ``path`` as its JSON dict; errors name the file and what is wrong."""
    if not str(path).endswith(".ipynb"):
        raise ValueError(f"Notebook: {path!r} is not a .ipynb file; pass the path of a notebook")
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"Notebook: no notebook at {os.path.abspath(path)}") from None
    except ValueError as e:
        raise ValueError(f"Notebook: {path} is not valid notebook JSON ({e})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or nb.get("nbformat") != 4:
        raise ValueError(f"Notebook: {path} is not an nbformat 4 notebook (re-save it with JupyterLab)")
    return nb


def inspect_notebook(path: str) -> Dict[str, Dict[str, str]]:
    """The parameters of the notebook at ``path``, as papermill's ``inspect_notebook`` gives them:
    ``{name: {"name", "inferred_type_name", "default", "help"}}`` from the cell tagged ``parameters``
    (``{}`` when there is none); the default is the source text, the type ``"None"`` when not written."""
    return nbparams.inspect_nb(read_notebook(os.fspath(path)))


class Notebook:
    """A notebook to run as a job: ``jupyter_sched.submit(Notebook("train.ipynb"), lr=0.01)``.

    ``kernel``: a kernel name installed where it runs (default: the replica's own Python). ``timeout``:
    seconds a cell may run (default: no limit). ``output_formats``: ``"ipynb"`` and nbconvert's formats
    (``"html"``...), written beside the output notebook. ``with_folder``: send a copy of the notebook's
    folder with the job and run there (else it runs in the notebook's folder, or the job directory where
    that folder is not on the machine). ``strict``: refuse parameters the ``parameters`` cell does not
    define (else they warn). The keyword ``raw`` of a submit is a dict of names to Python expressions,
    written unquoted (``raw={"x": "np.arange(3)"}``); every other keyword is a parameter.
    """

    def __init__(
        self,
        path: str,
        kernel: Optional[str] = None,
        timeout: Optional[float] = None,
        output_formats: Sequence[str] = ("ipynb",),
        with_folder: bool = False,
        strict: bool = False,
    ) -> None:
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        read_notebook(path)
        if kernel is not None and (not isinstance(kernel, str) or not kernel):
            raise ValueError(f"Notebook: kernel must be a kernel's name or None (got {kernel!r})")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            raise ValueError(
                f"Notebook: timeout must be the seconds a cell may run, above 0, or None (got {timeout!r})"
            )
        formats = (output_formats,) if isinstance(output_formats, str) else tuple(output_formats)
        unknown = [f for f in formats if f not in FORMATS]
        if unknown or not formats:
            raise ValueError(
                f"Notebook: output_formats {unknown or list(formats)} not known; use some of {', '.join(FORMATS)}"
            )
        self.path = path
        self.kernel = kernel
        self.timeout = float(timeout) if timeout is not None else None
        self.output_formats = formats
        self.with_folder = bool(with_folder)
        self.strict = bool(strict)
        self.stem = os.path.splitext(os.path.basename(path))[0]
        self.__name__ = self.stem
        self.__qualname__ = os.path.basename(path)

    def __repr__(self) -> str:
        return f"Notebook({self.path!r})"

    def parameters(self) -> Dict[str, Dict[str, str]]:
        """The notebook's parameters as :func:`inspect_notebook` gives them (the file as it is now)."""
        return inspect_notebook(self.path)

    def bind(self, params: Mapping[str, Any], raw: Optional[Mapping[str, str]] = None) -> NotebookRun:
        """The run of the notebook as it is now with ``params`` (and ``raw`` expressions) injected; warns
        about (or, strict, refuses) names its ``parameters`` cell does not define."""
        raw = dict(raw or {})
        for name in (*params, *raw):
            if not str(name).isidentifier():
                raise ValueError(f"Notebook {self.path}: parameter name {name!r} is not a Python identifier")
        for name, expr in raw.items():
            if not isinstance(expr, str) or not expr.strip():
                raise TypeError(f"Notebook {self.path}: raw[{name!r}] must be a Python expression as text")
        nb = read_notebook(self.path)
        known = nbparams.inspect_nb(nb)
        unknown = [n for n in (*params, *raw) if n not in known]
        if unknown:
            defined = ", ".join(known) or "none; no cell is tagged parameters"
            plural = "s" if len(unknown) > 1 else ""
            names = ", ".join(unknown)
            text = f"{self.path}: parameter{plural} {names} not defined in its parameters cell (it defines: {defined})"
            if self.strict:
                raise ValueError(f"Notebook(strict=True) {text}; fix the name or drop strict=True")
            warnings.warn(text, stacklevel=outside_stacklevel())
        nb, has_cell = nbparams.inject(nb, params, raw)
        if not has_cell and (params or raw):
            warnings.warn(f"{self.path} has no cell tagged 'parameters': the parameters go in a first cell",
                          stacklevel=outside_stacklevel())  # fmt: skip
        nb["metadata"]["papermill"]["default_parameters"] = {k: v["default"] for k, v in known.items()}
        return NotebookRun(
            nb, stem=self.stem, input_path=self.path, cwd=os.path.dirname(self.path), kernel=self.kernel,
            timeout=self.timeout, output_formats=self.output_formats,
            folder=self.folder() if self.with_folder else None,
        )  # fmt: skip

    def folder(self) -> Dict[str, bytes]:
        """The notebook's folder's files (hidden ones, checkpoints and caches left out), by relative path."""
        root = os.path.dirname(self.path)
        files: Dict[str, bytes] = {}
        total = 0
        for here, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            for name in sorted(names):
                path = os.path.join(here, name)
                if name.startswith(".") or not os.path.isfile(path):
                    continue
                total += os.path.getsize(path)
                if total > FOLDER_LIMIT:
                    raise ValueError(f"Notebook(with_folder=True): {root} holds more than {FOLDER_LIMIT // 2**20} MB;"
                                     " move the data elsewhere (a path the job reads) or drop with_folder")  # fmt: skip
                with open(path, "rb") as f:
                    files[os.path.relpath(path, root)] = f.read()
        return files

    def __jupyter_sched_call__(
        self, args: Tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> Tuple[NotebookRun, Tuple[Any, ...], Dict[str, Any], Dict[str, Any]]:
        """What a job runs for this notebook with ``kwargs`` as parameters: the call and its meta."""
        if args:
            raise TypeError(f"Notebook {self.path}: parameters are passed by name (lr=0.1), not by position; for a"
                            " sweep over one parameter use sweep(Notebook(...), {'lr': [...]})")  # fmt: skip
        params = dict(kwargs)
        raw = params.pop("raw", None) or {}
        if not isinstance(raw, Mapping):
            raise TypeError(f"Notebook {self.path}: raw must be a dict of names to Python expressions (got {raw!r})")
        run = self.bind(params, raw)
        meta = {"notebook": self.path, "source": self.path, "output": output_name(self.stem, 0)}
        return run, (), {}, meta

    def __call__(self, **kwargs: Any) -> Dict[str, Any]:
        """Runs the notebook in this process (output in a temporary directory); returns what it recorded."""
        run, _, _, _ = self.__jupyter_sched_call__((), kwargs)
        return run()
