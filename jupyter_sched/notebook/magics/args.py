"""Argument handling of the magics: the notebook's own switches of ``%sched_run``, shell-like splitting,
replica lists and times, on top of the front-end layer that the command line uses too.

``%sched_run`` parses exactly like ``jupyter-sched run``: the line is split by the same splitter, built from
the same table of run options (:mod:`jupyter_sched.frontend.launch.run_options`). The notebook adds a few switches,
accepted only among the leading run options (before the component name): ``--quiet``, ``--detach`` (the local
run option ``outlive_owner=true``), ``--no-wait``, and ``--python`` for the cell magic. An argument of the
component spelled ``--quiet`` still reaches it.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import List, Optional, Sequence, Tuple

from jupyter_sched.frontend import targets, times
from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.launch.run_options import RunLine, RunOption
from jupyter_sched.frontend.launch.run_options import split_run_line as split_options

ArgsError = UsageError
"""Bad arguments; the message includes the usage. The magics turn it into IPython's ``UsageError``."""

NOTEBOOK_OPTIONS: Tuple[RunOption, ...] = (
    RunOption(("--quiet", "-q"), "quiet", "no live view"),
    RunOption(("--detach",), "detach", "local: the replicas outlive the kernel (--cfg outlive_owner=true)"),
    RunOption(("--no-wait",), "no_wait", "return at once (overrides SchedMagics.wait)"),
    RunOption(("--python",), "python", "%%sched_run: run the cell with Python (default: sh)"),
)


def split_line(line: str) -> List[str]:
    """Shell-like split of a magic line (quotes group, backslashes escape): the argv the CLI would get."""
    try:
        return shlex.split(line, posix=True)
    except ValueError as e:
        raise ArgsError(f"cannot split the arguments ({e}); check the quotes") from None


def split_run_line(argv: Sequence[str], allowed: Sequence[str], prog: str = "%sched_run") -> RunLine:
    """The leading run options and the notebook switches among them (only those in ``allowed``); the rest
    starts at the first other token: the component, ``--``, or an unknown option (reported when parsed).
    ``prog`` (``%sched_run``, ``%%sched_run``) names the magic in messages and its usage, which lists the
    switches it takes."""
    line = split_options(argv, NOTEBOOK_OPTIONS, prog)
    line.extra = tuple(opt for opt in NOTEBOOK_OPTIONS if opt.dest in allowed)
    for dest in line.flags:
        if dest not in allowed:
            flag = next(opt.flags[0] for opt in NOTEBOOK_OPTIONS if opt.dest == dest)
            raise ArgsError(f"{prog}: {flag} is not an option of this magic\n{line.usage()}")
    return line


def parse_replicas(text: Optional[str]) -> Optional[List[int]]:
    """``0,2,3`` or ``0-3`` (or a mix) as a sorted list; None for None."""
    return targets.parse_replica_list(text)


def parse_time(text: Optional[str], flag: str) -> Optional[datetime]:
    """The command line's time syntax (ISO date-time, or an age: 30s, 5m, 2h, 1d); None for None."""
    return None if text is None else times.parse_time(text, flag)
