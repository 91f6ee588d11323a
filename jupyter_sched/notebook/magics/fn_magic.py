"""``%sched_run [RUN OPTIONS] FUNCTION [ITS FLAGS]``: a notebook function launched from the magic.

Why this syntax rather than ``--fn NAME``: ``%sched_run`` already runs whatever the line names, a
component or an AppDef variable, and a component's signature already becomes its flags. A function
variable is one more thing a line can name, and its signature becomes its flags the same way
(``%sched_run -s local_docker train --lr 0.1``); the job's own options keep the built-ins' spellings
(``--num_replicas``, ``--image``, ``--h``, ``--name``; see :mod:`jupyter_sched.functions.calls.fn_args`). Run
options (``-s``, ``--cfg``, ``--dryrun``, ``--wait``, ``--log``, ``--fail-fast``) and the notebook switches
(``--quiet``, ``--no-wait``, ``--detach``) work as for any app: the line becomes the same
:class:`~jupyter_sched.notebook.magics.run_plan.Plan` a component's does, and the magic launches, shows and
waits for both one way. ``--dryrun`` shows the function's name and where it is defined, the
pickled size, the interpreter and the image above the scheduler's request.
"""

from __future__ import annotations

import typing
from typing import Any, Dict, Mapping, Optional

from jupyter_sched.frontend.errors import ParserExit
from jupyter_sched.frontend.launch.run_args import parse_run_line
from jupyter_sched.frontend.launch.run_options import RunLine
from jupyter_sched.functions import prepare
from jupyter_sched.functions.calls.fn_args import parse_call
from jupyter_sched.functions.job import start
from jupyter_sched.notebook.displays.dryrun_repr import dryrun_html, dryrun_text
from jupyter_sched.notebook.magics.args import ArgsError
from jupyter_sched.notebook.magics.run_plan import Plan, apply_detach
from jupyter_sched.notebook.panes.theme import NO_MATH, esc, table
from jupyter_sched.specs import AppDef


def function_target(component: Optional[str], namespace: Mapping[str, Any]) -> Any:
    """The notebook callable the line names, or None (a component, an AppDef, anything else)."""
    if not component or not component.isidentifier():
        return None
    value = namespace.get(component)
    if value is None or isinstance(value, AppDef) or not callable(value):
        return None
    try:
        if typing.get_type_hints(value).get("return") is AppDef:  # a component defined in the notebook
            return None
    except Exception:  # noqa: BLE001 - unresolvable annotations: still a function
        pass
    return value


def cell_label(source: str) -> str:
    """``file:line`` as IPython names a cell (``cell In[3], line 4``) when the file is one of this
    kernel's cells; else as given."""
    path, _, line = source.rpartition(":")
    try:
        from IPython import get_ipython

        shell = get_ipython()
        named = shell.compile.format_code_name(path) if shell is not None and path else None
    except Exception:  # noqa: BLE001 - an IPython without cell names: the path is still true
        named = None
    return f"cell {named[1]}, line {line}" if named else source


class FunctionDryRun:
    """What ``%sched_run --dryrun FUNCTION`` shows: the function's facts over the scheduler's request."""

    kind = "function job"

    def __init__(self, request: Any) -> None:
        self.request = request

    @property
    def info(self) -> Any:
        return self.request.info

    def facts(self) -> Dict[str, str]:
        facts = self.request.summary()
        facts["defined at"] = cell_label(facts["defined at"])
        return facts

    def __repr__(self) -> str:
        facts = "\n".join(f"  {k}: {v}" for k, v in self.facts().items())
        return f"{self.kind} on {self.request.scheduler} (dry run, nothing runs):\n{facts}\n{dryrun_text(self.info)}"

    def _repr_html_(self) -> str:
        facts = table(["", ""], list(self.facts().items()))
        heading = f"<b>{esc(self.kind)} on {esc(self.request.scheduler)}</b> (dry run)"
        return f'<div class="{NO_MATH}">{heading}{facts}</div>{dryrun_html(self.info)}'


def plan_function(
    line: RunLine,
    component: str,
    fn: Any,
    runner: Any,
    *,
    default_scheduler: str = "",
    scheduler_cfg: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> Plan:
    """The :class:`Plan` of the notebook function ``fn`` that ``line`` (split once by the magic) names as
    ``component``: its run options parsed once, the rest of the line as the function's flags, the call
    pickled and dry-run. Launched, shown and waited for as any app of ``%sched_run``. Bad input raises
    ArgsError before anything runs; ``--help`` among the run options prints the usage, as for a component."""
    try:
        run_args = parse_run_line(
            line, runner=runner, default_scheduler=default_scheduler or None,
            layers=[("SchedMagics.scheduler_cfg", scheduler_cfg or {})],
        )  # fmt: skip
        apply_detach(line, run_args)
        args, kwargs, options = parse_call(fn, run_args.component_args, component)
        resource = options.pop("h", None)
        request = prepare(runner, fn, tuple(args), kwargs, scheduler=run_args.scheduler, cfg=run_args.cfg,
                          resource=resource, **options)  # fmt: skip
    except ParserExit as e:  # --help among the run options: argparse printed the usage
        return Plan(line, help=e.message or "")
    except (ValueError, TypeError) as e:
        raise ArgsError(f"%sched_run {component}: {e}") from None
    return Plan(
        line, run_args=run_args, info=request.info, dry_run=FunctionDryRun(request),
        launch=lambda session: start(request, session.runner, session.launched_job),
    )  # fmt: skip
