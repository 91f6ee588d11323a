"""A run line, parsed and validated once: the scheduler, its typed cfg, the component and its arguments.

Precedence of run options, lowest first: the project's config file, any layers a front end adds (the
notebook's ``SchedMagics.scheduler_cfg`` trait), then ``--cfg`` on the line. Every layer is checked against
the scheduler's run options by one coercer (:func:`typed_cfg`), which are fetched once per line.
"""

from __future__ import annotations

import difflib
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.frontend import targets
from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.launch.config import ConfigError, ProjectConfig, load_config
from jupyter_sched.frontend.launch.run_options import CLI_PROG, RunLine, build_run_parser, error_prefix, split_run_line
from jupyter_sched.specs import AppDef, CfgVal, InvalidAppError, InvalidRunConfigException, runopts, validate_app
from jupyter_sched.specs.output.masking import mask_tree

CfgLayer = Tuple[str, Mapping[str, Mapping[str, Any]]]
"""``(where it comes from, {scheduler: {option: value}})``: a source of run option defaults."""


@dataclass
class RunArgs:
    """The parsed ``run`` command line."""

    scheduler: str
    cfg: Dict[str, CfgVal] = field(default_factory=dict)
    """Run options: the config file's defaults for the scheduler, overridden by ``--cfg``; typed values."""
    dryrun: bool = False
    json: bool = False
    """With ``dryrun``: print the dry run as JSON (the CLI; the notebook's display carries JSON anyway)."""
    wait: bool = False
    log: bool = False
    fail_fast: bool = False
    """Cancel the app as soon as one replica has failed (while waiting; see ``Runner.wait``)."""
    workspace: Optional[str] = None
    component: str = ""
    component_args: List[str] = field(default_factory=list)
    component_defaults: Dict[str, Any] = field(default_factory=dict)
    """The config file's flag defaults for this component: pass them to ``materialize``."""
    defaults_origin: Optional[str] = None
    """Where ``component_defaults`` came from (the config file and table), for errors in them."""
    run_opts: Optional[runopts] = field(default=None, compare=False, repr=False)
    """The scheduler's run options, as read while parsing (so a front end need not ask again)."""
    head: List[str] = field(default_factory=list, compare=False, repr=False)
    """The words before the component as typed, and ``prog``, who parsed them: to show a corrected line."""
    prog: str = field(default=CLI_PROG, compare=False, repr=False)

    def command_line(self, component_args: Sequence[str]) -> List[str]:
        """This line's words with other arguments for the component: ``prog``, the options, the component."""
        return [*self.prog.split(), *self.head, self.component, *component_args]


def scheduler_runopts(scheduler: str, runner: Any = None) -> runopts:
    """The run options of ``scheduler``: from ``runner`` if given, else from a scheduler made and closed."""
    if runner is not None:
        return runner.scheduler_run_opts(scheduler)
    from jupyter_sched.schedulers import get_scheduler_factories

    sched = get_scheduler_factories()[scheduler]("default")
    try:
        return sched.run_opts()
    finally:
        sched.close()


def typed_cfg(
    opts: runopts, values: Mapping[str, Any], where: str, scheduler: str, base_dir: Optional[str] = None
) -> Dict[str, CfgVal]:
    """``values`` checked against ``opts``: text is cast like ``--cfg`` values, an int may stand for a float,
    anything else must have the option's type. A relative ``log_dir`` is taken relative to ``base_dir`` (the
    config file's directory), so every command of a project finds the same logs. Errors name ``where``."""
    out: Dict[str, CfgVal] = {}
    for key, value in values.items():
        opt = opts.get(key)
        if opt is None:
            valid = ", ".join(k for k, _ in opts) or "(none)"
            raise UsageError(f"{where}: unknown run option {key!r} of {scheduler}; valid options: {valid}")
        try:
            if isinstance(value, str) and opt.opt_type is not str:
                value = opt.cast(key, value)
            elif isinstance(value, int) and not isinstance(value, bool) and opt.opt_type is float:
                value = float(value)
            if not runopts.is_type(value, opt.opt_type):
                kind = getattr(opt.opt_type, "__name__", None) or str(opt.opt_type).replace("typing.", "")
                shown = mask_tree({key: value})[key]  # a mistyped env may still hold secrets
                raise UsageError(f"{where}: {key} = {shown!r} is not of the option's type {kind}")
            opts.check_value(key, value)
        except InvalidRunConfigException as e:
            raise UsageError(f"{where}: {e}") from None
        if key == "log_dir" and isinstance(value, str) and base_dir:
            value = os.path.join(base_dir, os.path.expanduser(value))
        out[key] = value
    return out


