"""A component function and command-line words -> its AppDef, by TorchX's argument rules.

This is the module path and behaviour TorchX documents for ``materialize_appdef``, for code written
against it. Every parameter is ``--name VALUE`` (a one-letter one also ``-n VALUE``); a ``bool`` takes
``True``/``False`` as text; a ``List``/``Dict`` takes comma-separated text (parsed as our components'
flags are: ``A=1,B=2``); ``*args`` takes every remaining word (a leading ``--``
is dropped); ``cmpnt_defaults`` override the function's defaults and may be objects rather than text
(passed through as they are, e.g. a nested ``Dict[str, List[str]]``). Parsing is stdlib ``argparse``, as in
TorchX, so a missing required flag prints the usage and exits. The ``jupyter-sched`` CLI and magics use
the friendlier parser of :mod:`jupyter_sched.components.builder` (``--flag`` alone for true, errors that
name the flag without exiting).
"""

from __future__ import annotations

import argparse
import inspect
import typing
from typing import Any, Callable, Dict, List, Optional

from jupyter_sched.specs.file_linter import TorchXArgumentHelpFormatter, get_fn_docstring
from jupyter_sched.specs.request.app import AppDef
from jupyter_sched.specs.request.mounts import BindMount, DeviceMount, MountType, VolumeMount, parse_mounts
from jupyter_sched.specs.status.handles import make_app_handle

__all__ = [
    "BindMount", "DeviceMount", "MountType", "VolumeMount",  # what parse_mounts returns, importable from here
    "create_args_parser", "make_app_handle", "materialize_appdef", "parse_args", "parse_mounts",
]  # fmt: skip

_SCALARS = (int, str, float)


def _parameters(fn: Callable[..., Any]) -> Any:
    """``fn``'s parameters with their annotations evaluated (a module with ``from __future__ import
    annotations`` has them as text), or as written if they cannot be."""
    try:
        return inspect.signature(fn, eval_str=True).parameters
    except (NameError, TypeError, SyntaxError):
        return inspect.signature(fn).parameters


def _unwrap_optional(annotation: Any) -> Any:
    args = getattr(annotation, "__args__", None)
    if args and type(None) in args and len(args) == 2:
        return next(a for a in args if a is not type(None))
    return annotation


class _Remainder(argparse.Action):
    """``*args``: the words given, or the default (text split on spaces) when none are."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Optional[str] = None) -> None:
        words = list(values) if values else str(self.default or "").split()
        setattr(namespace, self.dest, words)


def create_args_parser(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> argparse.ArgumentParser:
    """The ``argparse`` parser of ``cmpnt_fn``'s parameters, its help from the docstring."""
    description, helps = get_fn_docstring(cmpnt_fn)
    parser = argparse.ArgumentParser(
        prog=f"jupyter-sched run <run args...> {cmpnt_fn.__name__} ",
        description=description,
        formatter_class=TorchXArgumentHelpFormatter,
        add_help=False,
    )
    parser.add_argument("--help", action="help", default=argparse.SUPPRESS, help="show this help message and exit")
    for name, param in _parameters(cmpnt_fn).items():
        annotation = _unwrap_optional(param.annotation)
        kwargs: Dict[str, Any] = {"help": helps.get(name, " "), "type": annotation if annotation in _SCALARS else str}
        if param.default is not inspect.Parameter.empty:
            kwargs["default"] = str(param.default) if isinstance(param.default, bool) else param.default
        if cmpnt_defaults and name in cmpnt_defaults:
            kwargs["default"] = cmpnt_defaults[name]
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            parser.add_argument(name, nargs=argparse.REMAINDER, action=_Remainder, **kwargs)
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{cmpnt_fn.__name__}: **{name} cannot be a flag; declare each parameter")
        if "default" not in kwargs and not (config and name in config):
            kwargs["required"] = True
        flags = ([f"-{name}"] if len(name) == 1 else []) + [f"--{name}"]
        parser.add_argument(*flags, **kwargs)
    return parser


def parse_args(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: List[str],
    cmpnt_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> argparse.Namespace:
    """``cmpnt_args`` parsed against ``cmpnt_fn``'s flags; ``config`` values win over everything."""
    parsed = create_args_parser(cmpnt_fn, cmpnt_defaults, config).parse_args(cmpnt_args)
    for key, value in (config or {}).items():
        if key in parsed:
            setattr(parsed, key, value)
    return parsed


def _decode(value: Any, annotation: Any) -> Any:
    if value is None or not isinstance(value, str):
        return value
    annotation = _unwrap_optional(annotation)
    if annotation is bool:
        return value.lower() == "true"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(args) == 1 and args[0] in _SCALARS:
        return [args[0](part.strip()) for part in value.split(",") if part.strip()] if value else None
    if origin is dict and len(args) == 2 and args[0] in _SCALARS and args[1] in _SCALARS:
        return {args[0](k): args[1](v) for k, v in _pairs(value).items()} if value else None
    return value


def _pairs(text: str) -> Dict[str, str]:
    """``A=1,B=2`` -> ``{"A": "1", "B": "2"}``; a piece without ``=`` continues the previous value
    (``P=/a,/b,N=1`` -> ``{"P": "/a,/b", "N": "1"}``), as our components' dict flags read it."""
    out: Dict[str, str] = {}
    key = None
    for piece in text.split(","):
        if "=" in piece:
            key, _, val = piece.partition("=")
            key = key.strip()
            out[key] = val.strip()
        elif key is not None:
            out[key] += "," + piece.strip()
        elif piece.strip():
            raise ValueError(f"{text!r}: {piece!r} is not KEY=VALUE; write e.g. A=1,B=2")
    return out


def materialize_appdef(
    cmpnt_fn: Callable[..., AppDef],
    cmpnt_args: List[str],
    cmpnt_defaults: Optional[Dict[str, Any]] = None,
    config: Optional[Dict[str, Any]] = None,
) -> AppDef:
    """Calls ``cmpnt_fn`` with the values ``cmpnt_args`` give (see the module docstring for the rules)."""
    parsed = parse_args(cmpnt_fn, cmpnt_args, cmpnt_defaults, config)
    positional: List[Any] = []
    varargs: List[Any] = []
    keywords: Dict[str, Any] = {}
    for name, param in _parameters(cmpnt_fn).items():
        value = getattr(parsed, name)
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            varargs = list(value or [])
            if varargs[:1] == ["--"]:
                varargs = varargs[1:]
        elif param.kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[name] = _decode(value, param.annotation)
        else:
            positional.append(_decode(value, param.annotation))
    return cmpnt_fn(*positional, *varargs, **keywords)
