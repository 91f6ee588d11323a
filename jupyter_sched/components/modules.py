"""Which functions of a module, or of a package and its submodules, are components, and their names.

A component function is a public function whose return annotation is ``AppDef``, defined in the module
that is searched (imports of it elsewhere are not listed twice). A package is searched with its public
submodules, recursively (a submodule whose name starts with ``_`` is private and skipped); a package that
sets ``__component_modules__`` (a tuple of submodule names) is searched in those submodules only, which is
how :mod:`jupyter_sched.components` keeps its machinery (``finder.materialize``...) out of the list.
A namespace package (no ``__init__.py``) is searched when given, but not found as a submodule (Python's
``pkgutil`` does not list those): map such a package as an entry point of its own.

Names follow TorchX: a component is ``GROUP.SUBMODULE.FUNCTION`` where ``SUBMODULE`` is its module's path
below the searched one (empty for the module itself) and an empty ``GROUP`` is left out.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from types import ModuleType
from typing import Any, Callable, Dict, Iterator, Union

from jupyter_sched.specs import AppDef


def is_namespace_package(module: ModuleType) -> bool:
    """Whether ``module`` is a namespace package (a directory without ``__init__.py``: it has no file)."""
    return getattr(module, "__file__", None) is None


def is_package(module: ModuleType) -> bool:
    """Whether ``module`` is a package, regular or namespace (it has a ``__path__``), rather than a module
    of one file; :func:`is_namespace_package` tells the two kinds of package apart."""
    return hasattr(module, "__path__")


def _is_component_fn(fn: Any, module: ModuleType) -> bool:
    if (
        not inspect.isfunction(fn)
        or fn.__module__ != module.__name__
        or fn.__name__.startswith("_")
    ):
        return False
    try:
        return typing.get_type_hints(fn).get("return") is AppDef
    except Exception:  # noqa: BLE001 - unresolvable hints: not listed (get_component reports the error)
        return fn.__annotations__.get("return") in ("AppDef", "specs.AppDef")


def module_components(module: ModuleType) -> Dict[str, Callable[..., AppDef]]:
    """The component functions a module defines (public functions annotated ``-> AppDef``), by name."""
    return {name: fn for name, fn in sorted(vars(module).items()) if _is_component_fn(fn, module)}


def as_module(module: Union[str, ModuleType]) -> ModuleType:
    """``module`` itself, or the module of that dotted name, imported."""
    return importlib.import_module(module) if isinstance(module, str) else module


def iter_modules(module: Union[str, ModuleType]) -> Iterator[ModuleType]:
    """``module`` (unless it is a namespace package) and its submodules, recursively, importing them."""
    module = as_module(module)
    if not is_namespace_package(module):
        yield module
    if not is_package(module):
        return
    listed = getattr(module, "__component_modules__", None)
    for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
        if (listed is None and info.name.startswith("_")) or (listed is not None and info.name not in listed):
            continue
        yield from iter_modules(f"{module.__name__}.{info.name}")


def find_in_module(module: Union[str, ModuleType], group: str = "") -> Dict[str, Callable[..., AppDef]]:
    """The component functions in ``module`` and its submodules, by component name (see the module doc)."""
    base = as_module(module)
    out: Dict[str, Callable[..., AppDef]] = {}
    for mod in iter_modules(base):
        rel = mod.__name__[len(base.__name__) + 1 :] if mod is not base else ""
        for fn_name, fn in module_components(mod).items():
            out[".".join(part for part in (group, rel, fn_name) if part)] = fn
    return out
