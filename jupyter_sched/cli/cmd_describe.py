"""``jupyter-sched describe APP_HANDLE [--json]``: the AppDef of an app, as far as its scheduler knows it."""

from __future__ import annotations

import argparse

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError
from jupyter_sched.cli.render import render, to_json
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    with common.open_runner(config) as runner:
        targets.require_status(runner, handle)
        app = runner.describe(handle)
    if app is None:
        raise CliError(f"no app {handle}: it ended and its records were removed")
    print(to_json(app) if args.json else render(app))
    return 0
