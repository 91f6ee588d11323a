"""``%sched_logs``: which replicas, then a live pane, a static snapshot, or plain printed text.

Targets are what the other magics accept (handle, app id, unique prefix, app name, Job variable, or the
last job) plus the command line's ``HANDLE/ROLE/K,K`` form (and ``APP_ID/ROLE/K``). Printed output uses the
command line's own printer (``role/k`` prefixes kept intact across ``\\r`` frames) when following, and the
pane's model (``\\r`` resolved, colours stripped, last N lines) for a snapshot.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, ContextManager, List, Mapping, Optional, Tuple

from jupyter_sched.frontend.logview.follow import TailOptions
from jupyter_sched.frontend.logview.log_model import ALL, app_sources, read_snapshot
from jupyter_sched.frontend.logview.tail import tail
from jupyter_sched.frontend.targets import parse_identifier
from jupyter_sched.notebook.magics.args import ArgsError, parse_replicas, parse_time
from jupyter_sched.specs.output.labels import app_label

READ_ENDED_SECONDS = 10.0
"""How long ``%sched_logs`` of an ended app waits for its logs to be read before it shows them."""

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.frontend.job import Job
    from jupyter_sched.notebook.kernel.session import Session

OnInterrupt = Callable[["Job"], ContextManager[None]]
"""A context manager per job that turns an interrupt (■) inside it into the magics' one-line detach."""


def resolve_target(
    session: "Session", target: str, role: Optional[str], replicas: Optional[str], namespace: Mapping[str, Any]
) -> Tuple["Job", Optional[str], Optional[List[int]]]:
    """(job, role, replica ids) from the arguments; a role or ids in both forms must agree."""
    ids = parse_replicas(replicas)
    extra_role: Optional[str] = None
    extra_ids: Optional[List[int]] = None
    if "://" in target:
        handle, extra_role, extra_ids = parse_identifier(target)
    else:
        head, *tail_ = target.split("/") if target else [""]
        if tail_:
            extra_role = tail_[0] or None
            extra_ids = parse_replicas(tail_[1]) if len(tail_) > 1 else None
        try:
            handle = session.resolve(head, namespace)
        except (LookupError, ValueError) as e:
            raise ArgsError(str(e)) from None
    job = session.job(handle)
    if extra_role and role and extra_role != role:
        raise ArgsError(f"two roles given: {extra_role!r} (in {target}) and {role!r}")
    if extra_ids is not None and ids is not None and extra_ids != ids:
        raise ArgsError(f"two replica lists given: {extra_ids} (in {target}) and {ids}")
    return job, role or extra_role, ids if ids is not None else extra_ids


def run(session: "Session", args: Any, *, namespace: Mapping[str, Any], on_interrupt: OnInterrupt) -> Any:
    """``%sched_logs`` with parsed ``args``; ``namespace`` holds the user's variables (Job variables name
    targets) and ``on_interrupt`` wraps the blocking part of ``-f``."""
    from jupyter_sched.notebook.displays.record import View
    from jupyter_sched.notebook.panes.log_model import HtmlLogMux
    from jupyter_sched.notebook.panes.log_pane import LogPane, follow_limit

    if args.snapshot and args.follow:
        raise ArgsError("--snapshot and -f/--follow contradict each other: give one (a snapshot does not update)")
    job, role, ids = resolve_target(session, args.target, args.role, args.replicas, namespace)
    status = job.fetch_status()
    if status is None:
        raise ArgsError(f"no app {app_label(job.handle)}: it was never submitted, or its records were removed")
    if args.regex:
        try:
            re.compile(args.regex)
        except re.error as e:
            raise ArgsError(f"--regex {args.regex!r} is not a valid regular expression: {e}") from None
    if args.tail is not None and args.tail < 1:
        raise ArgsError("--tail must be 1 or more")
    since, until = parse_time(args.since, "--since"), parse_time(args.until, "--until")
    try:
        sources = app_sources(status, role, ids, args.streams)
    except ValueError as e:
        raise ArgsError(f"{app_label(job.handle)}: {e}") from None
    settings = session.settings()
    if args.tail:
        settings = replace(settings, tail_lines=args.tail, keep_lines=max(settings.keep_lines, args.tail))
    title = f"{job.name} {job.handle}"
    if not session.interactive():
        if args.follow:
            print_follow(job, sources, on_interrupt, regex=args.regex, since=since, until=until,
                         streams=args.streams, last=args.tail)  # fmt: skip
        else:
            mux = read_snapshot(job.runner, job.handle, sources, settings.keep_lines, settings.max_line_chars,
                                args.regex, since, until)  # fmt: skip
            print(snapshot_text(mux, settings.tail_lines))
        return None
    if args.snapshot:
        snapshot = read_snapshot(job.runner, job.handle, sources, settings.keep_lines, settings.max_line_chars,
                                 args.regex, since, until, mux_type=HtmlLogMux)  # fmt: skip
        assert isinstance(snapshot, HtmlLogMux)
        pane = LogPane(snapshot, settings, title=title)
        mux = snapshot
        text = snapshot_text(mux, min(settings.tail_lines, 20))
        return View(pane.widget, text, f"<pre>{_esc(text)}</pre>", pane)
    live = HtmlLogMux(follow_limit(sources), settings.keep_lines, settings.max_line_chars)
    pane = LogPane(live, settings, title=title, live=True).start(job.runner, job.handle, args.regex, since, until)
    hint = f"logs of {job.handle} (live view); a snapshot: %sched_logs {job.handle} --snapshot"
    view = View(pane.widget, hint, f"<div>{_esc(hint)}</div>", pane)
    if status.is_terminal():  # the app has ended: show its whole log as a static record at once
        pane.done.wait(READ_ENDED_SECONDS)
    if not args.follow:
        return view
    from IPython.display import display

    display(view)
    with on_interrupt(job):
        while not pane.done.wait(0.2):
            pass
    return None


def snapshot_text(mux: Any, last_n: int) -> str:
    _, hidden = mux.rows(ALL, last_n)
    lines = mux.plain(ALL, last_n)
    head = [f"... {hidden:,} earlier lines not shown (use --tail N)"] if hidden > 0 else []
    notes = [f"! {n}" for n in mux.notices]
    return "\n".join(head + lines + notes)


def print_follow(
    job: "Job",
    sources: List[Any],
    on_interrupt: OnInterrupt,
    *,
    regex: Optional[str] = None,
    since: Any = None,
    until: Any = None,
    streams: Optional[str] = None,
    last: Optional[int] = None,
) -> None:
    """Prints the replicas' lines as they come (the command line's printer) until they end, starting at each
    replica's last ``last`` lines if given; an interrupt goes to ``on_interrupt``."""
    replicas = list(dict.fromkeys((s.role, s.k) for s in sources))
    opts = TailOptions(regex=regex, since=since, until=until, follow=True, streams=streams, last=last)
    with on_interrupt(job):
        tail(job.runner, job.handle, replicas, sys.stdout, opts, on_error=lambda m: print(m, file=sys.stderr))


def _esc(text: str) -> str:
    return html.escape(text)
