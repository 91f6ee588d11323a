"""A function job's remote traceback shows the user's source, whatever cloudpickle does to code file names
(3.1.3 renames every by-value code object ``<dynamic-code>``; 3.0 keeps a file the replica may not have).

Real replicas on local_cwd. The functions here are compiled from text under a file name that exists only
in this process's line cache, as a kernel's cells do, so the replica cannot read their source from disk;
the "cell" ones are named by a namer as the notebook extension registers IPython's.
"""

from __future__ import annotations

import linecache
from typing import Any, Callable, Dict, Iterator

import cloudpickle
import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError
from jupyter_sched.functions.calls import sources


def _define(filename: str, source: str, name: str) -> Callable[..., Any]:
    """``name`` from ``source`` compiled as ``filename``, its lines only in the line cache (like a cell)."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace: Dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]  # type: ignore[no-any-return]


@pytest.fixture
def cells() -> Iterator[Dict[str, str]]:
    """A namer for two fake cells, registered as the notebook extension registers IPython's."""
    names = {"/tmp/ipykernel_0/1001.py": "Cell In[7]", "/tmp/ipykernel_0/1002.py": "Cell In[8]"}
    namer = names.get
    sources.add_namer(namer)
    yield names
    sources.remove_namer(namer)
    for filename in names:
        linecache.cache.pop(filename, None)


def _error(fn: Callable[..., Any], *args: Any) -> FunctionError:
    with pytest.raises(FunctionError) as info:
        jupyter_sched.submit(fn, *args).result(timeout=60)
    return info.value


def test_each_frame_names_its_cell_and_shows_its_line_across_cells(cells) -> None:  # type: ignore[no-untyped-def]
    helper = _define("/tmp/ipykernel_0/1001.py", "def column(row, key):\n    return row[key]\n", "column")
    train = _define(
        "/tmp/ipykernel_0/1002.py",
        "def train(key):\n    row = {'loss': 1}\n    return column(row, key)\n",
        "train",
    )
    train.__globals__["column"] = helper
    tb = _error(train, "lr").remote_traceback
    assert 'Cell In[8], line 3, in train\n    return column(row, key)' in tb, tb
    assert 'Cell In[7], line 2, in column\n    return row[key]' in tb, tb
    assert "<dynamic-code>" not in tb and "ipykernel_0" not in tb
    assert tb.rstrip().endswith("KeyError: 'lr'")


def test_a_file_that_is_not_on_disk_keeps_its_name_and_shows_its_lines() -> None:
    fails = _define("/nonexistent/analysis.py", "\n\ndef fails():\n    raise RuntimeError('boom')\n", "fails")
    try:
        tb = _error(fails).remote_traceback
    finally:
        linecache.cache.pop("/nonexistent/analysis.py", None)
    assert 'File "/nonexistent/analysis.py", line 4, in fails\n    raise RuntimeError(\'boom\')' in tb, tb


def test_chained_exceptions_and_nested_functions_are_mapped_too(cells) -> None:  # type: ignore[no-untyped-def]
    source = (
        "def load(path):\n"
        "    def parse(text):\n"
        "        return int(text)\n"
        "    try:\n"
        "        return parse(path)\n"
        "    except ValueError as e:\n"
        "        raise LookupError(f'cannot load {path}') from e\n"
    )
    load = _define("/tmp/ipykernel_0/1001.py", source, "load")
    err = _error(load, "x.csv")
    tb = err.remote_traceback
    assert "Cell In[7], line 3, in parse\n    return int(text)" in tb, tb
    assert "Cell In[7], line 5, in load\n    return parse(path)" in tb, tb
    assert "Cell In[7], line 7, in load\n    raise LookupError(f'cannot load {path}') from e" in tb, tb
    assert "The above exception was the direct cause" in tb
    assert err.exc_type == "LookupError" and "raise LookupError" in str(err)


def test_the_source_map_is_plain_data_keyed_by_what_pickling_keeps(cells) -> None:  # type: ignore[no-untyped-def]
    fn = _define("/tmp/ipykernel_0/1002.py", "def f(x):\n    return [y * 2 for y in x]\n", "f")
    entries = sources.source_map(fn)
    assert {(label, is_cell) for _, label, is_cell, _, _ in entries} == {("Cell In[8]", True)}
    keys = {key for key, *_ in entries}
    copy = cloudpickle.loads(cloudpickle.dumps(fn))  # by value, as a replica gets it
    assert sources.code_key(copy.__code__) in keys
    assert sources.code_key(copy.__code__) == sources.code_key(fn.__code__)
