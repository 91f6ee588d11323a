"""Errors of component lookup, validation and argument parsing.

Ours are ``ValueError`` s whose message is meant for a person at a terminal or in a notebook cell:
it names the component, the flag or parameter at fault, and (for argument errors) ends with the usage.
"""

from __future__ import annotations

from typing import Optional


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


class ComponentHelp(Exception):
    """Raised instead of building an AppDef when the arguments ask for ``--help``; ``text`` is the help."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
