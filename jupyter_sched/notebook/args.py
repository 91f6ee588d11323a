"""Argument handling of the magics: ``%sched_run`` on top of the CLI's own parser, replica lists, times.

``%sched_run`` parses exactly like ``jupyter-sched run``: the line goes to the CLI's ``parse_run_args``.
The notebook adds a few flags, accepted only among the leading run options (before the component name):
``--quiet``, ``--detach`` (the local run option ``outlive_owner=true``), ``--no-wait``, and ``--python`` for
the cell magic. They are taken out by walking the leading options with the CLI parser's own knowledge of
which options take a value, so an argument of the component spelled ``--quiet`` still reaches it.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

NOTEBOOK_FLAGS: Dict[str, str] = {
    "--quiet": "quiet",
    "-q": "quiet",
    "--detach": "detach",
    "--no-wait": "no_wait",
    "--python": "python",
}


class ArgsError(ValueError):
    """Bad arguments; the message includes the usage. The magics turn it into ``UsageError``."""


@dataclass
class RunLine:
    """A ``%sched_run`` line split up: the leading run options, the rest (component and its arguments, or
    whatever the CLI parser should complain about), and the notebook flags found among the options."""

    run_options: List[str]
    rest: List[str]
    flags: Dict[str, bool] = field(default_factory=dict)

    def flag(self, name: str) -> bool:
        return bool(self.flags.get(name))

    @property
    def gives_scheduler(self) -> bool:
        return any(t in ("-s", "--scheduler") or t.startswith("--scheduler=") or
                   (t.startswith("-s") and not t.startswith("--")) for t in self.run_options)  # fmt: skip

    def cfg_texts(self) -> List[str]:
        """The ``--cfg`` values as given (in order; later ones win)."""
        from jupyter_sched.cli.cmd_run import build_run_parser

        try:
            return list(build_run_parser().parse_args(self.run_options).cfg)
        except Exception as e:  # noqa: BLE001 - CliUsageError/CliExit: parse_run_args reports it better
            raise ArgsError(str(e)) from None


def split_line(line: str) -> List[str]:
    """Shell-like split of a magic line (quotes group, backslashes escape): the argv the CLI would get."""
    try:
        return shlex.split(line, posix=True)
    except ValueError as e:
        raise ArgsError(f"cannot split the arguments ({e}); check the quotes") from None


def _run_options() -> Dict[str, bool]:
    """Option strings of the CLI ``run`` parser -> whether the option takes a value."""
    from jupyter_sched.cli.cmd_run import build_run_parser

    out: Dict[str, bool] = {}
    for action in build_run_parser()._actions:  # argparse has no public listing of its actions
        for option in action.option_strings:
            out[option] = action.nargs != 0
    return out


def split_run_line(argv: Sequence[str], allowed: Sequence[str]) -> RunLine:
    """Takes the leading run options (and their values) and the allowed notebook flags; the rest starts
    at the first other token: the component, ``--``, or an unknown option for the CLI parser to report."""
    options = _run_options()
    run_options: List[str] = []
    flags: Dict[str, bool] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if token in NOTEBOOK_FLAGS and token not in options:
            if NOTEBOOK_FLAGS[token] not in allowed:
                raise ArgsError(f"{token} is not an option of this magic")
            flags[NOTEBOOK_FLAGS[token]] = True
        elif name in options:
            run_options.append(token)
            if options[name] and "=" not in token and i + 1 < len(argv):
                run_options.append(argv[i + 1])
                i += 1
        elif token.startswith("-s") and not token.startswith("--") and len(token) > 2:
            run_options.append(token)  # -sSCHEDULER
        else:
            break
        i += 1
    return RunLine(run_options, list(argv[i:]), flags)


def parse_replicas(text: Optional[str]) -> Optional[List[int]]:
    """``0,2,3`` or ``0-3`` (or a mix) as a sorted list; None for None.

    An empty selection (``-r ,``, a reversed range ``3-1``) is an error, not an empty list: it would
    silently show no logs at all."""
    if text is None:
        return None
    out: set = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            lo, hi = (int(x) for x in part.split("-", 1)) if "-" in part else (int(part), int(part))
        except ValueError:
            raise ArgsError(f"--replicas {text!r}: use replica numbers like 0,1 or 0-3") from None
        if lo > hi:
            raise ArgsError(f"--replicas {text!r}: the range {part} is empty; write {hi}-{lo}")
        out.update(range(lo, hi + 1))
    if not out:
        raise ArgsError(f"--replicas {text!r}: use replica numbers like 0,1 or 0-3")
    return sorted(out)


def parse_time(text: Optional[str], flag: str) -> Any:
    """The CLI's time syntax (ISO date-time, or an age: 30s, 5m, 2h, 1d); None for None."""
    if text is None:
        return None
    from jupyter_sched.cli.common import parse_time as cli_parse_time

    try:
        return cli_parse_time(text, flag)
    except ValueError as e:
        raise ArgsError(str(e)) from None


class MagicArgParser(argparse.ArgumentParser):
    """An argparse parser for the smaller magics that raises ArgsError (message + usage), never exits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("add_help", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        raise ArgsError(f"{self.prog}: {message}\n{self.format_usage().rstrip()}")

    def parse(self, line: str) -> argparse.Namespace:
        return self.parse_args(split_line(line))
