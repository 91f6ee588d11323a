"""Chunked maps: real function jobs on local_cwd (and one map on the real Slurm cluster).

``jupyter_sched.map(fn, items, chunksize=...)`` runs its items in chunks, one app (and one job directory)
per chunk, one result per item in item order; failed items are named by index and masked value in each
``errors`` mode; ``as_completed`` yields items one by one (gated by a file, so the order is the test's,
not the machine's speed); ``retry_failed`` runs a chunk with a failed item again; bad options are refused
before anything launches. Small maps keep one app per item.
"""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace
from typing import Any, List

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError, MissingResultError
from jupyter_sched.functions.sweeps.maps import LABEL_CHARS, ChunkedMap, Item, chunk_size, item_label
from jupyter_sched.functions.sweeps.sweep import Sweep
from tests.conftest import require_module
from tests.notebook.nbhelpers import wait_for

require_module("pandas", "map.to_dataframe() returns a pandas DataFrame; pandas is in the test extra")


def _functions() -> SimpleNamespace:
    """The jobs' functions, made here so that cloudpickle sends them by value (a test module's own
    functions would be pickled by reference, and a replica would import the test module)."""

    def square(x: int) -> int:
        return x * x

    def picky(x: Any) -> Any:
        if isinstance(x, dict):
            raise TypeError(f"not a number: {sorted(x)}")
        if x == 3:
            raise ValueError("three is not allowed")
        if x == 5:
            return threading.Lock()  # cannot be pickled back: that item's error, not the chunk's
        return x + 1

    def gated_with(gate: str) -> Any:
        def gated(x: int) -> int:
            import time

            while x == 0 and not os.path.exists(gate):  # chunk 0 waits until the test has seen chunk 1's items
                time.sleep(0.02)
            return x * 10

        return gated

    def flaky_with(gate: str) -> Any:
        def flaky(x: int) -> int:
            if x == 4 and not os.path.exists(gate):
                raise RuntimeError("gate closed")
            return -x

        return flaky

    return SimpleNamespace(square=square, picky=picky, gated_with=gated_with, flaky_with=flaky_with)


F = _functions()


@pytest.fixture(scope="module")
def functions_root() -> str:
    """Where this session's function jobs keep their directories (found from one job)."""
    return os.path.dirname(jupyter_sched.submit(F.square, 2).job_dir)


def _app_dirs(m: Sweep) -> List[str]:
    root = os.path.dirname(m.runs[0].job_dir)
    return sorted(name for name in os.listdir(root) if name.startswith(m.name))


def test_chunks_run_many_items_per_app_and_give_one_result_per_item_in_order() -> None:
    m = jupyter_sched.map(F.square, range(23), chunksize=5, max_concurrent=2)
    assert isinstance(m, ChunkedMap)
    assert m.results(timeout=120) == [x * x for x in range(23)]
    assert [run.params for run in m.runs] == [
        {"items": "0-4", "done": "5/5"}, {"items": "5-9", "done": "5/5"}, {"items": "10-14", "done": "5/5"},
        {"items": "15-19", "done": "5/5"}, {"items": "20-22", "done": "3/3"},
    ]  # fmt: skip
    assert [run.state for run in m.runs] == ["SUCCEEDED"] * 5
    assert len(_app_dirs(m)) == 5, "one job directory per chunk, not per item"
    frame = m.to_dataframe()
    assert list(frame.index) == list(range(23)) and list(frame["x"]) == list(range(23))
    assert list(frame["result"]) == [x * x for x in range(23)]
    assert m.best("result", mode="max").run.index == 22
    assert m.counts() == {"SUCCEEDED": 23}


def test_the_chunk_size_follows_the_items_and_max_concurrent_and_small_maps_keep_an_app_per_item() -> None:
    assert [chunk_size(n, 2) for n in (1, 8, 9, 40, 10_000)] == [1, 1, 2, 5, 1250]
    m = jupyter_sched.map(F.square, range(40), max_concurrent=2)
    assert isinstance(m, ChunkedMap) and len(m.runs) == 8
    assert m.results(timeout=120) == [x * x for x in range(40)]
    small = jupyter_sched.map(F.square, range(8), max_concurrent=2)
    assert type(small) is Sweep and len(small.runs) == 8, "a chunk of one: the plain sweep, a run per item"
    assert small.results(timeout=120) == [x * x for x in range(8)]


def test_an_item_is_named_by_its_index_and_its_value_masked_then_shortened() -> None:
    assert item_label(3, {"x": 3}) == "#3 (x=3)"
    long = item_label(7, {"path": "/data/" + "a" * 200})
    assert long.startswith("#7 (path='/data/aaa") and long.endswith("…)") and len(long) == len("#7 ()") + LABEL_CHARS
    masked = item_label(2, {"x": {"user": "ann", "password": "hunter2" * 10}})
    assert "hunter2" not in masked and masked.startswith("#2 (x={'user': 'ann', 'password': '"), masked


