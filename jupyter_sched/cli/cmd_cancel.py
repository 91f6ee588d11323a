"""``jupyter-sched cancel APP_HANDLE [--wait]``: stop an app (SIGTERM, then SIGKILL after the grace period)."""

from __future__ import annotations

import argparse

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    with common.open_runner(config) as runner:
        status = targets.require_status(runner, handle)
        if status.is_terminal():
            print(f"{handle} already ended ({status.state}); nothing to cancel")
            return 0
        runner.cancel(handle)
        if not args.wait:
            print(f"cancelling {handle}")
            return 0
        final = runner.wait(handle, wait_interval=1)
        if final is None:
            raise CliError(f"{handle} disappeared while it was being cancelled")
        print(f"{handle}: {final.state}")
    return 0
