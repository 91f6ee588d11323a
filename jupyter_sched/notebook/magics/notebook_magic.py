"""``%sched_notebook [RUN OPTIONS] train.ipynb -p lr 0.01 ...``: a notebook run as a job from the magic.

The run options are ``%sched_run``'s, split by the same splitter and parsed by the same parser (with the
notebook's switches ``--quiet``, ``--detach``, ``--no-wait``); what follows them is read by
:func:`jupyter_sched.functions.notebooks.args.parse_notebook_args`, the parser ``jupyter-sched notebook``
uses too. The line becomes the same :class:`~jupyter_sched.notebook.magics.run_plan.Plan` a function's
does, so the magic launches, shows and waits for it one way; the status pane adds the notebook's progress
line and output path (``notebook.panes.status_pane``). ``--help-notebook`` and ``--help`` plan nothing: they
are a plan's help text.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from jupyter_sched.frontend.errors import ParserExit
from jupyter_sched.frontend.launch.run_args import parse_run_line
from jupyter_sched.frontend.launch.run_options import RunLine
from jupyter_sched.functions import prepare
from jupyter_sched.functions.job import start
from jupyter_sched.functions.notebooks.args import (
    asks_for_help,
    check_run_options,
    help_text,
    notebook_help,
    parse_notebook_args,
)
from jupyter_sched.notebook.magics.args import ArgsError
from jupyter_sched.notebook.magics.fn_magic import FunctionDryRun
from jupyter_sched.notebook.magics.run_plan import Plan, apply_detach


class NotebookDryRun(FunctionDryRun):
    """What ``%sched_notebook --dryrun`` shows: the notebook, its parameters, then the scheduler's request."""

    kind = "notebook job"

    def __init__(self, request: Any, params: Mapping[str, Any]) -> None:
        super().__init__(request)
        self.params = dict(params)

    def facts(self) -> Dict[str, str]:
        facts = self.request.summary()
        notebook = facts.pop("defined at", "")
        facts.pop("function", None)
        shown = ", ".join(f"{k}={v!r}" for k, v in self.params.items()) or "(none: the notebook's defaults)"
        return {"notebook": notebook, "parameters": shown, **facts}


def plan_notebook(
    line: RunLine,
    runner: Any,
    *,
    default_scheduler: str = "",
    scheduler_cfg: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> Plan:
    """The :class:`Plan` of a ``%sched_notebook`` line (split once by the magic): the notebook's flags and
    parameters read and checked, the run options parsed exactly as ``%sched_run``'s, the notebook
    snapshotted with its parameters injected and dry-run. Bad input raises ArgsError before anything runs."""
    if asks_for_help(line.options):
        return Plan(line, help=help_text(line.prog))
    try:
        args = parse_notebook_args(line.rest, line.prog)
    except ParserExit as e:  # --help: argparse printed it
        return Plan(line, help=e.message or "")
    if args.help_notebook:
        return Plan(line, help=notebook_help(args.path))
    with_path = RunLine(line.options, ["--", args.path], line.flags, line.head, line.prog, line.extra)
    try:
        run_args = parse_run_line(
            with_path, runner=runner, default_scheduler=default_scheduler or None,
            layers=[("SchedMagics.scheduler_cfg", scheduler_cfg or {})],
        )  # fmt: skip
    except ParserExit as e:  # --help among the run options
        return Plan(line, help=e.message or "")
    check_run_options(run_args.workspace, line.prog)
    apply_detach(line, run_args)
    options = dict(args.options)
    resource = options.pop("h", None)
    try:
        request = prepare(runner, args.notebook(), (), args.call_kwargs(), scheduler=run_args.scheduler,
                          cfg=run_args.cfg, resource=resource, **options)  # fmt: skip
    except ArgsError:
        raise
    except (ValueError, TypeError) as e:  # a refused parameter (strict, a non-JSON value), an image without Python
        raise ArgsError(f"{line.prog}: {e}") from None
    return Plan(
        line, run_args=run_args, info=request.info, dry_run=NotebookDryRun(request, args.call_kwargs()),
        launch=lambda session: start(request, session.runner, session.launched_job),
    )  # fmt: skip
