"""``SchedMagics``: ``%sched_run``, ``%%sched_run``, ``%sched_notebook``, ``%sched_logs``, ``%sched_status``,
``%sched_job``, ``%sched_list``, ``%sched_cancel``, ``%sched_describe`` and ``%sched_metrics``.

The methods are thin: they parse (bad arguments raise ``UsageError`` with the usage), then hand over to
:mod:`.run_plan`, :mod:`.session` and the panes. ``%sched_run`` reads as the steps of a run (parse, dry run,
launch, show, wait), one method each, the same for a component, an AppDef, a cell and a notebook function.
Blocking (``--wait``, ``%sched_logs -f``) waits in short slices; an interrupt (■) only detaches: a plain
message says what happens to the app (local replicas end with the kernel unless ``--detach``) and how to get
the Job back, unless ``cancel_on_interrupt`` is set. ``--wait`` raises
:class:`~jupyter_sched.frontend.job.JobFailed` when the app did not succeed.
Configuration is the traits of :class:`SchedConfig`.
"""

from __future__ import annotations

import warnings
from collections import ChainMap
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class, needs_local_scope, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from jupyter_sched.frontend.job import Job
from jupyter_sched.frontend.launch.line_vars import expand as expand_vars
from jupyter_sched.functions.errors import FunctionError
from jupyter_sched.notebook.displays.job_display import compact_in_this_cell, shown_in_this_cell
from jupyter_sched.notebook.kernel.config import SchedConfig, checked_config
from jupyter_sched.notebook.kernel.session import Session
from jupyter_sched.notebook.magics.args import ArgsError, split_line, split_run_line
from jupyter_sched.notebook.magics.callsite import CallSite, magic_call_site
from jupyter_sched.specs.output.labels import app_label

if TYPE_CHECKING:  # pragma: no cover - loaded with the first %sched_run, not with the extension
    from jupyter_sched.notebook.magics.run_plan import Plan


class Detached(KeyboardInterrupt):
    """Raised when the user interrupts a blocking magic, after a plain line on stdout has said what
    happens to the app and how to get it back. Still an interrupt, so the rest of a "run all" stops as
    the user asked; its own rendering is one short line."""

    def _render_traceback_(self) -> List[str]:
        return [str(self)]


def _usage(e: Exception) -> UsageError:
    return UsageError(str(e))


def _point_to(failure: FunctionError, job: Any, site: Optional[CallSite], logs_shown: bool) -> None:
    """A function's error raised by ``%sched_run --wait``: its traceback is in the job's log the cell showed
    (then the error is its line, not the traceback again), and its debug hint names the variable the line
    assigned, or how to get the Job when it assigned none."""
    if logs_shown:
        failure.shown_above = "in the job's log above"
    if failure.rerun_call:
        name = site.global_name if site is not None else None
        failure.rerun_call = (f"{name}.exception().rerun_here()" if name
                              else f"job.exception().rerun_here() (after job = %sched_job {job.app_id})")  # fmt: skip


def _no_app(job: Any) -> UsageError:
    return UsageError(f"no app {app_label(job.handle)}: it was never submitted, or its records were removed")


def _parse(magic: Any, line: str) -> Any:
    """Parses ``line`` with the magic's ``magic_arguments`` parser, splitting it like a shell (quotes are
    removed, as on the command line; ``parse_argstring`` would keep them). Errors carry the usage."""
    parser = magic.parser
    try:
        return parser.parse_intermixed_args(split_line(line))
    except (ArgsError, UsageError) as e:
        usage = " ".join(parser.format_usage().replace("::", "", 1).split())
        raise UsageError(f"%{parser.prog.lstrip('%')}: {e}\nusage: {usage}") from None


