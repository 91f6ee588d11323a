"""A notebook run from a typed line: ``train.ipynb -p lr 0.01 -y 'epochs: 3' --strict``, for ``%sched_notebook``
and ``jupyter-sched notebook`` alike (one parser, so the magic and the command line cannot drift apart).

The parameter flags mean what they mean to papermill, whose command line users already know:

* ``-p NAME VALUE``: the value read as a Python literal where it is one (``0.01``, ``3``, ``True``,
  ``None``, ``[1, 2]``, ``'quoted'``), else kept as the string typed (``-p tag best``);
* ``-r NAME VALUE``: the value as a string, never read (``-r tag 0.1`` is ``'0.1'``);
* ``-f FILE``: a YAML file of ``name: value``; ``-y TEXT``: the same as YAML text;
* ``--expr NAME EXPR``: a Python expression written unquoted into the injected cell (the ``raw=`` of
  ``submit``; papermill has no flag for it).

Later sources win, in papermill's order: ``-f``, then ``-y``, then ``-r``, ``-p`` and ``--expr`` as typed.
``--strict`` refuses names the ``parameters`` cell does not define, naming the flag that gave each, before
anything is launched; ``--help-notebook`` lists what it defines. The run options (``-s``, ``--cfg``,
``--wait``...) come before the notebook and are parsed by the front end, exactly as for ``run``; this
module reads what follows them. Every error is a :class:`~jupyter_sched.frontend.errors.UsageError` naming
the flag and the fix.
"""

from __future__ import annotations

import argparse
import ast
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.launch.parsers import RaisingArgumentParser, error_prefix
from jupyter_sched.functions.notebooks import params as nbparams
from jupyter_sched.functions.notebooks.notebook import FORMATS, Notebook, inspect_notebook

JOB_FLAGS = {"num_replicas": "--num_replicas", "name": "--name", "image": "--image", "h": "--h"}
"""The job's own options, spelt as for a notebook function on ``%sched_run`` and the built-in components."""
RUN_OPTIONS_NOTE = (
    "Run options (-s/--scheduler, --cfg, --dryrun, --wait, --log, --fail-fast, --workspace) go before the"
    " notebook, exactly as for run."
)


@dataclass
class NotebookArgs:
    """What follows the run options: the notebook, its parameters (each with the flag that gave it, for
    messages), the Notebook's options and the job's."""

    path: str
    params: Dict[str, Any] = field(default_factory=dict)
    exprs: Dict[str, str] = field(default_factory=dict)
    origin: Dict[str, str] = field(default_factory=dict)
    """Each parameter's name -> the flag that set it last (``-p lr``, ``-f params.yaml``)."""
    strict: bool = False
    help_notebook: bool = False
    kernel: Optional[str] = None
    timeout: Optional[float] = None
    output_formats: Tuple[str, ...] = ("ipynb",)
    with_folder: bool = False
    options: Dict[str, Any] = field(default_factory=dict)
    """The job's options (``num_replicas``, ``name``, ``image``, ``h``) that were given."""
    prog: str = "jupyter-sched notebook"

    def notebook(self) -> Notebook:
        """The :class:`Notebook` to submit; a file that is not a notebook is a UsageError naming it."""
        try:
            return Notebook(self.path, kernel=self.kernel, timeout=self.timeout, output_formats=self.output_formats,
                            with_folder=self.with_folder, strict=self.strict)  # fmt: skip
        except (OSError, ValueError) as e:
            raise UsageError(f"{error_prefix(self.prog)}{e}") from None

    def call_kwargs(self) -> Dict[str, Any]:
        """The keywords of ``submit`` for the parameters (``raw=`` holding the expressions)."""
        return {**self.params, **({"raw": dict(self.exprs)} if self.exprs else {})}


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of what follows the run options (it raises instead of exiting)."""
    parser = RaisingArgumentParser(
        prog=prog, add_help=False,
        usage="%(prog)s [RUN OPTIONS] NOTEBOOK [-p NAME VALUE]... [-r NAME VALUE]... [-f FILE]... [-y YAML]..."
        " [--strict] [--help-notebook] [OPTIONS]",
        description="Run a notebook as a job, with its parameters injected as papermill does.",
        epilog=RUN_OPTIONS_NOTE,
    )  # fmt: skip
    parser.add_argument("notebook", help="the .ipynb file to run")
    parser.add_argument("--help", action="help", help="show this help message")
    add = parser.add_argument
    add("-p", "--parameters", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), dest="p",
        help="a parameter; the value is read as a Python literal where it is one (0.1, 3, True, [1, 2]), else a string")
    add("-r", "--parameters_raw", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), dest="r",
        help="a parameter whose value is the string as typed (never read as a number)")
    add("-f", "--parameters_file", action="append", default=[], metavar="FILE", dest="f",
        help="a YAML file of name: value parameters (repeatable; later files win)")
    add("-y", "--parameters_yaml", action="append", default=[], metavar="YAML", dest="y",
        help="name: value parameters as YAML text, e.g. -y 'lr: 0.1' (repeatable)")
    add("--expr", nargs=2, action="append", default=[], metavar=("NAME", "EXPR"), dest="expr",
        help="a Python expression written unquoted into the injected cell, e.g. --expr x 'np.arange(3)'")
    add("--strict", action="store_true", help="refuse parameters the notebook's parameters cell does not define")
    add("--help-notebook", action="store_true", help="list the notebook's parameters (name, type, default, help)")
    add("--kernel", help="a kernel installed where it runs (default: the replica's own Python)")
    add("--timeout", type=float, metavar="SECONDS", help="seconds one cell may run (default: no limit)")
    add("--output-format", action="append", default=[], dest="output_formats", choices=FORMATS, metavar="FORMAT",
        help=f"also write the output in this nbconvert format (repeatable): {', '.join(FORMATS[1:])}")
    add("--with-folder", action="store_true", help="send a copy of the notebook's folder and run there")
    add("--num_replicas", type=int, metavar="N", help="replicas, each running the notebook (default 1)")
    add("--name", help="the job's name (default: the notebook's file name)")
    add("--image", help="the container image (container schedulers such as local_docker)")
    add("--h", metavar="RESOURCE", help="a named resource, e.g. --h gpu.small")  # fmt: skip
    return parser


def asks_for_help(run_options: Sequence[str]) -> bool:
    """Whether the leading run options hold ``-h``/``--help``: the help then is this parser's (it lists the
    run options too), not ``run``'s, whose usage names a component."""
    return any(option in ("-h", "--help") for option in run_options)


