"""Errors of component lookup, validation and argument parsing.

Ours are ``ValueError`` s whose message is meant for a person at a terminal or in a notebook cell:
it names the component, the flag or parameter at fault, and (for argument errors) ends with the usage.
"""

from __future__ import annotations

import shlex
from typing import List, Optional, Sequence


class ComponentNotFoundException(Exception):
    """No component of that name; the message lists close matches and where components come from.

    TorchX's name (``torchx.specs.finder``, which re-exports it): the base class TorchX code catches."""


class ComponentValidationException(Exception):
    """The function found is not a valid component (the message names the parameter and the fix).

    TorchX's name (``torchx.specs.finder``, which re-exports it)."""


class ComponentError(ValueError):
    """Base class: a component that cannot be found, is not valid, or got bad arguments."""


class ComponentNotFoundError(ComponentError, ComponentNotFoundException):
    """No component of that name (the message lists close matches and where to look)."""


class ComponentValidationError(ComponentError, ComponentValidationException):
    """The function is not a valid component (an untyped parameter, an unsupported type, no AppDef)."""


class ComponentArgError(ComponentError):
    """A missing, unknown, repeated or mistyped flag. ``flag`` names it (None when the component itself
    rejected the combination of values); ``usage`` is the component's usage line."""

    def __init__(
        self, component: str, problem: str, usage: str, flag: Optional[str] = None
    ) -> None:
        self.component = component
        self.problem = problem
        self.usage = usage
        self.flag = flag
        super().__init__(f"{component}: {problem}\n{usage}")


class MisplacedFlagError(ComponentArgError):
    """A flag of the component came after the first of its ``*args`` words, where TorchX's rule passes every
    word on to ``*args``: most likely meant for the component, so it is refused rather than passed on.
    ``meant`` is the argument list with the flags moved before the ``*args``; ``escaped`` passes the words
    on as written (a ``--`` ends the flags). :meth:`explain` renders both as whole command lines."""

    def __init__(self, component: str, flags: Sequence[str], after: str, args_help: str, usage: str,
                 meant: List[str], escaped: List[str]) -> None:  # fmt: skip
        self.flags = list(flags)
        self.after = after
        self.args_help = args_help
        self.meant = list(meant)
        self.escaped = list(escaped)
        self.component = component
        super().__init__(component, self._problem([component]), usage, self.flags[0])

    def _problem(self, prefix: Sequence[str]) -> str:
        names = " and ".join(self.flags)
        verb = "are flags" if len(self.flags) > 1 else "is a flag"
        return (
            f"{names} {verb} of {self.component}, but here {'they come' if len(self.flags) > 1 else 'it comes'}"
            f" after {self.after}, from where every word is passed on as {self.args_help}. Meant for"
            f" {self.component}? Put {'them' if len(self.flags) > 1 else 'it'} first:\n"
            f"    {shlex.join([*prefix, *self.meant])}\n"
            f"or, to pass {'them' if len(self.flags) > 1 else 'it'} on as written, end the flags with --:\n"
            f"    {shlex.join([*prefix, *self.escaped])}"
        )

    def explain(self, prefix: Sequence[str]) -> str:
        """The problem with both lines spelled as ``prefix`` (e.g. ``jupyter-sched run -s slurm utils.sh``)
        followed by the component's arguments."""
        return self._problem(prefix)


class ComponentHelp(Exception):
    """Raised instead of building an AppDef when the arguments ask for ``--help``; ``text`` is the help."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
