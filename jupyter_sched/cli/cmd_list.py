"""``jupyter-sched list [-s SCHEDULER] [--json]``: the apps a scheduler knows in the default session, as the
front ends' one model lists them (:mod:`jupyter_sched.frontend.jobs`: running first, then newest first;
``--json`` gives each app's row: state, times, span, counts, reason, sweep, ...).

Local apps are recorded on disk, so apps started by other processes (other terminals, notebooks) are listed
too, as long as they use the same log directory.
"""

from __future__ import annotations

import argparse
import json

from jupyter_sched.cli import common
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    # the front ends' one listing and rows (jupyter_sched.frontend.jobs): only rendered here
    from jupyter_sched.frontend.jobs.listing import Lister
    from jupyter_sched.frontend.jobs.order import ordered

    scheduler = targets.pick_scheduler(args.scheduler, config)
    with common.open_runner(config) as runner:
        session = runner.session_name
        listing = Lister(lambda _session: runner).list([session], [scheduler])
    rows = ordered(listing.rows)
    for notice in listing.notices:
        common.err(notice)
    if args.json:
        print(json.dumps([{"app_handle": r.handle, **r.to_json()} for r in rows], indent=2))
        return 1 if listing.notices else 0
    if not rows:
        if not listing.notices:
            print(f"no apps on {scheduler} (session {session!r})")
        return 1 if listing.notices else 0
    header = ("APP HANDLE", "STATE", "NAME")
    rows_text = [(common.shown(r.handle), r.state, common.shown(r.name)) for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows_text]) for i in range(2)]
    for row in [header, *rows_text]:
        print(f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip())
    return 0
