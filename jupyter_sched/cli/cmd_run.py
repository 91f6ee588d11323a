"""``jupyter-sched run [options] COMPONENT [component flags] [args...]``: run (or dry-run) a component.

:func:`parse_run_args` is the parser as a function: it raises :class:`CliUsageError` (never exits), so the
notebook's ``%sched_run`` parses a line exactly like this command does. Everything after the component
name belongs to the component (``run utils.sh -s`` passes ``-s`` to ``sh``).

On the local schedulers replicas are children of the process that started them and end with it, so
``run`` waits for the app there and streams its logs (like TorchX), unless ``--cfg outlive_owner=true``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from jupyter_sched.cli import common
from jupyter_sched.cli.config import ConfigError, ProjectConfig, load_config
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.cli.parsers import RaisingArgumentParser
from jupyter_sched.cli.render import render, to_json
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import (
    AppDryRunInfo,
    AppState,
    AppStatus,
    CfgVal,
    InvalidAppError,
    InvalidRunConfigException,
    runopts,
)
from jupyter_sched.specs.masking import mask_lines

HELP = "run a component on a scheduler (or show what would run, with --dryrun)"

_VALUE_OPTIONS = {"-s", "--scheduler", "--cfg", "-cfg", "--scheduler_args", "--workspace"}
_SWITCHES = {"--dryrun", "--json", "--wait", "--log", "-h", "--help"}


@dataclass
class RunArgs:
    """The parsed ``run`` command line."""

    scheduler: str
    cfg: Dict[str, CfgVal] = field(default_factory=dict)
    """Run options: the config file's defaults for the scheduler, overridden by ``--cfg``; typed values."""
    dryrun: bool = False
    json: bool = False
    """With ``dryrun``: print the dry run as JSON (secrets masked)."""
    wait: bool = False
    log: bool = False
    workspace: Optional[str] = None
    component: str = ""
    component_args: List[str] = field(default_factory=list)
    component_defaults: Dict[str, Any] = field(default_factory=dict)
    """The config file's flag defaults for this component: pass them to ``materialize`` (as :func:`execute`
    does) or build the Runner with ``component_defaults=config.components``."""
    defaults_origin: Optional[str] = None
    """Where ``component_defaults`` came from (the config file and table); pass it to ``materialize`` so
    that an error in them names the place to fix."""


def build_run_parser(prog: str = "jupyter-sched run") -> argparse.ArgumentParser:
    """The parser of ``run``'s own options (it raises CliUsageError/CliExit instead of exiting).

    Use :func:`parse_run_args` to parse a whole line: it first splits off the component and its flags, which
    this parser must never see.
    """
    parser = RaisingArgumentParser(
        prog=prog,
        description=HELP
        + ". Options go before the component; everything after it is the component's.",
        epilog=(
            "Show a component's flags with `jupyter-sched run COMPONENT --help`; list components with"
            " `jupyter-sched builtins` and run options with `jupyter-sched runopts SCHEDULER`. On local"
            " schedulers run waits and streams the logs, since the replicas end with this command."
        ),
    )
    parser.add_argument(
        "-s",
        "--scheduler",
        help="scheduler to run on (default: the config's default_scheduler, else local_cwd)",
    )
    parser.add_argument(
        "--cfg", "-cfg", "--scheduler_args", dest="cfg", action="append", default=[], metavar="K=V,...",
        help="run options of the scheduler, e.g. log_dir=/tmp/logs,prepend_cwd=true (repeatable; later wins)",
    )  # fmt: skip
    parser.add_argument(
        "--dryrun",
        action="store_true",
        help="print the app and the scheduler's request; run nothing",
    )
    parser.add_argument(
        "--json", action="store_true", help="with --dryrun: print the app and the request as JSON"
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait until the app ends; exit 1 unless it succeeded"
    )
    parser.add_argument(
        "--log",
        action="store_true",
        help="stream the app's logs (to stderr) until it ends; implies --wait",
    )
    parser.add_argument(
        "--workspace", help="a directory to overlay onto the image (schedulers that support it)"
    )
    parser.add_argument(
        "component",
        nargs="?",
        help="a built-in (utils.echo), an installed one, or file.py:function",
    )
    parser.add_argument(
        "component_args", nargs=argparse.REMAINDER, help="the component's flags and arguments"
    )
    return parser