def materialize_line(run_args: RunArgs) -> AppDef:
    """The component's AppDef for the line (``components.materialize`` with the config file's defaults),
    checked like any input (:func:`checked_app`). A flag of the component among its ``*args`` is refused
    with the whole corrected line, as this front end spells it (``%sched_run -s slurm utils.sh ...``)."""
    from jupyter_sched.components import MisplacedFlagError, materialize

    try:
        app = materialize(
            run_args.component, run_args.component_args, run_args.component_defaults, run_args.defaults_origin
        )
    except MisplacedFlagError as e:
        raise UsageError(f"{error_prefix(run_args.prog)}{e.explain(run_args.command_line([]))}") from None
    return checked_app(app)


def checked_app(app: AppDef) -> AppDef:
    """``app`` if it is well formed; else a UsageError naming the field (``roles[0].num_replicas: ...``): an
    AppDef made from the line is input like any flag, so ``--num_replicas 0`` and ``-1`` are refused alike,
    whichever component (built-in or ``file.py:fn``) turned the flag into the AppDef."""
    try:
        validate_app(app)
    except InvalidAppError as e:
        raise UsageError(str(e)) from None
    return app


def check_config_tables(config: ProjectConfig) -> None:
    """Every ``schedulers.NAME`` table must name a scheduler and every ``components."NAME"`` table a built-in
    or installed component (``file.py:fn`` and ``module:fn`` names are looked up only when they run), so a
    misspelt table is an error rather than silently ignored."""
    known = targets.scheduler_names()
    for name in config.schedulers:
        if name not in known:
            raise UsageError(
                f"{config.where('schedulers', name)}: no scheduler named {name!r}.{_close(name, known)}"
                f" Schedulers: {', '.join(known)}"
            )
    names = [n for n in config.components if ":" not in n]
    if not names:
        return
    from jupyter_sched.components import list_components

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a broken plugin is reported when it is used
        components = [c.name for c in list_components()]
    for name in names:
        if name not in components:
            raise UsageError(
                f"{config.where('components', name)}: no component named {name!r}."
                f"{_close(name, components)} Components: {', '.join(components)}"
                " (or path/to/file.py:function)"
            )


def _close(name: str, known: List[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" Did you mean {close[0]}?" if close else ""


def parse_run_args(argv: Sequence[str], *, config: Optional[ProjectConfig] = None, runner: Any = None) -> RunArgs:
    """Parses a ``run`` line (without the word ``run``), e.g. ``["-s", "local_cwd", "utils.sh", "echo", "hi"]``.

    ``config`` defaults to the project's config file (found from the cwd); ``runner``, if given, is used to
    read the scheduler's run options (else a scheduler is created just for that and closed). Raises
    :class:`UsageError` with the problem and the usage; ``--help`` raises ``ParserExit`` with the help.
    """
    return parse_run_line(split_run_line(argv), config=config, runner=runner)


def parse_run_line(
    line: RunLine,
    *,
    config: Optional[ProjectConfig] = None,
    runner: Any = None,
    default_scheduler: Optional[str] = None,
    layers: Sequence[CfgLayer] = (),
) -> RunArgs:
    """Parses a split line once: see :func:`parse_run_args`. ``default_scheduler`` stands in for a missing
    ``-s`` (before the config's default); ``layers`` sit between the config file and ``--cfg``."""
    component, component_args = line.component()
    parser = build_run_parser(line.prog, line.extra)
    ns = parser.parse_args(line.options)
    prefix = error_prefix(line.prog)
    if ns.json and not ns.dryrun:
        raise UsageError(f"{prefix}--json goes with --dryrun (run prints only the handle)")
    if config is None:
        try:
            config = load_config()
        except ConfigError as e:
            raise UsageError(str(e)) from None
    scheduler = targets.pick_scheduler(ns.scheduler or default_scheduler, config)
    check_config_tables(config)
    if not component:
        raise UsageError(
            f"{prefix}which component? e.g. `{line.prog} utils.echo --msg hi`;"
            f" list them with `jupyter-sched builtins`\n{parser.format_usage().rstrip()}"
        )
    opts = scheduler_runopts(scheduler, runner)
    base_dir = os.path.dirname(config.path) if config.path else None
    where = config.where("schedulers", scheduler)
    cfg = typed_cfg(opts, config.scheduler_cfg(scheduler), where, scheduler, base_dir)
    for name, table in layers:
        cfg.update(typed_cfg(opts, table.get(scheduler, {}), f"{name}[{scheduler!r}]", scheduler))
    for text in ns.cfg:
        try:
            cfg.update(opts.cfg_from_str(text))
        except (InvalidRunConfigException, ValueError) as e:
            raise UsageError(f"--cfg {text!r}: {e}. See `jupyter-sched runopts {scheduler}`") from None
    return RunArgs(
        scheduler=scheduler,
        cfg=cfg,
        dryrun=ns.dryrun,
        json=ns.json,
        wait=ns.wait,
        log=ns.log,
        fail_fast=ns.fail_fast,
        workspace=ns.workspace,
        component=component,
        component_args=list(component_args),
        component_defaults=dict(config.components.get(component, {})),
        defaults_origin=config.where("components", component) if component in config.components else None,
        run_opts=opts,
        head=list(line.head),
        prog=line.prog,
    )
