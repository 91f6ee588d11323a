"""From a ``%sched_run`` line (or cell) to a dry run: the CLI's parsing plus the notebook's defaults.

Precedence of run options, lowest first: the project's config file (what ``jupyter-sched run`` uses), the
``SchedMagics.scheduler_cfg`` trait, ``--cfg`` on the line, then ``--detach``. The scheduler is ``-s`` if
given, else the ``SchedMagics.default_scheduler`` trait if set, else what the CLI would pick. The app is
an ``AppDef`` variable of the user's namespace when the component names one, else the component
materialised exactly as the CLI does (with the config file's component defaults).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from jupyter_sched.notebook.args import ArgsError, RunLine
from jupyter_sched.specs import AppDef, AppDryRunInfo, CfgVal, runopts


@dataclass
class Plan:
    """What to run: the CLI's RunArgs, the final cfg and the dry run; ``help`` when help was printed."""

    run_args: Any = None
    info: Optional[AppDryRunInfo] = None
    help: Optional[str] = None


def typed_cfg(opts: runopts, values: Mapping[str, Any], where: str) -> Dict[str, CfgVal]:
    """``values`` checked against the scheduler's run options; strings are cast like ``--cfg`` values."""
    out: Dict[str, CfgVal] = {}
    for key, value in values.items():
        opt = opts.get(key)
        if opt is None:
            raise ArgsError(f"{where}: unknown run option {key!r}; valid options: {', '.join(k for k, _ in opts)}")
        if isinstance(value, str) and opt.opt_type is not str:
            value = opt.cast(key, value)
        out[key] = value
    return out


def plan_run(
    line: RunLine,
    runner: Any,
    *,
    default_scheduler: str = "",
    scheduler_cfg: Optional[Mapping[str, Mapping[str, Any]]] = None,
    namespace: Optional[Mapping[str, Any]] = None,
    cell: Optional[str] = None,
) -> Plan:
    """Parses and dry-runs; raises ArgsError for anything the user can fix in the line."""
    from jupyter_sched.cli.cmd_run import parse_run_args
    from jupyter_sched.cli.errors import CliExit
    from jupyter_sched.components.errors import ComponentError, ComponentHelp
    from jupyter_sched.components.finder import materialize

    argv = _cell_argv(line, cell) if cell is not None else [*line.run_options, *line.rest]
    if default_scheduler and not line.gives_scheduler:
        argv = ["-s", default_scheduler, *argv]
    try:
        run_args = parse_run_args(argv, runner=runner)
    except CliExit as e:
        return Plan(help=e.message or "")
    except ValueError as e:
        raise ArgsError(str(e)) from None
    opts = runner.scheduler_run_opts(run_args.scheduler)
    cfg = dict(run_args.cfg)
    try:
        cfg.update(typed_cfg(opts, (scheduler_cfg or {}).get(run_args.scheduler, {}), "SchedMagics.scheduler_cfg"))
        for text in line.cfg_texts():
            cfg.update(opts.cfg_from_str(text))
    except ValueError as e:
        raise ArgsError(str(e)) from None
    if line.flag("detach"):
        if opts.get("outlive_owner") is None:
            raise ArgsError(
                f"--detach: {run_args.scheduler} apps do not depend on the kernel (it has no outlive_owner"
                " option); run without --detach"
            )
        cfg["outlive_owner"] = True
    try:
        app = _app(run_args, namespace or {}, cell is not None, materialize)
        if cell is not None:
            _check_cell_app(app, line, cell)
        info = runner.dryrun(app, run_args.scheduler, cfg, run_args.workspace)
    except ComponentHelp as e:
        return Plan(run_args=run_args, help=e.text)
    except (ComponentError, ValueError) as e:
        raise ArgsError(str(e)) from None
    return Plan(run_args=run_args, info=info)


def _cell_argv(line: RunLine, cell: str) -> List[str]:
    """The cell as the script of ``utils.sh`` (or code of ``utils.python`` with ``--python``); what
    follows the run options on the line are that component's flags (``--num_replicas 2 --name prep``)."""
    if not cell.strip():
        raise ArgsError("%%sched_run: the cell is empty (only blank lines); write the script in the cell")
    rest = line.rest[1:] if line.rest[:1] == ["--"] else list(line.rest)
    if line.flag("python"):
        return [*line.run_options, "utils.python", *rest, "-c", cell_script(cell)]
    return [*line.run_options, "utils.sh", *rest, "--", cell_script(cell)]


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


def _app(run_args: Any, namespace: Mapping[str, Any], is_cell: bool, materialize: Any) -> AppDef:
    from jupyter_sched.components.errors import ComponentError

    value = namespace.get(run_args.component) if run_args.component.isidentifier() and not is_cell else None
    if isinstance(value, AppDef):
        if run_args.component_args:
            raise ArgsError(
                f"{run_args.component} is an AppDef variable; it takes no arguments"
                f" (got {' '.join(run_args.component_args)}). Change the AppDef instead."
            )
        return value
    try:
        return materialize(
            run_args.component, run_args.component_args, run_args.component_defaults, run_args.defaults_origin
        )
    except ComponentError as e:
        if run_args.component in namespace and run_args.component.isidentifier() and not is_cell:
            raise ArgsError(
                f"{e} ({run_args.component} is a {type(value).__name__} variable, not an AppDef: assign an"
                " AppDef to it to run it)"
            ) from None
        raise