def test_failed_items_are_named_by_index_and_masked_value_in_each_errors_mode() -> None:
    secret = {"api_token": "s3cr3t-value"}
    items = [0, 1, 2, 3, 4, 5, secret, 7]
    m = jupyter_sched.map(F.picky, items, chunksize=4, max_concurrent=2)
    with pytest.raises(FunctionError) as raised:
        m.results(timeout=120)
    text = str(raised.value)
    assert text.startswith("run #3 (x=3): ValueError: three is not allowed"), text
    assert "m.rerun_here(3)" in text
    got = m.results(errors="return")
    assert got[:3] == [1, 2, 3] and got[4] == 5 and got[7] == 8
    assert isinstance(got[3], FunctionError) and got[3].run == "#3 (x=3)"
    assert "cannot be pickled" in str(got[5]), "an unpicklable value is that item's error"
    assert isinstance(got[6], FunctionError) and got[6].exc_type == "TypeError"
    assert "s3cr3t" not in got[6].run and got[6].run.startswith("#6 (x={'api_token': "), got[6].run
    assert m.results(errors="skip") == [1, 2, 3, 5, 8]
    assert [run.state for run in m.runs] == ["FAILED", "FAILED"], "a chunk with a failed item ends FAILED"
    assert m.runs[0].error == "1 failed: #3 (x=3): ValueError: three is not allowed"
    assert m.runs[1].error.startswith("2 failed: #5 (x=5): TypeError: the function returned a lock")
    assert "s3cr3t" not in m.runs[1].error
    with pytest.raises(ValueError, match="three is not allowed"):
        m.rerun_here(3)  # the item's call, here
    assert m.rerun_here(2) == 3
    returning = jupyter_sched.map(F.picky, items, chunksize=4, max_concurrent=2, errors="skip")
    assert returning.results(timeout=120) == [1, 2, 3, 5, 8], "map's errors= is results()' default"


def test_as_completed_yields_each_item_as_its_chunk_reports_it() -> None:
    gate = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"jsched-map-gate-{os.getpid()}")
    try:
        m = jupyter_sched.map(F.gated_with(gate), range(6), chunksize=3, max_concurrent=2)
        seen: List[Item] = []
        for item in jupyter_sched.as_completed(m, timeout=120):
            seen.append(item)
            if len(seen) == 3:
                assert m.runs[0].params["done"] == "0/3" and m.runs[1].params["done"] == "3/3"
                open(gate, "w").close()  # chunk 0 may go on
        assert [item.index for item in seen] == [3, 4, 5, 0, 1, 2]
        assert [item.result() for item in seen] == [30, 40, 50, 0, 10, 20]
        assert all(item.exception() is None for item in seen)
    finally:
        if os.path.exists(gate):
            os.unlink(gate)


def test_retry_failed_runs_the_chunk_of_a_failed_item_again() -> None:
    gate = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"jsched-map-flaky-{os.getpid()}")
    try:
        m = jupyter_sched.map(F.flaky_with(gate), range(9), chunksize=3, max_concurrent=3)
        got = m.results(timeout=120, errors="return")
        assert isinstance(got[4], FunctionError) and "gate closed" in str(got[4])
        open(gate, "w").close()
        m.retry_failed()
        assert m.results(timeout=120) == [-x for x in range(9)]
        assert [run.attempts for run in m.runs] == [1, 2, 1], "only the chunk with the failed item ran again"
        assert m.runs[1].error == "" and m.runs[1].params["done"] == "3/3"
    finally:
        if os.path.exists(gate):
            os.unlink(gate)


def test_cancel_ends_the_running_chunk_and_the_queued_ones_and_names_their_items() -> None:
    gate = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"jsched-map-never-{os.getpid()}")
    m = jupyter_sched.map(F.gated_with(gate), range(6), chunksize=2, max_concurrent=1)
    wait_for(lambda: m.runs[0].state == "RUNNING", 60)  # item 0 waits for a gate that never opens
    m.cancel()
    got = m.results(timeout=120, errors="return")
    assert [run.state for run in m.runs] == ["CANCELLED"] * 3
    assert all(isinstance(e, MissingResultError) for e in got), got
    assert str(got[1]).startswith("run #1 (x=1): ended CANCELLED without a value: chunk 0"), str(got[1])
    assert "never started" in str(got[4])
    assert m.counts() == {"CANCELLED": 6}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"chunksize": 0}, "chunksize=0: give the number of items each app runs"),
        ({"chunksize": "10"}, "chunksize='10': give the number of items each app runs"),
        ({"chunksize": 2.5}, "chunksize=2.5: give"),
        ({"chunksize": True}, "chunksize=True: give"),
        ({"max_concurrent": 0}, "max_concurrent=0: give how many apps run at once"),
        ({"errors": "nope"}, "errors='nope': give errors=\"raise\""),
        ({"chunksize": 5, "stop": lambda run, history: False}, "give chunksize=1"),
    ],
)
def test_bad_options_are_refused_before_anything_launches(options: dict, named: str, functions_root: str) -> None:
    before = os.listdir(functions_root)
    with pytest.raises(ValueError) as raised:
        jupyter_sched.map(F.square, range(20), **options)
    assert named in str(raised.value)
    assert os.listdir(functions_root) == before, "no job directory was made"


def test_a_chunked_map_on_slurm_gives_its_items_in_order(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    m = jupyter_sched.map(F.picky, [0, 1, 2, 3, 4, 6, 7, 8], chunksize=4, scheduler="slurm", max_concurrent=2)
    assert isinstance(m, ChunkedMap) and len(m.runs) == 2
    got = m.results(timeout=300, errors="return")
    assert got[:3] == [1, 2, 3] and got[4:] == [5, 7, 8, 9]
    assert isinstance(got[3], FunctionError) and got[3].run == "#3 (x=3)"
    assert all(run.job_dir.startswith(slurm_cluster.job_root) for run in m.runs)