def split_run_argv(argv: List[str]) -> Tuple[List[str], Optional[str], List[str]]:
    """``(run options, component, component args)``: the component is the first argument that is neither an
    option of ``run`` nor its value (or the one after ``--``)."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            rest = argv[i + 1 :]
            return argv[:i], (rest[0] if rest else None), rest[1:]
        if not token.startswith("-") or token == "-":
            return argv[:i], token, argv[i + 1 :]
        name, eq, _ = token.partition("=")
        if name in _VALUE_OPTIONS:
            i += 1 if eq else 2
            continue
        if name in _SWITCHES or (token.startswith("-s") and not token.startswith("--")):
            i += 1
            continue
        raise CliUsageError(
            f"jupyter-sched run: error: unknown option {token}. Run options are -s, --cfg, --dryrun, --wait,"
            f" --log and --workspace; a component's flags go after its name (run COMPONENT {token} ...)"
        )
    return argv, None, []


def _scheduler_runopts(scheduler: str, runner: Any) -> runopts:
    if runner is not None:
        return runner.scheduler_run_opts(scheduler)
    from jupyter_sched.schedulers import get_scheduler_factories

    sched = get_scheduler_factories()[scheduler]("default")
    try:
        return sched.run_opts()
    finally:
        sched.close()


def config_cfg(config: ProjectConfig, scheduler: str, opts: runopts) -> Dict[str, CfgVal]:
    """The config file's run options for ``scheduler``, checked and typed against ``opts``. A relative
    ``log_dir`` is relative to the config file, so every command of the project finds the same logs."""
    out: Dict[str, CfgVal] = {}
    for key, value in config.scheduler_cfg(scheduler).items():
        where = config.where("schedulers", scheduler)
        opt = opts.get(key)
        if opt is None:
            valid = ", ".join(k for k, _ in opts) or "(none)"
            raise CliUsageError(
                f"{where}: unknown run option {key!r} of {scheduler}; valid options: {valid}"
            )
        try:
            if isinstance(value, str) and opt.opt_type is not str:
                value = opt.cast(key, value)
            elif isinstance(value, int) and not isinstance(value, bool) and opt.opt_type is float:
                value = float(value)
        except InvalidRunConfigException as e:
            raise CliUsageError(f"{where}: {e}") from None
        if not runopts.is_type(value, opt.opt_type):
            kind = getattr(opt.opt_type, "__name__", None) or str(opt.opt_type).replace("typing.", "")
            raise CliUsageError(f"{where}: {key} = {value!r} is not of the option's type {kind}")
        if key == "log_dir" and isinstance(value, str) and config.path:
            value = os.path.join(os.path.dirname(config.path), os.path.expanduser(value))
        out[key] = value
    return out


def check_config_tables(config: ProjectConfig) -> None:
    """Every ``schedulers.NAME`` table must name a scheduler and every ``components."NAME"`` table a built-in
    or installed component (``file.py:fn`` and ``module:fn`` names are looked up only when they run), so a
    misspelt table is an error rather than silently ignored."""
    known = common.scheduler_names()
    for name in config.schedulers:
        if name not in known:
            raise CliUsageError(
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
            raise CliUsageError(
                f"{config.where('components', name)}: no component named {name!r}."
                f"{_close(name, components)} Components: {', '.join(components)}"
                " (or path/to/file.py:function)"
            )


def _close(name: str, known: List[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" Did you mean {close[0]}?" if close else ""


def parse_run_args(
    argv: List[str], *, config: Optional[ProjectConfig] = None, runner: Any = None
) -> RunArgs:
    """Parses a ``run`` line (without the word ``run``), e.g. ``["-s", "local_cwd", "utils.sh", "echo", "hi"]``.

    ``config`` defaults to the project's config file (found from the cwd); ``runner``, if given, is used to
    read the scheduler's run options (else a scheduler is created just for that and closed). Raises
    :class:`CliUsageError` with the problem and the usage; ``--help`` prints the help and raises ``CliExit``.
    """
    own, component, component_args = split_run_argv(list(argv))
    parser = build_run_parser()
    ns = parser.parse_args(own)
    if config is None:
        try:
            config = load_config()
        except ConfigError as e:
            raise CliUsageError(str(e)) from None
    scheduler = common.pick_scheduler(ns.scheduler, config)
    check_config_tables(config)
    if not component:
        raise CliUsageError(
            "jupyter-sched run: error: which component? e.g. `jupyter-sched run utils.echo --msg hi`;"
            f" list them with `jupyter-sched builtins`\n{parser.format_usage().rstrip()}"
        )
    opts = _scheduler_runopts(scheduler, runner)
    cfg = config_cfg(config, scheduler, opts)
    for text in ns.cfg:
        try:
            cfg.update(opts.cfg_from_str(text))
        except (InvalidRunConfigException, ValueError) as e:
            raise CliUsageError(
                f"--cfg {text!r}: {e}. See `jupyter-sched runopts {scheduler}`"
            ) from None
    if ns.json and not ns.dryrun:
        raise CliUsageError("jupyter-sched run: error: --json goes with --dryrun (run prints only the handle)")
    return RunArgs(
        scheduler=scheduler,
        cfg=cfg,
        dryrun=ns.dryrun,
        json=ns.json,
        wait=ns.wait,
        log=ns.log,
        workspace=ns.workspace,
        component=component,
        component_args=list(component_args),
        component_defaults=dict(config.components.get(component, {})),
        defaults_origin=config.where("components", component)
        if component in config.components
        else None,
    )


# -- running ----------------------------------------------------------------------------------------------------
def format_dryrun(info: AppDryRunInfo) -> str:
    request = mask_lines(repr(info))  # secrets masked, as render() masks the app
    return f"=== APPLICATION ===\n{render(info.app)}\n\n=== SCHEDULER REQUEST ===\n{request}\n"


def dryrun_json(info: AppDryRunInfo) -> str:
    """``run --dryrun --json``: scheduler, resolved cfg, the app and the request (its ``to_json()`` where it
    has one, else its text), secrets masked like every other output."""
    request = info.request
    to_json_fn = getattr(request, "to_json", None)
    body = to_json_fn() if callable(to_json_fn) else mask_lines(repr(info))
    data = {"scheduler": info.scheduler, "cfg": dict(info.cfg), "app": info.app, "request": body}
    return to_json(data) + "\n"


def ends_with_owner(info: AppDryRunInfo) -> bool:
    """True when the app's replicas end with this process (local schedulers without outlive_owner)."""
    from jupyter_sched.schedulers.local_scheduler import PopenRequest

    return isinstance(info.request, PopenRequest) and not info.request.outlive_owner


