"""Loading setuptools entry points by group (TorchX's ``torchx.util.entrypoints`` contract).

Everything here reads entry points through ``metadata.entry_points()`` (the standard library's
:mod:`importlib.metadata`), looked up at call time, so the component finder, which goes through this
module, sees exactly the plugins these functions see. Loading is deferred: :func:`load_group` returns a
function per entry point, and nothing is imported until it is called.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any, Callable, Dict, Optional

__all__ = ["load", "load_group", "select"]


def select(group: str) -> "metadata.EntryPoints":
    """The entry points of ``group`` (empty if there are none)."""
    return metadata.entry_points().select(group=group)


def load(group: str, name: str, default: Any = None) -> Any:
    """The object entry point ``name`` of ``group`` refers to (a function, a class or a module).

    If there is no such entry point, ``default`` is returned when given, and KeyError (naming ``name``)
    is raised otherwise. Import errors of the entry point itself propagate.
    """
    eps = select(group)
    if name not in eps.names:
        if default is not None:
            return default
        raise KeyError(f"no entry point {name!r} in group {group!r}")
    return eps[name].load()


def load_group(
    group: str, default: Optional[Dict[str, Any]] = None
) -> Optional[Dict[str, Callable[..., Any]]]:
    """The entry points of ``group`` as ``name -> deferred loader``, or ``default`` if the group is empty.

    Calling the loader of ``name = pkg.mod:fn`` imports ``fn`` and calls it with the loader's arguments;
    calling the loader of ``name = pkg.mod`` imports and returns the module (arguments are ignored).
    """
    eps = select(group)
    if len(eps) == 0:
        return default
    return {ep.name: _deferred(ep) for ep in eps}


def _deferred(ep: "metadata.EntryPoint") -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        obj = ep.load()
        return obj if ep.attr is None else obj(*args, **kwargs)

    run.__name__ = f"load_{ep.name}"
    run.__doc__ = f"Loads entry point {ep.name} = {ep.value}."
    return run
