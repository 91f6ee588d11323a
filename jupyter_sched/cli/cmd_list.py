"""``jupyter-sched list [-s SCHEDULER] [--json]``: the apps a scheduler knows in the default session, as the
front ends' one model lists them (:mod:`jupyter_sched.frontend.jobs`: running first, then newest first;
``--json`` gives each app's row: state, times, span, counts, reason, sweep, metrics, ...). A ``METRIC``
column shows each app's main metric (``loss 0.31``: what ``jupyter_sched.track`` logged last) once an app
listed has logged one.

Local apps are recorded on disk, so apps started by other processes (other terminals, notebooks) are listed
too, as long as they use the same log directory.
"""

from __future__ import annotations

import argparse
import json
from typing import List, Tuple

from jupyter_sched.cli import common
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    # the front ends' one listing and rows (jupyter_sched.frontend.jobs): only rendered here
    from jupyter_sched.frontend.jobs.listing import Lister
    from jupyter_sched.frontend.jobs.metrics import main_metric_text
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
    metrics = [common.shown(main_metric_text(r.metrics)) for r in rows]
    rows_text: List[Tuple[str, ...]]
    if any(metrics):  # the main metric's last value (loss 0.31), a column only when an app logged one
        header: Tuple[str, ...] = ("APP HANDLE", "STATE", "METRIC", "NAME")
        rows_text = [(common.shown(r.handle), r.state, m, common.shown(r.name)) for r, m in zip(rows, metrics)]
    else:
        header = ("APP HANDLE", "STATE", "NAME")
        rows_text = [(common.shown(r.handle), r.state, common.shown(r.name)) for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows_text]) for i in range(len(header) - 1)]
    for row in [header, *rows_text]:
        print(("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1]).rstrip())
    return 0
