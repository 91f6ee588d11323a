"""``jupyter-sched runopts [SCHEDULER]``: the run options (``--cfg``) each scheduler accepts."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict

from jupyter_sched.cli import common
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.specs.output.masking import mask_out


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    names = (
        [targets.check_scheduler(args.scheduler, "runopts")]
        if args.scheduler
        else targets.scheduler_names()
    )
    color = common.use_color(sys.stdout) and not args.json
    status = 0
    data: Dict[str, Any] = {}
    with common.open_runner(config) as runner:
        for name in names:
            title = f"\033[32m{name}\033[0m:" if color else f"{name}:"
            try:
                opts = runner.scheduler_run_opts(name)
            except Exception as e:  # noqa: BLE001 - e.g. a backend whose dependency is missing
                why = mask_out(f"{type(e).__name__}: {e}")  # a backend's text: it may quote a secret
                data[name] = {"unavailable": why}
                if not args.json:
                    print(f"{title}\n    unavailable: {common.message(why)}\n")
                status = 1 if args.scheduler else status
                continue
            data[name] = {key: _option(opt) for key, opt in opts}
            if not args.json:
                print(f"{title}\n{opts!r}")
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    return status


def _option(opt: Any) -> Dict[str, Any]:
    kind = getattr(opt.opt_type, "__name__", None) or str(opt.opt_type).replace("typing.", "")
    return {"type": kind, "default": opt.default, "required": opt.is_required, "help": opt.help}