@magics_class
class SchedMagics(Magics, SchedConfig):
    """Launch and watch jobs from a notebook. Configure with ``%config SchedMagics``."""

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        problems: List[str] = []
        if shell is not None and "config" not in kwargs:
            kwargs["config"], problems = checked_config(getattr(shell, "config", None))
        super().__init__(shell=shell, **kwargs)
        self.session = Session(self)
        for problem in problems:
            warnings.warn(problem, stacklevel=2)

    # -- helpers ----------------------------------------------------------------------------------------
    def _namespace(self, local_ns: Optional[Dict[str, Any]] = None) -> Mapping[str, Any]:
        """The user's variables (a cell's locals first, when a magic runs inside a function)."""
        return ChainMap(local_ns or {}, self.shell.user_ns if self.shell is not None else {})

    def _expand(self, line: str, local_ns: Optional[Dict[str, Any]] = None) -> str:
        """The line with the notebook's ``$variables`` expanded as a shell would (never ``{...}``: see
        :mod:`jupyter_sched.frontend.launch.line_vars`); the magics opt out of IPython's own expansion."""
        return expand_vars(line, self._namespace(local_ns))[0]

    def _job(self, target: str, local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """The Job a magic's target names (see ``Session.resolve``); UsageError if there is none."""
        try:
            handle = self.session.resolve(target, self._namespace(local_ns))
        except (LookupError, ValueError) as e:
            raise UsageError(str(e)) from None
        return self.session.job(handle)

    @contextmanager
    def detach_on_interrupt(self, job: Any, site: Optional[CallSite] = None) -> Iterator[None]:
        """Turns an interrupt (■) inside the block into :class:`Detached`, after printing what happens
        to the app now (see :func:`detach_message`). The Job stays reachable: it is bound to the name
        the line assigns (``job = %sched_run ...``), and ``%sched_job HANDLE`` returns it. With
        ``cancel_on_interrupt`` the app is cancelled instead."""
        try:
            yield
        except Detached:  # an inner blocking step (``--log``'s follow) already said it
            if site is not None:
                site.bind(self.shell.user_ns if self.shell is not None else {}, job)
            raise
        except KeyboardInterrupt:
            if site is not None:
                site.bind(self.shell.user_ns if self.shell is not None else {}, job)
            if self.cancel_on_interrupt:
                job.cancel()
                label = app_label(job.handle)
                raise Detached(f"Interrupted: cancelling {label} (cancel_on_interrupt is set).") from None
            print(detach_message(job, site), flush=True)
            raise Detached(
                f"Interrupted: stopped waiting for {app_label(job.handle)} (the app was not stopped)."
            ) from None

    def _wait(self, job: Any, site: Optional[CallSite] = None, before: Any = None, logs_shown: bool = False) -> None:
        """Wait: blocks until the app ends (after calling ``before``), waiting in short slices so that an
        interrupt arrives at once; clicks in the job's panes are handled meanwhile (ipykernel 7). Raises
        :class:`JobFailed` (a function's own error) unless the app succeeded (or was cancelled from this
        kernel), binding the Job first if the line assigns it: ``job`` is there to inspect. ``logs_shown``:
        the cell showed the job's log (its panes, or ``--log``'s lines), so a function's error says so instead
        of showing the same traceback a second time, and names the call that debugs it in this cell's terms."""
        with self.detach_on_interrupt(job, site):
            if before is not None:
                before()
            status = job.wait()
        failure = job.failure(status)
        if failure is not None:
            if site is not None:
                site.bind(self.shell.user_ns if self.shell is not None else {}, job)
            if isinstance(failure, FunctionError):
                _point_to(failure, job, site, logs_shown)
            raise failure

    # -- %sched_run -------------------------------------------------------------------------------------
    @needs_local_scope
    @line_cell_magic
    @no_var_expand
    def sched_run(self, line: str, cell: Optional[str] = None, local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """Launch an app, exactly as ``jupyter-sched run`` parses it, and show it live.

        Usage::

            %sched_run [--quiet] [--detach] [--no-wait] [RUN OPTIONS] COMPONENT [COMPONENT ARGS...]
            %sched_run [RUN OPTIONS] APPDEF_VARIABLE
            %%sched_run [--python] [RUN OPTIONS] [COMPONENT FLAGS]     (the cell is the script)

        Run options (as on the command line): ``-s/--scheduler``, ``--cfg K=V,...``, ``--dryrun``,
        ``--wait``, ``--log`` (same as ``--wait`` here), ``--workspace``. Notebook flags (before the
        component): ``--quiet`` (no live view), ``--detach`` (local: the replicas outlive the kernel,
        ``--cfg outlive_owner=true``), ``--no-wait`` (overrides ``SchedMagics.wait``); in the cell magic
        ``--python`` runs the cell with Python (default: ``sh``), and the rest of the line are flags of
        ``utils.sh``/``utils.python`` such as ``--num_replicas 2 --name prep``.

        The notebook's variables are expanded as a shell expands its own (``--lr $lr``; never ``{...}``, not
        inside single quotes; see :mod:`jupyter_sched.frontend.launch.line_vars`), and ``--dryrun`` says what the
        line became. A flag of the component after its first argument is refused with the line meant.

        Returns a Job (``job = %sched_run ...``): ``job.status``, ``job.wait()``, ``job.logs()``,
        ``job.cancel()``, ``job.handle``; it displays as the live status and log view. With ``--dryrun``
        returns the AppDryRunInfo (a table per replica; a function's facts above it). Interrupting ``--wait``
        detaches. A notebook function named on the line (see :mod:`.fn_magic`) is launched, shown and waited
        for exactly as a component is: the line becomes the same :class:`~.run_plan.Plan`.

        Examples::

            %sched_run utils.sh "python train.py --epochs 3"
            job = %sched_run -s local_docker --cfg copy_env=HF_* utils.python -m mypkg.train
            %sched_run --dryrun myapp
        """
        namespace = self._namespace(local_ns)
        expanded, variables = expand_vars(line, namespace)
        return self._carry_out(self._plan_run(expanded, cell, namespace), line, expanded, variables)

    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_notebook(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """Run a notebook as a job, its parameters injected as papermill does, and show it live.

        Usage::

            %sched_notebook [--quiet] [--detach] [--no-wait] [RUN OPTIONS] NOTEBOOK [-p NAME VALUE]...
                            [-r NAME VALUE]... [-f FILE]... [-y YAML]... [--strict] [OPTIONS]
            %sched_notebook --help-notebook NOTEBOOK       (its parameters: name, type, default, help)

        Run options and notebook switches are exactly ``%sched_run``'s. ``-p``: a value read as a Python
        literal where it is one, else a string; ``-r``: a string as typed; ``-f``: a YAML file; ``-y``: YAML
        text; ``--expr NAME EXPR``: a Python expression; ``--strict``: refuse names the notebook's
        ``parameters`` cell does not define. Also ``--kernel``, ``--timeout``, ``--output-format``,
        ``--with-folder`` and the job's ``--num_replicas``, ``--name``, ``--image``, ``--h`` (``--help``
        lists them). The same flags as ``jupyter-sched notebook`` (one parser,
        :mod:`jupyter_sched.functions.notebooks.args`). The live view's status pane has the notebook's
        progress (``cell 5/23 · model.fit(...)``) and output path; returns the Job (``job.result()`` is what
        the notebook recorded, ``job.output_path`` the executed notebook).

        Examples::

            %sched_notebook train.ipynb -p lr 0.01 -p epochs 3
            job = %sched_notebook -s slurm --wait train.ipynb -y 'lr: 0.1' --strict
        """
        from jupyter_sched.notebook.magics.notebook_magic import plan_notebook

        namespace = self._namespace(local_ns)
        expanded, variables = expand_vars(line, namespace)
        defaults: Dict[str, Any] = {"default_scheduler": self.default_scheduler, "scheduler_cfg": self.scheduler_cfg}
        try:
            run_line = split_run_line(split_line(expanded), ("quiet", "detach", "no_wait"), "%sched_notebook")
            plan = plan_notebook(run_line, self.session.runner, **defaults)
        except ArgsError as e:
            raise _usage(e) from None
        return self._carry_out(plan, line, expanded, variables)

    def _carry_out(self, plan: Plan, line: str, expanded: str, variables: List[str]) -> Any:
        """Help, a dry run, or launch, show and wait: the steps after a line became a Plan, one way for
        ``%sched_run`` and ``%sched_notebook``."""
        if plan.help is not None:  # argparse, or the component, printed its help: nothing runs
            if plan.help:
                print(plan.help)
            return None
        if plan.dryrun:
            if expanded != line:
                show_expansion(plan.line.prog, expanded, variables, self.interactive)
            return plan.dry_run
        site = magic_call_site()
        job = self._launch(plan)
        if not plan.waits(self.wait):
            return self._show(job, plan, site)
        logs_shown = not plan.line.flag("quiet") and (self.interactive or bool(plan.run_args and plan.run_args.log))
        self._wait(job, site, before=lambda: self._show_waiting(job, plan), logs_shown=logs_shown)
        if self.interactive or plan.line.flag("quiet"):
            compact_in_this_cell(job)  # the live view above (or nothing, --quiet) was this cell's display of it
        return job

    # The steps of a %sched_run, in the order they run; one way for components, AppDefs, cells and functions.
    def _plan_run(self, line: str, cell: Optional[str], namespace: Mapping[str, Any]) -> Plan:
        """Parse: the line split once, then planned as a notebook function's run (:mod:`.fn_magic`) or a
        component's, an AppDef's or the cell's (:mod:`.run_plan`); bad input is a UsageError with the usage."""
        from jupyter_sched.notebook.magics.fn_magic import function_target, plan_function
        from jupyter_sched.notebook.magics.run_plan import plan_run

        prog = "%%sched_run" if cell is not None else "%sched_run"
        allowed = ("quiet", "detach", "no_wait", "python") if cell is not None else ("quiet", "detach", "no_wait")
        defaults: Dict[str, Any] = {"default_scheduler": self.default_scheduler, "scheduler_cfg": self.scheduler_cfg}
        try:
            run_line = split_run_line(split_line(line), allowed, prog)
            if cell is None:
                component, _ = run_line.component()
                fn = function_target(component, namespace)
                if fn is not None:
                    return plan_function(run_line, component or "", fn, self.session.runner, **defaults)
            return plan_run(run_line, self.session.runner, namespace=namespace, cell=cell, **defaults)
        except ArgsError as e:
            raise _usage(e) from None

    def _launch(self, plan: Plan) -> Job:
        """Launch: the app is scheduled and its Job recorded in the session. ``--fail-fast`` is the Job's
        (its waits stop the other replicas once one failed), watched from a thread when the cell does not wait."""
        assert plan.launch is not None and plan.run_args is not None  # a plan that is not help or a dry run
        try:
            job = plan.launch(self.session)
        except ValueError as e:  # a request the scheduler refuses: the user's to change
            raise _usage(e) from None
        job.fail_fast = plan.run_args.fail_fast
        if job.fail_fast and not plan.waits(self.wait):
            job.watch_fail_fast()
        return job

    def _show(self, job: Job, plan: Plan, site: Optional[CallSite]) -> Job:
        """Show, when the cell does not wait: ``--quiet`` is one line; an unassigned Job is the cell's result
        (IPython shows it); an assigned one (``job = %sched_run ...``) IPython would not show, so it is shown
        here, and a display of ``job`` later in the same cell is one line, not a second view."""
        if plan.line.flag("quiet"):
            compact_in_this_cell(job)
        elif site is not None and site.assigned:
            from IPython.display import display

            display(job)
            shown_in_this_cell(job)
        return job

    def _show_waiting(self, job: Job, plan: Plan) -> None:
        """Show, when the cell waits (called inside the wait, so that an interrupt detaches): the live view,
        or in text a line saying so and with ``--log`` the replicas' lines as they come; ``--quiet`` nothing."""
        if plan.line.flag("quiet"):
            return
        if self.interactive:
            from IPython.display import display

            display(job)
            return
        print(f"{job.name} launched: {app_label(job.handle)} (waiting; interrupt to detach)", flush=True)
        if plan.run_args is not None and plan.run_args.log:
            from jupyter_sched.frontend.logview.log_model import app_sources
            from jupyter_sched.notebook.magics.logs_cmd import print_follow

            print_follow(job, app_sources(job.fetch_status()), self.detach_on_interrupt)

    # -- %sched_logs ------------------------------------------------------------------------------------
    @magic_arguments()
    @argument(
        "target", nargs="?", default="",
        help="app handle (optionally HANDLE/ROLE/K,K), app id, app name or Job variable; default: the last job",
    )
    @argument("role", nargs="?", default=None, help="only this role")
    @argument("-r", "--replicas", help="only these replicas of the role, e.g. 0,1 or 0-3")
    @argument("--regex", help="only lines matching this regular expression")
    @argument("--streams", choices=["stdout", "stderr", "combined"],
              help="one output only (default: stdout and stderr, stderr marked)")  # fmt: skip
    @argument("--since", help="only lines written after: an age (30s, 5m, 2h, 1d) or an ISO time")
    @argument("--until", help="only lines written before (same forms as --since)")
    @argument("-n", "--tail", type=int, help="show the last N lines (default: SchedMagics.tail_lines)")
    @argument("-f", "--follow", action="store_true", help="block the cell until the replicas end (■ detaches)")
    @argument("--snapshot", action="store_true", help="what is logged now; no live updates")
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_logs(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """Show the logs of an app's replicas (all of them, interleaved with ``role/k`` gutters, or some).

        In a widget front end: a live log pane (``\\r`` progress bars in place, colours, stderr marked,
        Follow/Pause, a count of lines not shown) that follows until the replicas end; ``-f`` also blocks the
        cell until then; ``--snapshot`` shows what is there now. Elsewhere: prints the lines (``-f`` prints
        them as they come). ``-n N`` shows the last N lines.

        Examples::

            %sched_logs                              # the last job launched here
            %sched_logs job trainer -r 0 --regex loss
            %sched_logs local_cwd://default/train-b3k2x9q0d1/trainer/0 -n 50 --snapshot
        """
        line = self._expand(line, local_ns)
        from jupyter_sched.notebook.magics import logs_cmd

        try:
            args = _parse(self.sched_logs, line)
            return logs_cmd.run(
                self.session, args, namespace=self._namespace(local_ns), on_interrupt=self.detach_on_interrupt
            )
        except ArgsError as e:
            raise _usage(e) from None

    # -- %sched_status / %sched_describe ------------------------------------------------------------------
    @magic_arguments()
    @argument("target", nargs="?", default="", help="app handle, id, name or Job variable; default: the last job")
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_status(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """The state of an app and of each replica: a live status pane (with Cancel) until it ends, or the
        AppStatus as text outside a widget front end. Works for apps of earlier kernels of the session."""
        line = self._expand(line, local_ns)
        args = _parse(self.sched_status, line)
        job = self._job(args.target, local_ns)
        status = job.fetch_status()
        if status is None:
            raise _no_app(job)
        if not self.interactive:
            return status
        from jupyter_sched.notebook.displays.record import View
        from jupyter_sched.notebook.panes.job_view import fallback_html, fallback_text
        from jupyter_sched.notebook.panes.status_pane import StatusPane

        pane = StatusPane(job, self.session.settings(), status).start()
        return View(pane.widget, fallback_text(job), fallback_html(job), pane)

    @magic_arguments()
    @argument("target", nargs="?", default="", help="app handle, id, name or Job variable; default: the last job")
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_job(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """The Job of an app, to keep in a variable: ``job = %sched_job HANDLE``. It is the object
        ``%sched_run`` returns (``job.wait()``, ``job.result()``, ``job.logs()``, ``job.cancel()``), for
        any app of the session, also one launched by an earlier kernel or from the command line, or
        after an interrupt (a function job's, from ``jupyter_sched.submit`` or ``%sched_run`` of a
        function, with its ``result()``). Displayed, it shows the live view (assigned, too)."""
        line = self._expand(line, local_ns)
        args = _parse(self.sched_job, line)
        site = magic_call_site()
        job = self._job(args.target, local_ns)
        if job.fetch_status() is None:
            raise _no_app(job)
        if type(job) is Job:  # not launched by this kernel: a function job's result is on disk
            try:
                job = self.session.launcher.attach(job.handle)
            except LookupError:
                pass
        if site is not None and site.assigned:
            from IPython.display import display

            display(job)
        return job

    @magic_arguments()
    @argument("target", nargs="?", default="", help="app handle, id, name or Job variable; default: the last job")
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_describe(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """The definition of an app (roles, commands, replicas) and its replicas' states."""
        line = self._expand(line, local_ns)
        from jupyter_sched.schedulers.api import DescribeAppResponse

        args = _parse(self.sched_describe, line)
        job = self._job(args.target, local_ns)
        status = job.fetch_status()
        app = job.runner.describe(job.handle) if status is not None else None
        if status is None or app is None:
            raise _no_app(job)
        return DescribeAppResponse(
            app_id=job.app_id, state=status.state, num_restarts=status.num_restarts, msg=status.msg,
            structured_error_msg=status.structured_error_msg, ui_url=status.ui_url,
            roles_statuses=status.roles, roles=list(app.roles),
        )  # fmt: skip

    # -- %sched_metrics -----------------------------------------------------------------------------------
    @magic_arguments()
    @argument("target", nargs="?", default="", help="app handle, id, name or Job variable; default: the last job")
    @argument("--key", action="append", dest="keys", metavar="K", help="only this metric (repeatable)")
    @argument("--format", default="table", choices=["table", "jsonl", "csv"],
              help="table: each key's summary (default); jsonl, csv: print the records")  # fmt: skip
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_metrics(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> Any:
        """What an app's replicas logged with ``jupyter_sched.track``: a table per role, replica and key (last,
        min, max, count, step of the last value, goal), as ``jupyter-sched metrics`` prints it; ``--format
        jsonl`` or ``csv`` prints the records. For a DataFrame: ``job.metrics()``."""
        line = self._expand(line, local_ns)
        from jupyter_sched.notebook.magics.metrics_cmd import show

        args = _parse(self.sched_metrics, line)
        job = self._job(args.target, local_ns)
        if job.fetch_status() is None:
            raise _no_app(job)
        try:
            return show(job.handle, job.metrics.directory, job.metrics.read(), args.keys, args.format)
        except ValueError as e:
            raise _usage(e) from None

    # -- %sched_list / %sched_cancel ---------------------------------------------------------------------
    @magic_arguments()
    @argument("-s", "--scheduler", action="append", help="ask only this scheduler (repeatable)")
    @argument("--all", action="store_true", help="ask every registered scheduler")
    @argument("-n", "--limit", type=int, default=None,
              help="entries on the first screen (default 50; 0: all); a sweep's runs are one entry")  # fmt: skip
    @line_magic
    @no_var_expand
    def sched_list(self, line: str = "") -> Any:
        """The apps of this session (also those of earlier kernels): running first, newest first, with
        start time and age, a sweep's runs as one row, the first 50 and "Show more"; a live table with Cancel
        on running rows and Open (shows the app's live view under the table), "this notebook" or "all" apps,
        or a text table. Asks the default scheduler, ``SchedMagics.list_schedulers`` and every scheduler used
        in the session."""
        line = self._expand(line)
        from jupyter_sched.notebook.panes.list_pane import FIRST_SCREEN, ListPane, rows_text

        args = _parse(self.sched_list, line)
        if args.limit is not None and args.limit < 0:
            raise UsageError(f"-n/--limit {args.limit}: give 1 or more entries, or 0 for all of them")
        limit = FIRST_SCREEN if args.limit is None else args.limit or None
        schedulers = args.scheduler
        if args.all:
            schedulers = self.session.runner.scheduler_backends()
        listing = self.session.list_jobs(schedulers)
        if not self.interactive:
            print(rows_text(listing.rows, listing.notices, limit=limit))
            return None
        return ListPane(self.session, self.session.settings(), listing.rows, listing.notices, schedulers, limit).start()

    @magic_arguments()
    @argument("targets", nargs="*", help="app handles, ids, names or Job variables; default: the last job")
    @argument("--wait", action="store_true", help="wait until the apps have stopped")
    @needs_local_scope
    @line_magic
    @no_var_expand
    def sched_cancel(self, line: str = "", local_ns: Optional[Dict[str, Any]] = None) -> None:
        """Cancel apps (SIGTERM, then SIGKILL after the grace period; docker: stop the containers)."""
        line = self._expand(line, local_ns)
        args = _parse(self.sched_cancel, line)
        jobs = [self._job(t, local_ns) for t in (args.targets or [""])]
        for job in jobs:
            status = job.fetch_status()
            if status is None:
                raise _no_app(job)
            if status.is_terminal():
                print(f"{app_label(job.handle)} already ended ({status.state}); nothing to cancel")
                continue
            job.cancel()
            print(f"cancelling {app_label(job.handle)}")
        if args.wait:
            for job in jobs:
                with self.detach_on_interrupt(job):
                    job.wait()
                print(f"{app_label(job.handle)}: {job.last_status.state if job.last_status else 'UNKNOWN'}")


def show_expansion(prog: str, line: str, variables: List[str], interactive: bool = True) -> None:
    """Says above a dry run what the line became once the notebook's variables were expanded (the run
    shown below is that line's)."""
    from IPython.display import display

    from jupyter_sched.notebook.panes.theme import code, esc

    names = ", ".join(dict.fromkeys(variables))
    text = f"{prog} {line}"
    head = f"the line after expanding {names}:"
    if not interactive:
        print(f"{head}\n  {text}")
        return
    display({
        "text/plain": f"{head}\n  {text}",
        "text/html": f'<div class="jsched-expanded" style="font-size:12px">{esc(head)} {code(text)}</div>',
    }, raw=True)  # fmt: skip


def detach_message(job: Any, site: Optional[CallSite] = None) -> str:
    """What an interrupt leaves behind, truthfully: the app goes on; whether it outlives the kernel
    (local replicas end with the kernel that launched them unless ``--detach``); how to get it back."""
    try:
        status = job.fetch_status()
    except Exception:  # noqa: BLE001 - the message matters more than a fresh state
        status = job.last_status
    state = status.state if status is not None else "UNKNOWN"
    if job.bound_to_kernel:
        fate = (
            "It runs as long as this kernel does: restarting or shutting down the kernel ends its replicas"
            " (launch with --detach to keep them through a restart)."
        )
    else:
        fate = "It keeps running, also through a kernel restart."
    name = site.global_name if site is not None else None
    kept = f"`{name}` holds it; " if name else ""
    return (
        f"Stopped waiting for {job.name} ({state}): {app_label(job.handle)}\n{fate}\n"
        f"{kept}get it back with: job = %sched_job {job.app_id}  |  stop it: %sched_cancel {job.app_id}"
    )

