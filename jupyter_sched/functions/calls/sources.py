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


def restore(fn: Any, entries: List[Entry]) -> None:
    """Gives the code of ``fn`` (a call unpickled in this process, e.g. to re-run it here) back the places
    its source map names, so a traceback or a debugger shows each frame's file or cell and source line.

    A place is the file it was written in when this process has that file's lines as written (the same
    kernel's cell, a module here); otherwise the map's label, whose lines go into the line cache (a cell
    of another kernel; ``FILE (as submitted)`` for a file that is not here or has changed since). Code
    reached by reference (an importable module's functions) is left alone: it already names its file."""
    if not entries:
        return
    files = _places_here(entries)
    for function in _functions(fn):
        function.__code__ = _renamed(function.__code__, files)


def _places_here(entries: List[Entry]) -> Dict[Key, str]:
    """Each entry's key -> the file name its code should carry here (see :func:`restore`)."""
    cells: Dict[str, str] = {}
    for name in list(linecache.cache):  # a kernel's cells by their label, e.g. "Cell In[12]"
        label, is_cell = place(name)
        if is_cell:
            cells[label] = name
    out: Dict[Key, str] = {}
    for key, label, is_cell, first, lines in entries:
        here = cells.get(label, "") if is_cell else label
        if here and linecache.getlines(here)[first - 1 : first - 1 + len(lines)] == lines:
            out[tuple(key)] = here  # type: ignore[index]
            continue
        if not is_cell:  # a file that is not here, or changed since: not the lines the file has now
            label = f"{label} (as submitted)"
        known = linecache.cache.get(label, ())
        text = list(known[2]) if len(known) == 4 and known[1] is None else []  # lines this function put there
        text += [""] * (first - 1 + len(lines) - len(text))
        text[first - 1 : first - 1 + len(lines)] = lines
        linecache.cache[label] = (sum(map(len, text)), None, text, label)
        out[tuple(key)] = label  # type: ignore[index]
    return out


def _renamed(code: types.CodeType, files: Dict[Key, str]) -> types.CodeType:
    consts = tuple(_renamed(c, files) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    name = files.get(code_key(code), code.co_filename)
    if name == code.co_filename and all(a is b for a, b in zip(consts, code.co_consts)):
        return code
    return code.replace(co_filename=name, co_consts=consts)