def help_text(prog: str) -> str:
    """The full help of ``prog`` (``%sched_notebook``, ``jupyter-sched notebook``)."""
    return build_parser(prog).format_help()


def literal_or_text(text: str) -> Any:
    """``-p``'s reading of a value: a Python literal of JSON's types where the text is one, else the text."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    try:
        nbparams.literal(value, "value")
    except TypeError:  # bytes, sets, complex numbers: not a notebook parameter, so the text as typed
        return text
    return value


def load_yaml(text: str, flag: str, fix: str) -> Dict[str, Any]:
    """``name: value`` YAML text as a dict; errors name ``flag`` and say ``fix``."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise UsageError(f"{flag}: not valid YAML{at} ({problem}); {fix}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{flag}: the YAML is a {type(data).__name__}, not a mapping of name: value; {fix}")
    for name, value in data.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise UsageError(f"{flag}: {name!r} is not a parameter name (a Python identifier); {fix}")
        try:
            nbparams.literal(value, name)
        except TypeError:
            raise UsageError(
                f"{flag}: {name} is a {type(value).__name__}, which a notebook parameter cannot be (JSON types"
                " only); quote it to pass it as a string"
            ) from None
    return dict(data)


def parse_notebook_args(tokens: Sequence[str], prog: str = "jupyter-sched notebook") -> NotebookArgs:
    """What follows the run options, parsed and checked: the file exists and is a notebook, every parameter
    is a name and a JSON value, and with ``--strict`` each is defined by the notebook. Raises UsageError
    (or ParserExit for ``--help``) before anything is launched."""
    parser = build_parser(prog)
    ns, extra = parser.parse_known_args(list(tokens))
    prefix = error_prefix(prog)
    if extra:
        raise UsageError(
            f"{prefix}unknown argument {extra[0]} after the notebook. {RUN_OPTIONS_NOTE} A parameter goes"
            f" in -p NAME VALUE.\n{parser.format_usage().rstrip()}"
        )
    path = os.path.expanduser(ns.notebook)
    if ns.notebook.startswith("-"):
        raise UsageError(f"{prefix}{ns.notebook} is not a notebook; name the .ipynb file\n{parser.format_usage()}")
    if not os.path.isfile(path):
        raise UsageError(
            f"{prefix}no notebook at {os.path.abspath(path)}; give the .ipynb file's path (relative to"
            f" {os.getcwd()}) as the first word after the run options"
        )
    out = NotebookArgs(path=os.path.abspath(path), strict=ns.strict, help_notebook=ns.help_notebook,
                       kernel=ns.kernel, timeout=ns.timeout, with_folder=ns.with_folder, prog=prog)  # fmt: skip
    if ns.output_formats:
        out.output_formats = tuple(dict.fromkeys(["ipynb", *ns.output_formats]))
    for key in JOB_FLAGS:
        if getattr(ns, key) is not None:
            out.options[key] = getattr(ns, key)
    if ns.timeout is not None and ns.timeout <= 0:
        raise UsageError(f"{prefix}--timeout {ns.timeout:g}: give the seconds a cell may run, above 0")
    if ns.num_replicas is not None and ns.num_replicas < 1:
        raise UsageError(f"{prefix}--num_replicas {ns.num_replicas}: give 1 or more")

    def put(name: str, value: Any, flag: str, expr: bool = False) -> None:
        if not name.isidentifier():
            raise UsageError(f"{prefix}{flag} {name!r}: a parameter's name is a Python identifier (e.g. lr)")
        (out.params if expr else out.exprs).pop(name, None)  # a name keeps its place, as papermill's dict does
        (out.exprs if expr else out.params)[name] = value
        out.origin[name] = f"{flag} {name}" if flag.startswith(("-p", "-r", "--expr")) else flag

    for file in ns.f:
        try:
            with open(os.path.expanduser(file), encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            reason = e.strerror or e
            raise UsageError(f"{prefix}-f {file}: cannot read it ({reason}); give a YAML file's path") from None
        for name, value in load_yaml(text, f"{prefix}-f {file}", "fix the file").items():
            put(name, value, f"-f {file}")
    for text in ns.y:
        for name, value in load_yaml(text, f"{prefix}-y {text!r}", "write it as -y 'lr: 0.1'").items():
            put(name, value, "-y")
    # -p, -r and --expr in the order typed, so the last one given for a name wins
    typed: List[Tuple[int, str, str, str]] = []
    for flag, dest in (("-p", "p"), ("-r", "r"), ("--expr", "expr")):
        for name, value in getattr(ns, dest):
            typed.append((position(tokens, flag, dest, name, value), flag, name, value))
    for _, flag, name, value in sorted(typed, key=lambda t: t[0]):
        if flag == "--expr" and not value.strip():
            raise UsageError(f"{prefix}--expr {name}: give a Python expression, e.g. --expr {name} 'range(3)'")
        put(name, literal_or_text(value) if flag == "-p" else value, flag, expr=flag == "--expr")
    if out.strict:
        check_known(out)
    return out


def position(tokens: Sequence[str], flag: str, dest: str, name: str, value: str) -> int:
    """Where ``flag NAME VALUE`` was typed (its long spelling too), for the order of -p, -r and --expr."""
    spellings = {"-p": ("-p", "--parameters"), "-r": ("-r", "--parameters_raw"), "--expr": ("--expr",)}[flag]
    for i in range(len(tokens) - 2):
        if tokens[i] in spellings and tokens[i + 1] == name and tokens[i + 2] == value:
            return i
    return len(tokens)


def check_run_options(workspace: Optional[str], prog: str) -> None:
    """The run options a notebook job cannot honour, refused rather than ignored: ``--workspace`` overlays
    a directory onto an image, while a notebook job carries the notebook (and its folder, on request)."""
    if workspace:
        raise UsageError(
            f"{error_prefix(prog)}--workspace {workspace}: a notebook job carries the notebook itself; to send"
            " the files beside it, drop --workspace and add --with-folder after the notebook"
        )


def check_known(args: NotebookArgs) -> None:
    """``--strict``: every parameter must be defined by the notebook's ``parameters`` cell."""
    try:
        known = inspect_notebook(args.path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{error_prefix(args.prog)}{e}") from None
    unknown = [name for name in args.origin if name not in known]
    if not unknown:
        return
    defined = ", ".join(known) or "none: no cell is tagged parameters"
    given = "; ".join(args.origin[name] for name in unknown)
    raise UsageError(
        f"{error_prefix(args.prog)}--strict: {os.path.basename(args.path)}'s parameters cell does not define"
        f" {', '.join(unknown)} (given by {given}; it defines: {defined}). Fix the name, or drop --strict to pass"
        " it anyway (then it is a warning)"
    )


def notebook_help(path: str) -> str:
    """``--help-notebook``: the parameters the notebook's ``parameters`` cell defines, as a table."""
    found = inspect_notebook(path)
    name = os.path.basename(path)
    if not found:
        return (
            f"{name} has no cell tagged 'parameters': parameters passed with -p go into a first cell. Tag the"
            " cell of defaults 'parameters' (JupyterLab: the property inspector's Cell Tags)."
        )
    rows = [("NAME", "TYPE", "DEFAULT", "HELP")]
    rows += [(p["name"], p["inferred_type_name"], p["default"], p["help"]) for p in found.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{name}: the parameters its cell tagged 'parameters' defines"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3] for row in rows]
    first = next(iter(found.values()))
    lines.append(f"Set one with -p NAME VALUE (e.g. -p {first['name']} {first['default']}), several with -y or -f.")
    return "\n".join(line.rstrip() for line in lines)


def progress_text(progress: Optional[Mapping[str, Any]]) -> str:
    """A notebook job's progress record as one line: ``cell 5/23 · model.fit(...)``, its state once ended
    (``completed · 23 cells``, ``failed · cell 7 (In [6]) raised ...``); "" before the first record. Not
    escaped: each renderer escapes it for its medium."""
    if not progress:
        return ""
    state = str(progress.get("state") or "")
    cell, cells = progress.get("cell") or 0, progress.get("cells") or 0
    if state == "starting":
        return f"starting the kernel · {cells} code cells"
    if state == "completed":
        return f"completed · {cells}/{cells} cells"
    if state in ("failed", "cancelled"):
        error = str(progress.get("error") or "")
        return f"{state} at cell {cell}/{cells}" + (f" · {error}" if error else "")
    line = str(progress.get("line") or "")
    return f"cell {cell}/{cells}" + (f" · {line}" if line else "")
