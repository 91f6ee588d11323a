"""A function's call from a magic line: ``train --lr 0.1 --epochs 3 data.csv`` -> ``train("data.csv",
lr=0.1, epochs=3)``, plus the job's own options.

Values are converted by the parameter's annotation (``int``, ``float``, ``bool``, ``str``), else by the
type of its default, else read as a Python literal (``[1, 2]``, ``None``, ``'x'``) and kept as text if
they are not one. ``--flag`` alone is ``True`` for a ``bool`` parameter. The job's options use the
spellings of the built-in components' shared flags: ``--num_replicas``, ``--image``, ``--h`` (a named
resource) and ``--name``; a function parameter of the same name wins (pass the job option through
``jupyter_sched.submit`` then). Unknown flags are refused naming the function's parameters.
"""

from __future__ import annotations

import ast
import inspect
import typing
from typing import Any, Callable, Dict, List, Tuple

JOB_OPTIONS = {"num_replicas": int, "image": str, "h": str, "name": str}
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def parse_call(
    fn: Callable[..., Any], tokens: List[str], label: str = ""
) -> Tuple[List[Any], Dict[str, Any], Dict[str, Any]]:
    """``(args, kwargs, job options)``; ValueError naming the flag and the fix."""
    label = label or getattr(fn, "__name__", "function")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    params = dict(sig.parameters) if sig is not None else {}
    takes_kwargs = sig is None or any(p.kind is p.VAR_KEYWORD for p in params.values())
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: convert by default or literal
        hints = {}
    args: List[Any] = []
    kwargs: Dict[str, Any] = {}
    options: Dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            args += [_literal(t) for t in tokens[i + 1 :]]
            break
        if not token.startswith("--") or len(token) == 2:
            args.append(_convert(_positional_param(params, len(args)), hints, token))
            i += 1
            continue
        key, eq, value = token[2:].partition("=")
        name = key.replace("-", "_")
        param = params.get(name)
        is_option = name in JOB_OPTIONS and param is None
        if param is None and not is_option and not takes_kwargs:
            known = ", ".join(f"--{p}" for p, v in params.items() if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD))
            extra = ", ".join(f"--{o}" for o in JOB_OPTIONS if o not in params)
            raise ValueError(
                f"{label} has no parameter {key!r}; its flags are: {known or '(none)'}; job options: {extra}"
            )
        is_bool = not is_option and _kind(param, hints, name) is bool
        if not eq:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if is_bool and (nxt is None or nxt.lower() not in _TRUE | _FALSE):
                value, i = "true", i + 1
            elif nxt is None:
                raise ValueError(f"--{key} needs a value (e.g. --{key} 1)")
            else:
                value, i = nxt, i + 2
        else:
            i += 1
        if is_option:
            options[name] = _typed(JOB_OPTIONS[name], value, key)
        else:
            kwargs[name] = _convert(param, hints, value, name)
    return args, kwargs, options


def _positional_param(params: Dict[str, inspect.Parameter], index: int) -> Any:
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return positional[index] if index < len(positional) else None


def _kind(param: Any, hints: Dict[str, Any], name: str) -> Any:
    if param is None:
        return None
    tp = hints.get(name)
    if tp in (int, float, bool, str):
        return tp
    default = param.default
    if default is not inspect.Parameter.empty and default is not None and type(default) in (int, float, bool, str):
        return type(default)
    return None


def _convert(param: Any, hints: Dict[str, Any], text: str, name: str = "") -> Any:
    name = name or (param.name if param is not None else "")
    tp = _kind(param, hints, name)
    return _typed(tp, text, name) if tp is not None else _literal(text)


def _typed(tp: Any, text: str, name: str) -> Any:
    if tp is str:
        return text
    if tp is bool:
        low = text.lower()
        if low in _TRUE | _FALSE:
            return low in _TRUE
        raise ValueError(f"--{name}: expected true or false, got {text!r}")
    try:
        return tp(text)
    except ValueError:
        raise ValueError(f"--{name}: expected {tp.__name__}, got {text!r}") from None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
