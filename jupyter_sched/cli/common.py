"""Helpers shared by the verbs that only a terminal needs: the runner, colours, messages on stderr.

Resolving what a user named (schedulers, handles, replicas, times) lives in the front-end layer
(:mod:`jupyter_sched.frontend.targets`, :mod:`jupyter_sched.frontend.times`), shared with the notebook.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from jupyter_sched.frontend.config import ProjectConfig
from jupyter_sched.runner import Runner, get_runner


def open_runner(config: ProjectConfig) -> Runner:
    return get_runner(component_defaults=config.components)


def use_color(stream: TextIO) -> bool:
    """Colours only on a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
