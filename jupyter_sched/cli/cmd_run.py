"""``jupyter-sched run [options] COMPONENT [component flags] [args...]``: run (or dry-run) a component; and
``jupyter-sched notebook [options] train.ipynb -p lr 0.01 ...``: run a notebook as a job, the same way.

:func:`parse_run_args` is the parser as a function: it raises :class:`CliUsageError` (never exits), so the
notebook's ``%sched_run`` parses a line exactly like this command does. Everything after the component
name belongs to the component (``run utils.sh -s`` passes ``-s`` to ``sh``).

On the local schedulers replicas are children of the process that started them and end with it, so
``run`` waits for the app there and streams its logs (like TorchX), unless ``--cfg outlive_owner=true``.
Ctrl-C while it waits cancels such an app (exit 130); SIGTERM stops it (it ends FAILED, "owner process N
exited") and ``run`` says so in one line and exits 143, 128 + the signal's number, as a shell reports a
process the signal ended.

``notebook`` (:func:`notebook_main`) takes ``run``'s line: the leading run options are split and parsed by
the same code, and the app is launched, waited for and its logs streamed by the same
:func:`launch_and_follow`. What follows the run options -- the notebook, papermill's ``-p/-r/-f/-y``,
``--strict``, ``--help-notebook`` and the rest -- is read by
:func:`jupyter_sched.functions.notebooks.args.parse_notebook_args`, the parser ``%sched_notebook`` uses too.
The job is a function job (:mod:`jupyter_sched.functions`, imported only by this verb): the notebook is
snapshotted with its parameters injected before anything is launched, and the output notebook's path is
printed on stderr when it is launched and again when it has ended.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings
from typing import Any, Callable, List, Optional

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.cli.render import render, to_json
from jupyter_sched.frontend.launch.config import ConfigError, load_config
from jupyter_sched.frontend.launch.run_args import RunArgs, materialize_line, parse_run_args, parse_run_line
from jupyter_sched.frontend.launch.run_options import HELP, RunLine, split_run_line
from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.common.workspace_source import WorkspaceError, is_file_url, is_url, local_path
from jupyter_sched.schedulers.local.processes.signals import SignalException
from jupyter_sched.specs import AppDryRunInfo, AppState, AppStatus, InvalidAppError, InvalidRunConfigException
from jupyter_sched.specs.output.masking import mask_lines, mask_shell_text, masked_copy

__all__ = ["HELP", "RunArgs", "execute", "main", "parse_run_args"]

STOPPED_WAIT_S = 30.0
"""How long ``run`` waits, after a signal stopped its app, for the replicas to be seen ended (the handler gives
them SIGTERM, then SIGKILL after 2 s)."""


# -- running ----------------------------------------------------------------------------------------------------
def format_dryrun(info: AppDryRunInfo) -> str:
    """The app, the scheduler's own rendering of its request, how to start each replica by hand where the
    backend says (its ``docker run`` lines, with every variable the container gets), and the request's
    warnings if any; secrets masked (render() masks the app, :func:`mask_lines` the request and warnings,
    :func:`mask_shell_text` the shell lines, whose quoting and ``\\`` continuations it keeps)."""
    view = info.view()
    warned = "".join(f"warning: {w}\n" for w in (view.warnings if view is not None else []))
    request = mask_lines(repr(info))
    text = f"=== APPLICATION ===\n{render(info.app)}\n\n=== SCHEDULER REQUEST ===\n{request}\n"
    by_hand = [(f"{p.role}/{p.replica_id}", p.launch) for p in (view.replicas if view else []) if p.launch]
    if by_hand:
        text += f"\n=== {by_hand[0][1][0].upper()}: EACH REPLICA BY HAND ===\n"
        text += "".join(f"# {name}\n{mask_shell_text(line)}\n" for name, (_, line) in by_hand)
    return text + (f"\n=== WARNINGS ===\n{mask_lines(warned)}" if warned else "")


def dryrun_json(info: AppDryRunInfo) -> str:
    """``run --dryrun --json``: scheduler, resolved cfg, the app and the request (its neutral view where the
    backend gives one, else its text), secrets masked like every other output."""
    view = info.view()
    request = view if view is not None else mask_lines(repr(info))
    return to_json({"scheduler": info.scheduler, "cfg": dict(info.cfg), "app": info.app, "request": request}) + "\n"


def ends_with_owner(info: AppDryRunInfo) -> bool:
    """True when the app's replicas end with this process (the request's view says so: local schedulers
    without outlive_owner)."""
    view = info.view()
    return view is not None and view.bound_to_owner


def report_end(handle: str, status: Optional[AppStatus]) -> int:
    """The final state on stderr, with the status of an app that did not succeed (masked before it formats
    itself: it quotes the error file and wraps its message)."""
    if status is None:
        raise CliError(f"{handle} disappeared while waiting for it (its records were removed)")
    if status.state == AppState.SUCCEEDED:
        common.err(f"{handle}: {status.state}")
        return 0
    common.err(f"{handle}: {status.state}\n{masked_copy(status).format()}")
    return 1


def dryrun(runner: Any, app: Any, args: RunArgs) -> AppDryRunInfo:
    """``runner.dryrun`` with ``--workspace`` checked first: a missing directory, a URL that cannot be read
    (an fsspec URL is checked by the scheduler) or a scheduler without workspace support, is a usage error
    (exit 2) naming the flag."""
    workspace = args.workspace
    if workspace and (is_file_url(workspace) or not is_url(workspace)):
        full = local_path(workspace)
        if not os.path.isdir(full):
            raise CliUsageError(
                f"--workspace {workspace!r}: not a directory (looked at {full}); give the directory to"
                " overlay onto the image, e.g. --workspace ."
            )
    try:
        return runner.dryrun(app, args.scheduler, args.cfg, workspace)
    except (InvalidAppError, InvalidRunConfigException):
        raise
    except WorkspaceError as e:
        raise CliUsageError(f"--workspace {workspace!r}: {e}") from None
    except ValueError as e:
        if workspace and "does not support workspaces" in str(e):
            reason = str(e).partition(": ")[2] or str(e)
            raise CliUsageError(f"--workspace {workspace!r}: {reason}") from None
        raise


def execute(args: RunArgs, runner: Any) -> int:
    """Carries out a parsed ``run``; returns the exit code (1 when a waited-for app did not succeed)."""
    app = materialize_line(args)
    info = dryrun(runner, app, args)
    if args.dryrun:
        sys.stdout.write(dryrun_json(info) if args.json else common.shown(format_dryrun(info), common.LINES))
        return 0
    return launch_and_follow(args, runner, info, lambda: runner.schedule(info))


def launch_and_follow(args: RunArgs, runner: Any, info: AppDryRunInfo, schedule: Callable[[], str]) -> int:
    """Launches a dry-run app with ``schedule`` (which returns its handle), prints the handle, and waits and
    streams its logs as ``run`` does (``--wait``, ``--log``, ``--fail-fast``; always on a local scheduler
    whose replicas end with this process). Shared by ``run`` and ``notebook``, whose launch also writes the
    job directory."""
    from jupyter_sched.cli.cmd_log import stream_app_logs

    view = info.view()
    for warning in view.warnings if view is not None else []:
        common.err(f"warning: {warning}")
    owner_bound = ends_with_owner(info)
    wait = args.wait or args.log or owner_bound
    if args.fail_fast and not wait:
        raise CliUsageError(
            "--fail-fast: it stops the other replicas while run waits for the app; add --wait (or --log)"
        )
    handle = schedule()
    print(handle, flush=True)
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
    if args.fail_fast and log:  # the logs stream until every replica ends: watch for a failure meanwhile
        import threading

        threading.Thread(target=runner.wait, args=(handle, 2), kwargs={"fail_fast": True}, daemon=True).start()
    try:
        if log:
            errors = stream_app_logs(runner, handle, sys.stderr, follow=True)
            if errors:
                common.err("some logs could not be read; waiting for the app to end")
        return report_end(handle, runner.wait(handle, wait_interval=2, fail_fast=args.fail_fast))
    except KeyboardInterrupt:
        if owner_bound:
            runner.cancel(handle)
            common.err(f"\ninterrupted: cancelled {handle}")
        else:
            common.err(
                f"\ninterrupted: stopped waiting; {handle} goes on (cancel it with `jupyter-sched cancel`)"
            )
        return 130
    except SignalException as e:
        return report_signal(runner, handle, owner_bound, e.sigval)


def report_signal(runner: Any, handle: str, owner_bound: bool, sig: int) -> int:
    """After SIGTERM (the local scheduler's handler has already sent SIGTERM to the app's replicas, SIGKILL
    to follow): waits for the replicas to be seen ended, says in one line what was stopped and why, and
    returns 128 + the signal's number. An app meant to outlive this process is left running, and said so."""
    name = signal.Signals(sig).name
    if not owner_bound:
        common.err(f"jupyter-sched: {name}: stopped waiting; {handle} goes on (cancel it with `jupyter-sched cancel`)")
        return 128 + sig
    try:
        status = runner.wait(handle, wait_interval=0.5, timeout=STOPPED_WAIT_S)
    except SignalException:  # the same signal again: it was already acted on
        status = runner.status(handle)
    if status is not None and status.is_terminal():
        common.err(f"jupyter-sched: stopped {handle} ({name}): its replicas were ended; it is {status.state}")
    else:
        common.err(f"jupyter-sched: stopping {handle} ({name}): its replicas were sent SIGTERM, SIGKILL follows")
    return 128 + sig


