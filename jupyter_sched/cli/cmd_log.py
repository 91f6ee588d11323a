"""``jupyter-sched log SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]``: print replicas' logs, prefixed ``role/k``.

Several replicas are read concurrently (one thread each) and their lines interleaved whole. With ``-f`` it
follows the logs until the app ends, then exits 1 if the app did not succeed, or if its records were removed
meanwhile (its end is then unknown, and the logs may stop short). An unknown app, role or
replica is an error at once, listing what exists. To a terminal, control strings in the jobs' output (window
titles, OSC 8 links, DCS) are removed unless ``--raw``: a job must not drive the user's terminal. The
marked metric lines (``@@jupyter_sched:metrics {...}``) are taken out, their records stored with the app's
metrics, unless ``--raw`` (``frontend.logview.metric_lines``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import List, Optional, TextIO

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.frontend.logview.follow import TailOptions
from jupyter_sched.frontend.logview.tail import tail
from jupyter_sched.frontend.times import check_window, parse_time
from jupyter_sched.logs.control_strings import strip_control_strings
from jupyter_sched.runner import Runner
from jupyter_sched.specs import AppState, AppStatus


def wait_for_replicas(runner: Runner, handle: str, status: AppStatus) -> AppStatus:
    """Waits until the scheduler reports replicas (remote schedulers may not have started them yet)."""
    announced = False
    while not any(role.replicas for role in status.roles) and not status.is_terminal():
        if not announced:
            common.err(f"waiting for {handle} to start ({status.state}) before reading its logs...")
            announced = True
        status = runner.wait(handle, wait_interval=1, timeout=1) or status
    return status


def stream_app_logs(
    runner: Runner,
    handle: str,
    out: TextIO,
    role: Optional[str] = None,
    ids: Optional[List[int]] = None,
    opts: Optional[TailOptions] = None,
    follow: bool = False,
    raw: bool = False,
    json_lines: bool = False,
) -> List[str]:
    """Prints the logs of the app's (selected) replicas to ``out``; returns the read errors. To a terminal,
    control strings are removed unless ``raw``."""
    opts = opts or TailOptions(follow=follow)
    status = wait_for_replicas(runner, handle, targets.require_status(runner, handle))
    replicas = targets.select_replicas(handle, status, role, ids)
    terminal = _is_terminal(out)
    clean = None if raw or not terminal else strip_control_strings
    # several replicas' progress bars update in place on a terminal that can move its cursor
    live = terminal and not raw and len(replicas) > 1 and os.environ.get("TERM", "") not in ("", "dumb")
    return tail(runner, handle, replicas, out, opts, color=common.use_color(out), on_error=common.err, clean=clean,
                json_lines=json_lines, live=live)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle, role, ids = targets.parse_identifier(args.identifier)
    if args.regex:
        try:
            re.compile(args.regex)
        except re.error as e:
            raise CliUsageError(
                f"--regex {args.regex!r} is not a valid regular expression: {e}"
            ) from None
    opts = TailOptions(
        regex=args.regex,
        since=parse_time(args.since, "--since") if args.since else None,
        until=parse_time(args.until, "--until") if args.until else None,
        follow=args.follow,
        streams=args.streams,
        last=args.lines,
        metric_lines=args.raw,
    )
    if args.lines is not None and args.lines < 1:
        raise CliUsageError(f"-n/--lines {args.lines}: give 1 or more (leave it out for every line)")
    check_window(opts.since, opts.until, [args.since, args.until])
    with common.open_runner(config) as runner:
        errors = stream_app_logs(runner, handle, sys.stdout, role, ids, opts, raw=args.raw, json_lines=args.json)
        if errors:
            return 1
        if args.follow:
            status = runner.status(handle)
            if status is None:
                raise CliError(
                    f"{handle}: its records were removed while its logs were followed (the app directory was"
                    " deleted, or the scheduler forgot the app), so the logs may stop short and how the app"
                    " ended is unknown"
                )
            if status.is_terminal() and status.state != AppState.SUCCEEDED:
                common.err(f"{handle}: {status.state}")
                return 1
    return 0
