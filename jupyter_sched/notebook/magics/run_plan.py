"""From a ``%sched_run`` line (or cell) to a :class:`Plan`: parsed and validated once, exactly as ``jupyter-sched
run`` parses a line (:func:`jupyter_sched.frontend.launch.run_args.parse_run_line`), plus the notebook's defaults;
dry-run, and ready to launch. A notebook function's line becomes the same Plan (:mod:`.fn_magic`), so the magic
launches, shows and waits for every kind of run one way.

Precedence of run options, lowest first: the project's config file (what ``jupyter-sched run`` uses), the
``SchedMagics.scheduler_cfg`` trait, ``--cfg`` on the line, then ``--detach``. The scheduler is ``-s`` if
given, else the ``SchedMagics.default_scheduler`` trait if set, else what the CLI would pick. The app is
an ``AppDef`` variable of the user's namespace when the component names one, else the component
materialised exactly as the CLI does (with the config file's component defaults).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from jupyter_sched.components.errors import ComponentError, ComponentHelp
from jupyter_sched.frontend.errors import ParserExit
from jupyter_sched.frontend.job import Job
from jupyter_sched.frontend.launch.run_args import RunArgs, checked_app, materialize_line, parse_run_line
from jupyter_sched.frontend.launch.run_options import RunLine
from jupyter_sched.notebook.magics.args import ArgsError
from jupyter_sched.specs import AppDef, AppDryRunInfo

Launch = Callable[[Any], Job]
"""How a plan starts its app: given the magics' :class:`~jupyter_sched.notebook.kernel.session.Session`, it
schedules the app, records it there and returns its Job."""


@dataclass
class Plan:
    """What one ``%sched_run`` runs, the same shape for a component, an AppDef, a cell and a notebook function
    (:func:`plan_run`, :func:`jupyter_sched.notebook.magics.fn_magic.plan_function`), so that the magic has
    one way to launch, show and wait for all of them. ``help`` when help was printed instead of a plan."""

    line: RunLine
    """The line as split once: the notebook's switches (``--quiet``, ``--no-wait``) are read from it."""
    run_args: Optional[RunArgs] = None
    """The run options, cfg final."""
    info: Optional[AppDryRunInfo] = None
    dry_run: Any = None
    """What ``--dryrun`` returns: the AppDryRunInfo, or a function's facts above it."""
    launch: Optional[Launch] = None
    help: Optional[str] = None

    @property
    def dryrun(self) -> bool:
        return self.run_args is not None and self.run_args.dryrun

    def waits(self, default: bool) -> bool:
        """Whether the cell blocks until the app ends: ``--wait``/``--log``, else ``default`` (the
        ``SchedMagics.wait`` trait) unless ``--no-wait``."""
        run_args = self.run_args
        if run_args is not None and (run_args.wait or run_args.log):
            return True
        return default and not self.line.flag("no_wait")


def plan_run(
    line: RunLine,
    runner: Any,
    *,
    default_scheduler: str = "",
    scheduler_cfg: Optional[Mapping[str, Mapping[str, Any]]] = None,
    namespace: Optional[Mapping[str, Any]] = None,
    cell: Optional[str] = None,
) -> Plan:
    """Parses and dry-runs a component, an AppDef variable or a cell; raises ArgsError for anything the user
    can fix in the line."""
    parsed = _cell_line(line, cell) if cell is not None else line
    try:
        run_args = parse_run_line(
            parsed, runner=runner, default_scheduler=default_scheduler or None,
            layers=[("SchedMagics.scheduler_cfg", scheduler_cfg or {})],
        )  # fmt: skip
    except ParserExit as e:
        return Plan(line, help=e.message or "")
    apply_detach(line, run_args)
    try:
        app = checked_app(_app(run_args, namespace or {}, cell is not None))
        if cell is not None:
            _check_cell_app(app, line, cell)
        info = runner.dryrun(app, run_args.scheduler, run_args.cfg, run_args.workspace)
    except ComponentHelp as e:
        return Plan(line, run_args=run_args, help=e.text)
    except (ComponentError, ValueError) as e:
        raise ArgsError(str(e)) from None
    return Plan(line, run_args=run_args, info=info, dry_run=info, launch=lambda session: _launch_app(session, info))


