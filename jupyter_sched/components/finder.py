"""Finding components by name, and :func:`materialize`: component name + command-line args -> AppDef.

A name resolves, in this order, to:

1. a component from the entry-point group ``jupyter_sched.components`` (read through
   :mod:`jupyter_sched.util.entrypoints`): an entry point ``name = pkg.mod:fn`` is the component ``name``;
   ``name = pkg.mod`` makes every component of the module and its submodules available as ``name.fn``
   (``name.sub.fn`` for ``pkg.mod.sub``), and as ``fn`` when ``name`` starts with ``_`` (TorchX's rule, so
   ``_ = pkg.mod`` adds components without a prefix). Plugins may override a built-in of the same name;
2. a built-in: ``dist.ddp``, ``dist.spmd``, ``utils.booth``, ``utils.echo``, ``utils.python``, ``utils.sh``,
   ``utils.touch``;
3. ``path/to/file.py:fn`` (a file, relative to the current directory; loaded afresh on every call so edits
   take effect) or ``package.module:fn`` (an importable module).

A component function is a public function whose return annotation is ``AppDef`` (see :mod:`.modules`)."""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import os
import sys
import warnings
from types import ModuleType
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from jupyter_sched.components.builder import Component, build_component
from jupyter_sched.components.errors import ComponentNotFoundError, ComponentValidationError
from jupyter_sched.components.modules import find_in_module, module_components
from jupyter_sched.specs import AppDef
from jupyter_sched.util import entrypoints

GROUP = "jupyter_sched.components"
BUILTIN_PACKAGE = "jupyter_sched.components"


# -- built-ins and plugins --------------------------------------------------------------------------------------
def _builtin_fns() -> Dict[str, Tuple[Callable[..., AppDef], str]]:
    return {name: (fn, "builtin") for name, fn in find_in_module(BUILTIN_PACKAGE).items()}


def _plugin_fns(only: Optional[str] = None) -> Dict[str, Tuple[Callable[..., AppDef], str]]:
    """Components from entry points. With ``only``, just the entry points that could provide that name are
    loaded, and a failure to load one is raised; otherwise a broken plugin is skipped with a warning."""
    out: Dict[str, Tuple[Callable[..., AppDef], str]] = {}
    for ep in entrypoints.select(GROUP):
        origin = f"entry point {ep.name} = {ep.value}"
        prefix = "" if ep.name.startswith("_") else ep.name  # `_...` entries add no prefix (TorchX's rule)
        if only is not None and prefix and only != prefix and not only.startswith(prefix + "."):
            continue
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin must not hide the others
            if only is not None:
                raise ComponentValidationError(f"cannot load component plugin {origin}: {e}") from e
            warnings.warn(f"skipping component plugin {origin}: {e}", stacklevel=2)
            continue
        if isinstance(obj, ModuleType):
            out.update((name, (fn, origin)) for name, fn in find_in_module(obj, prefix).items())
        else:
            out[ep.name] = (obj, origin)
    return out


def list_builtins() -> List[Component]:
    """The built-in components, sorted by name (``.name``, ``.summary``: the docstring's first line)."""
    return [
        build_component(name, fn, origin) for name, (fn, origin) in sorted(_builtin_fns().items())
    ]


def list_components() -> List[Component]:
    """Built-ins and plugin components (a plugin overrides a built-in of the same name), sorted by name.
    Invalid plugin components are skipped with a warning."""
    fns = {**_builtin_fns(), **_plugin_fns()}
    out = []
    for name, (fn, origin) in sorted(fns.items()):
        try:
            out.append(build_component(name, fn, origin))
        except ComponentValidationError as e:
            warnings.warn(f"skipping {name} ({origin}): {e}", stacklevel=2)
    return out


# -- files and modules --------------------------------------------------------------------------------------------
def _load_file(path: str) -> ModuleType:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(full):
        raise ComponentNotFoundError(f"component file {path!r} does not exist (looked at {full})")
    digest = hashlib.sha1(full.encode()).hexdigest()[:12]
    mod_name = f"jupyter_sched_user_component_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, full)
    if spec is None or spec.loader is None:
        raise ComponentNotFoundError(f"component file {path!r} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(mod_name, None)
        raise ComponentValidationError(
            f"component file {path!r} raised while loading: {type(e).__name__}: {e}"
        ) from e
    return module


def _from_location(name: str) -> Component:
    location, _, fn_name = name.rpartition(":")
    if not fn_name:
        raise ComponentNotFoundError(f"{name!r} names no function; write {location}:FUNCTION")
    if location.endswith(".py") or os.sep in location or "/" in location:
        module = _load_file(location)
    else:
        try:
            module = importlib.import_module(location)
        except ImportError as e:
            raise ComponentNotFoundError(
                f"cannot import module {location!r} of component {name!r}: {e}"
            ) from None
    fn = getattr(module, fn_name, None)
    if fn is None:
        found = ", ".join(module_components(module)) or "none"
        raise ComponentNotFoundError(
            f"{location} has no function {fn_name!r}; component functions (annotated -> AppDef) there: {found}"
        )
    return build_component(name, fn, location)


# -- public API -----------------------------------------------------------------------------------------------------
def get_component(name: str) -> Component:
    """The component called ``name`` (see the module docstring for the resolution order).

    Raises ComponentNotFoundError (with close matches and the list of built-ins) or ComponentValidationError
    (the function is not a valid component: the message names the parameter and the fix).
    """
    if not name:
        raise ComponentNotFoundError("no component given; list them with `jupyter-sched builtins`")
    plugins = _plugin_fns(only=name)
    if name in plugins:
        fn, origin = plugins[name]
        return build_component(name, fn, origin)
    builtins = _builtin_fns()
    if name in builtins:
        fn, origin = builtins[name]
        return build_component(name, fn, origin)
    if ":" in name:
        return _from_location(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        known = sorted({**builtins, **_plugin_fns()})
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    if name.endswith(".py"):
        hint += f" For a function in a file, write {name}:FUNCTION."
    raise ComponentNotFoundError(
        f"no component named {name!r}.{hint} Built-in and installed components: {', '.join(known)};"
        " or give path/to/file.py:function"
    )


def materialize(
    component: str,
    args: List[str],
    defaults: Optional[Mapping[str, Any]] = None,
    defaults_origin: Optional[str] = None,
) -> AppDef:
    """The AppDef of ``component`` given command-line style ``args``, e.g.
    ``materialize("utils.sh", ["--num_replicas", "2", "echo", "hi"])``.

    ``defaults`` (flag name -> value; text is parsed like a flag) override the function's defaults and are
    overridden by ``args``; the runner passes the project's ``[tool.jupyter_sched.components."NAME"]`` table,
    and ``defaults_origin`` (e.g. that file and table) is named in errors about the defaults.
    Raises ComponentNotFoundError, ComponentValidationError, ComponentArgError (names the flag, shows the
    usage) or ComponentHelp (``--help`` was asked for; ``.text`` is the help).
    """
    return get_component(component).materialize(list(args), defaults, defaults_origin)