def main(argv: List[str]) -> int:
    """``jupyter-sched run ...`` (``argv`` without ``run``)."""
    try:
        config = load_config()
    except ConfigError as e:
        raise CliUsageError(str(e)) from None
    with get_runner() as runner:
        return execute(parse_run_args(argv, config=config, runner=runner), runner)


# -- notebook ---------------------------------------------------------------------------------------------------
NOTEBOOK_PROG = "jupyter-sched notebook"


def request_facts(request: Any, params: Any) -> str:
    """What ``--dryrun`` prints above the app: the notebook, its parameters and where the job runs."""
    facts = request.summary()
    notebook = facts.pop("defined at", "")
    facts.pop("function", None)
    shown = ", ".join(f"{k}={v!r}" for k, v in dict(params).items()) or "(none: the notebook's defaults)"
    rows = {"notebook": notebook, "parameters": shown, **facts}
    return "=== NOTEBOOK JOB ===\n" + "".join(f"{k}: {v}\n" for k, v in rows.items()) + "\n"


def notebook_main(argv: List[str]) -> int:
    """``jupyter-sched notebook ...`` (``argv`` without ``notebook``): see the module's docstring."""
    from jupyter_sched.functions.launch import launch, prepare
    from jupyter_sched.functions.notebooks.args import (
        asks_for_help,
        check_run_options,
        help_text,
        notebook_help,
        parse_notebook_args,
    )

    line = split_run_line(argv, (), NOTEBOOK_PROG)
    if asks_for_help(line.options):
        sys.stdout.write(help_text(NOTEBOOK_PROG))
        return 0
    args = parse_notebook_args(line.rest, NOTEBOOK_PROG)
    if args.help_notebook:
        sys.stdout.write(common.shown(notebook_help(args.path), common.LINES) + "\n")
        return 0
    try:
        config = load_config()
    except ConfigError as e:
        raise CliUsageError(str(e)) from None
    with get_runner() as runner:
        with_path = RunLine(line.options, ["--", args.path], line.flags, line.head, NOTEBOOK_PROG, line.extra)
        run_args = parse_run_line(with_path, config=config, runner=runner)
        check_run_options(run_args.workspace, NOTEBOOK_PROG)
        options = dict(args.options)
        resource = options.pop("h", None)
        with warnings.catch_warnings(record=True) as caught:  # an unknown name without --strict
            warnings.simplefilter("always")
            try:
                request = prepare(runner, args.notebook(), (), args.call_kwargs(), scheduler=run_args.scheduler,
                                  cfg=run_args.cfg, resource=resource, **options)  # fmt: skip
            except CliUsageError:
                raise
            except (ValueError, TypeError) as e:
                raise CliUsageError(f"{NOTEBOOK_PROG}: error: {e}") from None
        for warning in caught:
            common.err(f"warning: {warning.message}")
        output = os.path.join(request.job_dir, str(request.meta.get("output") or ""))
        if run_args.dryrun:
            if run_args.json:
                sys.stdout.write(dryrun_json(request.info))
            else:
                text = request_facts(request, args.call_kwargs()) + format_dryrun(request.info)
                sys.stdout.write(common.shown(text, common.LINES))
            return 0

        def schedule() -> str:
            handle = launch(runner, request)
            common.err(f"output notebook: {output} (written as it runs)")
            return handle

        code = launch_and_follow(run_args, runner, request.info, schedule)
        if run_args.wait or run_args.log or ends_with_owner(request.info):  # it waited: the notebook is final
            common.err(f"output notebook: {output}")
        return code