def apply_detach(line: RunLine, run_args: RunArgs) -> None:
    """``--detach``: the local run option ``outlive_owner=true``, over every cfg layer; refused, naming the
    scheduler, where apps never depend on the kernel (no such option)."""
    if not line.flag("detach"):
        return
    if run_args.run_opts is None or run_args.run_opts.get("outlive_owner") is None:
        raise ArgsError(
            f"--detach: {run_args.scheduler} apps do not depend on the kernel (it has no outlive_owner"
            " option); run without --detach"
        )
    run_args.cfg["outlive_owner"] = True


def _launch_app(session: Any, info: AppDryRunInfo) -> Job:
    """Schedules a dry-run app and returns its Job, recorded in ``session``; a local app without
    ``--detach`` is bound to the kernel (its panes and an interrupt say so)."""
    handle = session.runner.schedule(info)
    job: Job = session.launched(handle, info.app.name if info.app is not None else "")
    job.bound_to_kernel = getattr(info.request, "outlive_owner", None) is False
    return job


def _cell_line(line: RunLine, cell: str) -> RunLine:
    """The cell as the script of ``utils.sh`` (or code of ``utils.python`` with ``--python``); what
    follows the run options on the line are that component's flags (``--num_replicas 2 --name prep``)."""
    if not cell.strip():
        raise ArgsError("%%sched_run: the cell is empty (only blank lines); write the script in the cell")
    rest = line.rest[1:] if line.rest[:1] == ["--"] else list(line.rest)
    if line.flag("python"):
        argv = ["utils.python", *rest, "-c", cell_script(cell)]
    else:
        argv = ["utils.sh", *rest, "--", cell_script(cell)]
    return RunLine(line.options, argv, line.flags, line.head, line.prog, line.extra)


def cell_script(cell: str) -> str:
    """The cell as a replica's argument: macros such as ``${replica_id}`` are filled in per replica, but
    ``$$`` (the shell's process id) stays as written. Arguments go through ``string.Template``, where
    ``$$`` means a literal ``$``; a pasted script must not change meaning, so each ``$$`` is doubled."""
    return cell.replace("$$", "$$$$")


def _check_cell_app(app: AppDef, line: RunLine, cell: str) -> None:
    """The cell must be the whole program: the component's ``*args`` (a shell script's words, or after
    ``-m``/``-c``/``--script`` the program's argv) would silently change it, so anything on the line
    that landed there is an error naming it."""
    args = list(app.roles[0].args) if len(app.roles) == 1 else []
    cell = cell_script(cell)
    if args == ["-c", cell]:
        return
    rest = line.rest[1:] if line.rest[:1] == ["--"] else list(line.rest)
    if line.flag("python"):
        raise ArgsError(
            f"%%sched_run --python: the cell is the code (python -c CELL), so the line cannot also give"
            f" {shlex.join(rest)!r}; keep only flags such as --num_replicas 2 --name prep, or run a module"
            " or script with the line magic: %sched_run utils.python -m MODULE"
        )
    script = args[1] if len(args) == 2 else ""
    quoted = " " + shlex.quote(cell)
    extra = shlex.split(script[: -len(quoted)]) if script.endswith(quoted) else rest
    if extra[-1:] == ["--"]:  # the separator _cell_argv put before the cell
        extra = extra[:-1]
    raise ArgsError(
        f"%%sched_run: {shlex.join(extra)!r} on the line is not a flag of utils.sh, and the cell is the"
        " whole script; for Python use %%sched_run --python, and to run a component use the line magic"
        f" %sched_run {shlex.join(extra)} ..."
    )


def _app(run_args: RunArgs, namespace: Mapping[str, Any], is_cell: bool) -> AppDef:
    value = namespace.get(run_args.component) if run_args.component.isidentifier() and not is_cell else None
    if isinstance(value, AppDef):
        if run_args.component_args:
            raise ArgsError(
                f"{run_args.component} is an AppDef variable; it takes no arguments"
                f" (got {' '.join(run_args.component_args)}). Change the AppDef instead."
            )
        return value
    try:
        return materialize_line(run_args)
    except ComponentError as e:
        if run_args.component in namespace and run_args.component.isidentifier() and not is_cell:
            raise ArgsError(
                f"{e} ({run_args.component} is a {type(value).__name__} variable, not an AppDef: assign an"
                " AppDef to it to run it)"
            ) from None
        raise