def report_end(handle: str, status: Optional[AppStatus]) -> int:
    if status is None:
        raise CliError(f"{handle} disappeared while waiting for it (its records were removed)")
    if status.state == AppState.SUCCEEDED:
        common.err(f"{handle}: {status.state}")
        return 0
    common.err(f"{handle}: {status.state}\n{status.format()}")
    return 1


def dryrun(runner: Any, app: Any, args: RunArgs) -> AppDryRunInfo:
    """``runner.dryrun`` with ``--workspace`` checked first: a missing directory, or a scheduler without
    workspace support, is a usage error (exit 2) naming the flag."""
    workspace = args.workspace
    if workspace:
        full = os.path.abspath(os.path.expanduser(workspace))
        if not os.path.isdir(full):
            raise CliUsageError(
                f"--workspace {workspace!r}: not a directory (looked at {full}); give the directory to"
                " overlay onto the image, e.g. --workspace ."
            )
    try:
        return runner.dryrun(app, args.scheduler, args.cfg, workspace)
    except (InvalidAppError, InvalidRunConfigException):
        raise
    except ValueError as e:
        if workspace and "does not support workspaces" in str(e):
            reason = str(e).partition(": ")[2] or str(e)
            raise CliUsageError(f"--workspace {workspace!r}: {reason}") from None
        raise


def execute(args: RunArgs, runner: Any) -> int:
    """Carries out a parsed ``run``; returns the exit code (1 when a waited-for app did not succeed)."""
    from jupyter_sched.cli.cmd_log import stream_app_logs
    from jupyter_sched.components import materialize

    app = materialize(
        args.component, args.component_args, args.component_defaults, args.defaults_origin
    )
    info = dryrun(runner, app, args)
    if args.dryrun:
        sys.stdout.write(dryrun_json(info) if args.json else format_dryrun(info))
        return 0
    owner_bound = ends_with_owner(info)
    handle = runner.schedule(info)
    print(handle, flush=True)
    wait = args.wait or args.log or owner_bound
    log = args.log or (owner_bound and not args.wait)
    if owner_bound and not (args.wait or args.log):
        common.err(
            f"note: {args.scheduler} replicas run as children of this command and end when it exits, so it"
            " waits for the app and streams its logs (Ctrl-C cancels the app). To start it and return at"
            " once, add --cfg outlive_owner=true."
        )
    if not wait:
        status = runner.status(handle)
        state = status.state if status else "UNKNOWN"
        common.err(f"{handle}: {state}. Follow it with `jupyter-sched log -f {handle}`")
        return 0
    try:
        if log:
            errors = stream_app_logs(runner, handle, sys.stderr, follow=True)
            if errors:
                common.err("some logs could not be read; waiting for the app to end")
        return report_end(handle, runner.wait(handle, wait_interval=2))
    except KeyboardInterrupt:
        if owner_bound:
            runner.cancel(handle)
            common.err(f"\ninterrupted: cancelled {handle}")
        else:
            common.err(
                f"\ninterrupted: stopped waiting; {handle} goes on (cancel it with `jupyter-sched cancel`)"
            )
        return 130


def main(argv: List[str]) -> int:
    """``jupyter-sched run ...`` (``argv`` without ``run``)."""
    try:
        config = load_config()
    except ConfigError as e:
        raise CliUsageError(str(e)) from None
    with get_runner() as runner:
        return execute(parse_run_args(argv, config=config, runner=runner), runner)
