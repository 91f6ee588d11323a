"""``jupyter-sched cancel APP_HANDLE [--wait]``: stop an app (SIGTERM, then SIGKILL after the grace period)."""

from __future__ import annotations

import argparse

from jupyter_sched.cli import common
from jupyter_sched.cli.config import ProjectConfig
from jupyter_sched.cli.errors import CliError

HELP = "cancel an app"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/sh-b3k2x9q0d1")
    parser.add_argument(
        "--wait", action="store_true", help="wait until the app has stopped and print its state"
    )


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    with common.open_runner(config) as runner:
        status = common.require_status(runner, args.app_handle)
        if status.is_terminal():
            print(f"{args.app_handle} already ended ({status.state}); nothing to cancel")
            return 0
        runner.cancel(args.app_handle)
        if not args.wait:
            print(f"cancelling {args.app_handle}")
            return 0
        final = runner.wait(args.app_handle, wait_interval=1)
        if final is None:
            raise CliError(f"{args.app_handle} disappeared while it was being cancelled")
        print(f"{args.app_handle}: {final.state}")
    return 0
