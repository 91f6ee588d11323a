"""``jupyter-sched list [-s SCHEDULER] [--json]``: the apps a scheduler knows in the default session.

Local apps are recorded on disk, so apps started by other processes (other terminals, notebooks) are listed
too, as long as they use the same log directory.
"""

from __future__ import annotations

import argparse
import json

from jupyter_sched.cli import common
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig

HELP = "list the apps a scheduler knows (including those started by other processes)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-s", "--scheduler", help="scheduler to ask (default: the config's, else local_cwd)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON list of {app_handle, app_id, state, name}"
    )


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    scheduler = targets.pick_scheduler(args.scheduler, config)
    with common.open_runner(config) as runner:
        apps = runner.list(scheduler)
        session = runner.session_name
    if args.json:
        rows = [
            {"app_handle": a.app_handle, "app_id": a.app_id, "state": str(a.state), "name": a.name}
            for a in apps
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not apps:
        print(f"no apps on {scheduler} (session {session!r})")
        return 0
    header = ("APP HANDLE", "STATE", "NAME")
    rows_text = [(common.shown(a.app_handle), str(a.state), common.shown(a.name)) for a in apps]
    widths = [max(len(r[i]) for r in [header, *rows_text]) for i in range(2)]
    for row in [header, *rows_text]:
        print(f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip())
    return 0
