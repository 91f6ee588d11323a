"""``jupyter-sched runopts [SCHEDULER]``: the run options (``--cfg``) each scheduler accepts."""

from __future__ import annotations

import argparse
import sys

from jupyter_sched.cli import common
from jupyter_sched.frontend.config import ProjectConfig
from jupyter_sched.frontend import targets

HELP = "show the run options (--cfg) of the schedulers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scheduler", nargs="?", help="one scheduler (default: all)")


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    names = (
        [targets.check_scheduler(args.scheduler, "runopts")]
        if args.scheduler
        else targets.scheduler_names()
    )
    color = common.use_color(sys.stdout)
    status = 0
    with common.open_runner(config) as runner:
        for name in names:
            title = f"\033[32m{name}\033[0m:" if color else f"{name}:"
            try:
                opts = runner.scheduler_run_opts(name)
            except Exception as e:  # noqa: BLE001 - e.g. a backend whose dependency is missing
                print(f"{title}\n    unavailable: {type(e).__name__}: {e}\n")
                status = 1 if args.scheduler else status
                continue
            print(f"{title}\n{opts!r}")
    return status
