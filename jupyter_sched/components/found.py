"""The component finder as TorchX's ``torchx.specs.finder`` describes it: :class:`FoundComponent`, the finder
classes and the functions TorchX documents, over our finder (:mod:`jupyter_sched.components.finder`).

``jupyter_sched.specs.finder`` (TorchX's module path) re-exports these names; they live here, with the
component library they read, so the data model keeps no dependency on it.
"""

from __future__ import annotations

import abc
import ast
import inspect
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Dict, List, Union

from jupyter_sched.components.builder import build_component
from jupyter_sched.components.errors import ComponentValidationError
from jupyter_sched.components.finder import get_component as find
from jupyter_sched.components.finder import list_components
from jupyter_sched.components.modules import as_module, find_in_module
from jupyter_sched.specs.file_linter import no_docstring_description

__all__ = [
    "ComponentsFinder", "CustomComponentsFinder", "FoundComponent", "ModuleComponentsFinder", "get_builtin_source",
    "get_component", "get_components", "module_relname",
]  # fmt: skip


@dataclass
class FoundComponent:
    """A component as TorchX's finder describes one: its name, description (the docstring's text, or a
    tip on writing one), function and its name, and the problems that keep it from being used
    (empty: it is valid; :func:`get_component` raises for an invalid one, :meth:`ComponentsFinder.find`
    lists it with its problems)."""

    name: str
    description: str
    fn_name: str
    fn: Callable[..., Any]
    validation_errors: List[str] = field(default_factory=list)


def _description(description: str, fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", "component")
    return description or no_docstring_description(name)


def _found(component: Any) -> FoundComponent:
    fn = component.fn
    return FoundComponent(component.name, _description(component.description, fn), fn.__name__, fn)


def get_component(name: str) -> FoundComponent:
    """The component called ``name``: ``utils.echo``, an installed one, or ``path/file.py:fn``.

    Raises :class:`ComponentNotFoundException` if there is none and :class:`ComponentValidationException`
    if the function is not a valid component.
    """
    return _found(find(name))


class ComponentsFinder(abc.ABC):
    """Something that finds components (TorchX's base class for its finders)."""

    @abc.abstractmethod
    def find(self) -> List[FoundComponent]:
        """The components found."""


class CustomComponentsFinder(ComponentsFinder):
    """Finds the component ``function_name`` in the Python file ``filepath`` (``path/file.py:fn``)."""

    def __init__(self, filepath: str, function_name: str) -> None:
        self._filepath = filepath
        self._function_name = function_name

    def find(self) -> List[FoundComponent]:
        """A one-element list; raises :class:`ComponentNotFoundException` when the file or function is
        missing and :class:`ComponentValidationException` when the function is not a valid component."""
        return [get_component(f"{self._filepath}:{self._function_name}")]


class ModuleComponentsFinder(ComponentsFinder):
    """Finds the components of a module, or of a package and its submodules (recursively), named as
    TorchX names them: ``GROUP.SUBMODULE.FUNCTION``, where ``SUBMODULE`` is the module's path below
    ``module`` and an empty ``group`` is left out. ``ModuleComponentsFinder("jupyter_sched.components",
    "")`` finds the built-ins (``dist.ddp``, ``utils.echo``...); for a file ``pkg/sub/mod.py`` defining
    ``echo``, ``("pkg.sub", "")`` finds ``mod.echo``, ``("pkg.sub", "my")`` ``my.mod.echo`` and
    ``("pkg.sub.mod", "my_echo")`` ``my_echo.echo``.

    ``module`` is a module or its dotted name (imported now). A component is a public function annotated
    ``-> AppDef`` in a public submodule (see :mod:`jupyter_sched.components.modules`); one that is not
    valid is listed with its ``validation_errors``.
    """

    def __init__(self, module: Union[str, ModuleType], group: str) -> None:
        self.base_module: ModuleType = as_module(module)
        self.group = group

    def find(self) -> List[FoundComponent]:
        """The components found, sorted by name."""
        out = []
        for name, fn in sorted(find_in_module(self.base_module, self.group).items()):
            try:
                out.append(_found(build_component(name, fn, self.base_module.__name__)))
            except ComponentValidationError as e:
                doc = (inspect.getdoc(fn) or "").split("\n\n")[0].strip()
                out.append(FoundComponent(name, _description(doc, fn), fn.__name__, fn, [str(e)]))
        return out


def get_components() -> Dict[str, FoundComponent]:
    """Every built-in and installed component, by name."""
    return {c.name: _found(c) for c in list_components()}


def module_relname(module: ModuleType, relative_to: ModuleType) -> str:
    """``module``'s dotted name below ``relative_to`` (``""`` for the module itself); ValueError if it is
    not below it."""
    name, base = module.__name__, relative_to.__name__
    if name == base:
        return ""
    if not name.startswith(base + "."):
        raise ValueError(f"`{name}` is not a submodule of `{base}`")
    return name[len(base) + 1 :]


def get_builtin_source(name: str) -> str:
    """The source of component ``name`` as a file of its own: its module's imports, then the function
    (with its decorators). Save it, edit it, and run it as ``path/file.py:function``."""
    fn = get_component(name).fn
    fn = inspect.unwrap(fn)
    path = inspect.getsourcefile(fn)
    if path is None:
        raise ValueError(f"the source of component {name!r} is not available")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    imports = [
        "".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__"
    ]
    return "".join(imports) + "\n\n" + inspect.getsource(fn)
