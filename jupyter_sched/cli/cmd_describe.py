"""``jupyter-sched describe APP_HANDLE [--json]``: the AppDef of an app, as far as its scheduler knows it,
and what its replicas told TorchX's tracker API (``app_run_from_env().add_metadata(...)``, ``add_artifact``,
``add_source``): a ``tracker`` list of runs after the AppDef's fields, in the text and in the JSON, when
there is any (``jupyter_sched.frontend.jobs.tracked``)."""

from __future__ import annotations

import argparse

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError
from jupyter_sched.cli.render import render, to_json, to_plain
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.jobs.tracked import read_tracked
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    with common.open_runner(config) as runner:
        targets.require_status(runner, handle)
        app = runner.describe(handle)
        tracked = [run.to_json() for run in read_tracked(runner.metrics_dir(handle), handle)]
    if app is None:
        raise CliError(f"no app {handle}: it ended and its records were removed")
    if not tracked:
        print(to_json(app) if args.json else render(app))
    elif args.json:
        print(to_json({**to_plain(app), "tracker": tracked}))
    else:
        print(render(app) + "\n" + render({"tracker": tracked}))
    return 0
