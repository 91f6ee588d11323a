"""``jupyter-sched builtins [--print NAME]``: the components you can run, with their first docstring line."""

from __future__ import annotations

import argparse
import inspect
import json

from jupyter_sched.components import get_component, list_components
from jupyter_sched.frontend.launch.config import ProjectConfig


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    if args.print_name:
        print(inspect.getsource(get_component(args.print_name).fn))
        return 0
    components = list_components()
    if args.json:
        rows = [{"name": c.name, "summary": c.summary, "origin": c.origin} for c in components]
        print(json.dumps(rows, indent=2))
        return 0
    builtins = [c for c in components if c.origin == "builtin"]
    plugins = [c for c in components if c.origin != "builtin"]
    width = max((len(c.name) for c in components), default=0)
    print(f"Found {len(builtins)} builtin components:")
    for i, comp in enumerate(builtins, 1):
        print(f"{i:3}. {comp.name.ljust(width)}  {comp.summary}")
    if plugins:
        print(
            f"\nFound {len(plugins)} installed components (entry points jupyter_sched.components):"
        )
        for i, comp in enumerate(plugins, 1):
            print(f"{i:3}. {comp.name.ljust(width)}  {comp.summary}  [{comp.origin}]")
    print(
        "\nRun one with `jupyter-sched run NAME [flags]`; see its flags with `jupyter-sched run NAME --help`."
    )
    return 0
