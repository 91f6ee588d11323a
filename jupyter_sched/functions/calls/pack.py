"""Pickling a call (``fn, args, kwargs``) with cloudpickle, and naming what cannot be pickled.

cloudpickle (a well-kept library; hand-written code could not match its coverage of closures, lambdas,
classes and functions defined in ``__main__``) pickles notebook-defined code by value. When it fails, its
error names a type (``cannot pickle '_thread.lock' object``) but not where the object sits in the call,
so :func:`find_culprit` walks what the call references (arguments, closure cells, the globals a function
uses, defaults, attributes, items) and reports the deepest path that still fails, e.g.
``train -> global 'log' -> attribute 'fh'``. Open files are refused outright: cloudpickle would send a
snapshot of a file opened for reading, which is never what a replica on another machine should get.
The kernel itself (IPython's shell, its sockets) is named as such rather than walked.
"""

from __future__ import annotations

import io
import pickle
import types
from typing import Any, Iterator, List, Optional, Tuple

import cloudpickle

from jupyter_sched.functions.calls import sources
from jupyter_sched.functions.errors import UnpicklableError

_KERNEL_MODULES = ("IPython.", "ipykernel.", "zmq.", "tornado.", "jupyter_client.", "ipywidgets.", "traitlets.")
_MAX_DEPTH = 8


class _Refuse(pickle.PicklingError):
    pass


class _Pickler(cloudpickle.Pickler):
    """cloudpickle's pickler, refusing open files and the kernel's own objects."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, io.IOBase):
            raise _Refuse(
                f"an open file ({type(obj).__name__} {getattr(obj, 'name', '')!r}) cannot be sent to a replica"
            )
        if _is_kernel(obj):
            raise _Refuse(f"the kernel's own {type(obj).__name__} cannot be sent to a replica")
        return super().reducer_override(obj)


def _is_kernel(obj: Any) -> bool:
    module = getattr(type(obj), "__module__", "") or ""
    return isinstance(module, str) and module.startswith(_KERNEL_MODULES) and not isinstance(obj, type)


def dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.DEFAULT_PROTOCOL).dump(obj)
    return buf.getvalue()


def pack(fn: Any, args: Tuple[Any, ...], kwargs: dict) -> bytes:
    """``(fn, args, kwargs, source map)`` pickled (see :mod:`.sources`); :class:`UnpicklableError` naming
    the culprit if that fails."""
    if not callable(fn):
        raise TypeError(
            f"submit: fn must be callable (a function, lambda, class or callable object), got {type(fn).__name__}"
        )
    try:
        return dumps((fn, tuple(args), dict(kwargs), sources.source_map(fn)))
    except Exception as e:  # noqa: BLE001 - any pickling failure is reported the same way
        roots = [(describe_callable(fn), fn)] + [(f"argument {i}", a) for i, a in enumerate(args)]
        roots += [(f"keyword argument {k!r}", v) for k, v in kwargs.items()]
        raise unpicklable(roots, e) from None


def unpicklable(roots: List[Tuple[str, Any]], error: BaseException) -> UnpicklableError:
    found = None
    for label, obj in roots:
        if _fails(obj):
            found = find_culprit(obj, [label])
            break
    if found is None:
        return UnpicklableError(f"the call cannot be pickled: {error}")
    path, culprit, why = found
    where = " -> ".join(path)
    return UnpicklableError(
        f"cannot send {where} to a replica: it is a {type(culprit).__module__}.{type(culprit).__qualname__}"
        f" ({why}). Create it inside the function instead (open files, locks, clients and the kernel"
        " cannot leave this process), or pass what it is made from.",
        where,
    )


def _fails(obj: Any) -> Optional[str]:
    try:
        dumps(obj)
    except RecursionError:
        return "recursion too deep"
    except Exception as e:  # noqa: BLE001 - whatever pickling this object raises is why it cannot be sent
        return str(e) or type(e).__name__
    return None


def find_culprit(obj: Any, path: List[str], depth: int = 0) -> Tuple[List[str], Any, str]:
    """The deepest object under ``obj`` that fails to pickle: ``(path, object, reason)``."""
    why = _fails(obj) or "cannot be pickled"
    if depth < _MAX_DEPTH and not _is_kernel(obj) and not isinstance(obj, io.IOBase):
        for label, child in children(obj):
            if child is obj:
                continue
            if _fails(child):
                return find_culprit(child, path + [label], depth + 1)
    return path, obj, why


def children(obj: Any) -> Iterator[Tuple[str, Any]]:
    """What ``obj`` refers to that cloudpickle would pickle with it, labelled for a path."""
    if isinstance(obj, types.FunctionType):
        code = obj.__code__
        for name, cell in zip(code.co_freevars, obj.__closure__ or ()):
            try:
                yield f"closure variable {name!r}", cell.cell_contents
            except ValueError:  # an empty cell
                continue
        for name in sorted(global_names(code)):
            if name in obj.__globals__:
                yield f"global {name!r}", obj.__globals__[name]
        for i, value in enumerate(obj.__defaults__ or ()):
            yield f"default {i}", value
        for name, value in (obj.__kwdefaults__ or {}).items():
            yield f"default {name!r}", value
        for name, value in vars(obj).items():
            yield f"attribute {name!r}", value
    elif isinstance(obj, types.MethodType):
        yield "its object", obj.__self__
        yield describe_callable(obj.__func__), obj.__func__
    elif isinstance(obj, type):
        for name, value in vars(obj).items():
            if not (name.startswith("__") and name.endswith("__")):
                yield f"class attribute {name!r}", value
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield f"item {key!r}", value
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj):
            yield f"item {i}", value
    elif hasattr(obj, "func") and hasattr(obj, "args") and hasattr(obj, "keywords"):  # functools.partial
        yield "partial's function", obj.func
        for i, value in enumerate(obj.args):
            yield f"partial's argument {i}", value
        for name, value in obj.keywords.items():
            yield f"partial's keyword {name!r}", value
    else:
        if not isinstance(obj, (int, float, str, bytes, type(None))):
            yield f"its class {type(obj).__qualname__}", type(obj)
        for name, value in (getattr(obj, "__dict__", None) or {}).items():
            yield f"attribute {name!r}", value


def global_names(code: types.CodeType) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= global_names(const)
    return names


def describe_callable(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{'class' if isinstance(fn, type) else 'function'} {name}"
