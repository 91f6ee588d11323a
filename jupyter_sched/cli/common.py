"""Helpers shared by the verbs that only a terminal needs: the runner, colours, messages on stderr.

Every message the command line writes goes through :func:`message` (the one masking rule, then names made
harmless to a terminal), and every name it shows through :func:`shown`: app and role names are user
text, and an ``ESC ] 0;...`` in one must not retitle the user's window (see
:mod:`jupyter_sched.logs.control_strings`).

Resolving what a user named (schedulers, handles, replicas, times) lives in the front-end layer
(:mod:`jupyter_sched.frontend.targets`, :mod:`jupyter_sched.frontend.times`), shared with the notebook.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from jupyter_sched.logs.control_strings import escape_controls

if TYPE_CHECKING:
    from jupyter_sched.frontend.launch.config import ProjectConfig
    from jupyter_sched.runner import Runner

LINES = "\n\t"
"""What :func:`shown` keeps of the controls in text of several lines."""


def open_runner(config: ProjectConfig) -> Runner:
    """The verb's runner. The runner (and with it the specs and the scheduler registry) is imported here, by
    the verbs that use one: ``--help`` and a usage error print through this module without it."""
    from jupyter_sched.runner import get_runner

    return get_runner(component_defaults=config.components)


def use_color(stream: TextIO) -> bool:
    """Colours only on a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def shown(text: str, keep: str = "") -> str:
    """Untrusted text (a name, or output that quotes names) as the terminal may show it: every control
    character but those in ``keep`` (:data:`LINES` for text of several lines) written as a visible escape."""
    return escape_controls(str(text), keep)


def message(text: str) -> str:
    """A message of the command line as it is written: secrets masked by the one rule, controls escaped."""
    from jupyter_sched.specs.output.masking import mask_out

    return shown(str(mask_out(str(text))), LINES)


def err(text: str) -> None:
    print(message(text), file=sys.stderr, flush=True)
