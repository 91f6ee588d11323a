"""``jupyter-sched log SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]``: print replicas' logs, prefixed ``role/k``.

Several replicas are read concurrently (one thread each) and their lines interleaved whole. With ``-f`` it
follows the logs until the app ends, then exits 1 if the app did not succeed. An unknown app, role or
replica is an error at once, listing what exists.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import List, Optional, TextIO, Tuple

from jupyter_sched.cli import common
from jupyter_sched.cli.config import ProjectConfig
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.cli.tail import TailOptions, tail
from jupyter_sched.runner import Runner
from jupyter_sched.specs import AppState, AppStatus

HELP = "print the logs of an app's replicas (-f: follow until the app ends)"

_IDENTIFIER = re.compile(
    r"^(?P<handle>[^:/]+://[^/]*/[^/]+)(?:/(?P<role>[^/]+))?(?:/(?P<ids>\d+(?:,\d+)*))?/?$"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "identifier",
        metavar="APP_HANDLE[/ROLE[/K,...]]",
        help="e.g. local_cwd://default/echo-b3k2x9q0d1, .../echo-b3k2x9q0d1/echo or .../echo/0,1",
    )
    parser.add_argument("--regex", help="print only the lines that match this regular expression")
    parser.add_argument(
        "--streams",
        choices=["stdout", "stderr", "combined"],
        default=None,
        help="which output (default: combined)",
    )
    parser.add_argument("-f", "--follow", "-t", "--tail", dest="follow", action="store_true",
                        help="keep printing new lines until the replicas end")  # fmt: skip
    parser.add_argument("-n", "--lines", type=int, metavar="N",
                        help="start at each replica's last N lines (with -f, then follow)")  # fmt: skip
    parser.add_argument(
        "--since", help="only lines written after this time: ISO (2024-05-01T12:00) or an age (5m)"
    )
    parser.add_argument(
        "--until", help="only lines written before this time (same forms as --since)"
    )
    parser.add_argument(
        "--json", action="store_true", help='JSON lines: {"role", "replica", "line"} per line, no prefixes'
    )


def parse_identifier(text: str) -> Tuple[str, Optional[str], Optional[List[int]]]:
    """``(handle, role or None, replica ids or None)``; an empty session means ``default``."""
    match = _IDENTIFIER.match(text)
    if not match:
        raise CliUsageError(
            f"log: {text!r} is not SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]"
            " (e.g. local_cwd://default/echo-b3k2x9q0d1/echo/0)"
        )
    scheme, _, rest = match.group("handle").partition("://")
    session, _, app_id = rest.rpartition("/")
    handle = common.check_handle(f"{scheme}://{session or 'default'}/{app_id}")
    ids = (
        list(dict.fromkeys(int(i) for i in match.group("ids").split(",")))  # each replica once
        if match.group("ids")
        else None
    )
    return handle, match.group("role"), ids


def wait_for_replicas(runner: Runner, handle: str, status: AppStatus) -> AppStatus:
    """Waits until the scheduler reports replicas (remote schedulers may not have started them yet)."""
    announced = False
    while not any(role.replicas for role in status.roles) and not status.is_terminal():
        if not announced:
            common.err(f"waiting for {handle} to start ({status.state}) before reading its logs...")
            announced = True
        status = runner.wait(handle, wait_interval=1, timeout=1) or status
    return status


def select_replicas(
    handle: str, status: AppStatus, role: Optional[str] = None, ids: Optional[List[int]] = None
) -> List[Tuple[str, int]]:
    roles = {r.role: sorted(rep.id for rep in r.replicas) for r in status.roles}
    if role is not None and role not in roles:
        raise CliError(
            f"app {handle} has no role {role!r}; its roles are: {', '.join(roles) or '(none)'}"
        )
    chosen = [role] if role is not None else list(roles)
    if ids is not None and role is not None:
        missing = [k for k in ids if k not in roles[role]]
        if missing:
            have = ", ".join(str(k) for k in roles[role]) or "none"
            raise CliError(
                f"role {role!r} of app {handle} has no replica {missing[0]}; its replicas are: {have}"
            )
        return [(role, k) for k in ids]
    return [(r, k) for r in chosen for k in roles[r]]


def stream_app_logs(
    runner: Runner,
    handle: str,
    out: TextIO,
    role: Optional[str] = None,
    ids: Optional[List[int]] = None,
    opts: Optional[TailOptions] = None,
    follow: bool = False,
    json_lines: bool = False,
) -> List[str]:
    """Prints the logs of the app's (selected) replicas to ``out``; returns the read errors."""
    opts = opts or TailOptions(follow=follow)
    status = wait_for_replicas(runner, handle, common.require_status(runner, handle))
    replicas = select_replicas(handle, status, role, ids)
    return tail(
        runner, handle, replicas, out, opts, color=common.use_color(out), on_error=common.err,
        json_lines=json_lines,
    )  # fmt: skip


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle, role, ids = parse_identifier(args.identifier)
    if args.regex:
        try:
            re.compile(args.regex)
        except re.error as e:
            raise CliUsageError(
                f"--regex {args.regex!r} is not a valid regular expression: {e}"
            ) from None
    opts = TailOptions(
        regex=args.regex,
        since=common.parse_time(args.since, "--since") if args.since else None,
        until=common.parse_time(args.until, "--until") if args.until else None,
        follow=args.follow,
        streams=args.streams,
        last=args.lines,
    )
    if args.lines is not None and args.lines < 1:
        raise CliUsageError(f"-n/--lines {args.lines}: give 1 or more (leave it out for every line)")
    common.check_window(opts.since, opts.until, [args.since, args.until])
    with common.open_runner(config) as runner:
        errors = stream_app_logs(runner, handle, sys.stdout, role, ids, opts, json_lines=args.json)
        if errors:
            return 1
        if args.follow:
            status = runner.status(handle)
            if status is not None and status.is_terminal() and status.state != AppState.SUCCEEDED:
                common.err(f"{handle}: {status.state}")
                return 1
    return 0
