"""Finding components by name, under TorchX's module path (``torchx.specs.finder``).

The finding itself is :mod:`jupyter_sched.components.finder` (built-ins, the ``jupyter_sched.components``
entry-point group, ``path/file.py:fn`` and ``module.path:fn``); this module gives it the names TorchX
documents. It is imported lazily, so the data model keeps no dependency on the component library.
:class:`ComponentNotFoundException` is the error TorchX code catches; ours
(``components.errors.ComponentNotFoundError``) is a subclass of it and of ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List

__all__ = [
    "ComponentNotFoundException", "ComponentValidationException", "FoundComponent", "get_component",
    "get_components",
]  # fmt: skip


@dataclass
class FoundComponent:
    """A component as TorchX's finder describes one: its name, description, function and its name, and
    the problems that keep it from being used (empty: it is valid; an invalid one raises instead)."""

    name: str
    description: str
    fn_name: str
    fn: Callable[..., Any]
    validation_errors: List[str] = field(default_factory=list)


class ComponentNotFoundException(Exception):
    """No component of that name; the message lists close matches and where components come from."""


class ComponentValidationException(Exception):
    """The function found is not a valid component (the message names the parameter and the fix)."""


def _found(component: Any) -> FoundComponent:
    return FoundComponent(component.name, component.description, component.fn.__name__, component.fn)


def get_component(name: str) -> FoundComponent:
    """The component called ``name``: ``utils.echo``, an installed one, or ``path/file.py:fn``.

    Raises :class:`ComponentNotFoundException` if there is none and :class:`ComponentValidationException`
    if the function is not a valid component.
    """
    from jupyter_sched.components.finder import get_component as find

    return _found(find(name))


def get_components() -> Dict[str, FoundComponent]:
    """Every built-in and installed component, by name."""
    from jupyter_sched.components.finder import list_components

    return {c.name: _found(c) for c in list_components()}
