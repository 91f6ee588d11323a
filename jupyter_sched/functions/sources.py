"""Where a submitted function's code was written, so that a replica's traceback shows the user's source.

cloudpickle sends a notebook's functions by value, and a replica runs that code where its file does not
exist: a cell lives only in the kernel's line cache, and a module next to the notebook may not be in the
image. Since cloudpickle 3.1.3 every by-value code object is also renamed ``<dynamic-code>``. So the call
carries a *source map*: for each function it sends, one entry per code object (the function's, and those
of the functions, lambdas and comprehensions inside it) with the code's key, where it was written (its
file, or its cell as IPython names it, ``Cell In[12]``) and its lines. The replica's bootstrap matches the
frames of a traceback against these keys and prints each with its place and source line, whatever
cloudpickle did to the code's file name (it never changes the bytecode, the name or the first line).

What a cell is called is the front end's business: the notebook layer registers a *namer* (IPython's own
``compile.format_code_name``) with :func:`add_namer`, so this module imports nothing of IPython.
"""

from __future__ import annotations

import functools
import linecache
import types
import zlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

#: ``(name, first line, crc32 of the bytecode)``: what survives pickling by value on every cloudpickle
Key = Tuple[str, int, int]
#: one entry of a source map: the code's key, where it was written, whether that place is a cell, and its
#: lines (``first line`` on), as plain data the replica reads without jupyter_sched
Entry = Tuple[Key, str, bool, int, List[str]]

Namer = Callable[[str], Optional[str]]
_NAMERS: List[Namer] = []
_MAX_FUNCTIONS = 200  # a call reaching more of the notebook than this still runs; the rest keep their names


def code_key(code: types.CodeType) -> Key:
    return (code.co_name, code.co_firstlineno, zlib.crc32(code.co_code))


def add_namer(namer: Namer) -> None:
    """Registers ``namer(filename) -> label or None`` for files that are not files (e.g. a kernel's cells).
    The most recently added namer that knows a file wins."""
    if namer not in _NAMERS:
        _NAMERS.append(namer)


def remove_namer(namer: Namer) -> None:
    if namer in _NAMERS:
        _NAMERS.remove(namer)


def place(filename: str) -> Tuple[str, bool]:
    """``(label, is_cell)``: what a traceback calls the file a function was written in."""
    for namer in reversed(_NAMERS):
        label = namer(filename)
        if label:
            return label, True
    return filename, False


def source_map(fn: Any) -> List[Entry]:
    """The source map of everything of ``fn``'s that is sent by value (see the module docstring)."""
    entries: List[Entry] = []
    for function in _functions(fn):
        label, is_cell = place(function.__code__.co_filename)
        for code in _codes(function.__code__):
            lines = _lines(code)
            if lines:
                entries.append((code_key(code), label, is_cell, code.co_firstlineno, lines))
    return entries


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _lines(code: types.CodeType) -> List[str]:
    """The source lines ``code`` spans (its nested code included), from its first line on."""
    everything = linecache.getlines(code.co_filename)
    last = max((line for c in _codes(code) for _, _, line in c.co_lines() if line), default=code.co_firstlineno)
    return everything[code.co_firstlineno - 1 : last]


def _functions(root: Any) -> Iterator[types.FunctionType]:
    """The Python functions ``root`` is or reaches through closures, defaults and the globals it names,
    staying in the modules of the functions reached (what cloudpickle sends by value with them)."""
    seen: Set[int] = set()
    todo = list(_unwrap(root))
    modules = {getattr(f, "__module__", None) for f in todo} | {"__main__"}
    while todo and len(seen) < _MAX_FUNCTIONS:
        function = todo.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        yield function
        for child in _references(function):
            for found in _unwrap(child):
                if id(found) not in seen and getattr(found, "__module__", None) in modules:
                    todo.append(found)


def _unwrap(obj: Any) -> Iterator[types.FunctionType]:
    if isinstance(obj, types.FunctionType):
        yield obj
    elif isinstance(obj, types.MethodType):
        yield from _unwrap(obj.__func__)
    elif isinstance(obj, functools.partial):
        yield from _unwrap(obj.func)
    elif isinstance(obj, type):
        for value in vars(obj).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, types.FunctionType):
                yield value
    elif callable(obj) and not isinstance(obj, types.BuiltinFunctionType):
        yield from _unwrap(type(obj))


def _references(function: types.FunctionType) -> Iterator[Any]:
    for cell in function.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue
    yield from function.__defaults__ or ()
    names: Dict[str, Any] = function.__globals__
    for code in _codes(function.__code__):
        for name in code.co_names:
            if name in names:
                yield names[name]
