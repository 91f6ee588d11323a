"""Sweeps on local_cwd, for real: every run is an app whose replica calls the function."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from nbhelpers import wait_for

import jupyter_sched
from jupyter_sched.functions import FunctionError, UnpicklableError
from jupyter_sched.functions.sweeps.grid import expand
from jupyter_sched.notebook.panes.sweep_view import SWEEP_MIME, record_bundle


def _intervals(sweep) -> list:  # type: ignore[no-untyped-def]
    """Each run's [start, end] as the scheduler recorded them (its replicas' started/finished)."""
    out = []
    for run in sweep.runs:
        status = run.job.fetch_status()
        reps = [r for role in status.roles for r in role.replicas]
        out.append((min(r.started for r in reps), max(r.finished for r in reps)))
    return out


def test_twelve_runs_with_max_concurrent_3_never_have_more_than_3_running_and_keep_grid_order() -> None:
    def train(lr: float, bs: int) -> dict:
        import time

        time.sleep(0.3)
        return {"loss": lr * bs, "bs": bs}

    sweep = jupyter_sched.sweep(train, {"lr": [0.5, 0.25, 0.125], "bs": [1, 2, 3, 4]}, max_concurrent=3)
    values = sweep.results(timeout=180)
    assert values == [{"loss": lr * bs, "bs": bs} for lr in (0.5, 0.25, 0.125) for bs in (1, 2, 3, 4)]
    spans = _intervals(sweep)
    most = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert most <= 3, f"{most} runs were running at once: {spans}"
    names = [run.job.name for run in sweep.runs]
    assert all(n.startswith(sweep.name + "-") for n in names), "the runs are grouped by the sweep's name"


def test_a_list_grid_a_failing_run_and_errors_returned_in_place() -> None:
    def f(x: int) -> int:
        if x == 2:
            raise ValueError("x=2 is bad")
        return x * 10

    sweep = jupyter_sched.sweep(f, [{"x": 1}, {"x": 2}, {"x": 3}], max_concurrent=2)
    with pytest.raises(FunctionError, match="x=2 is bad"):
        sweep.results(timeout=120)
    got = sweep.results(errors="return")
    assert got[0] == 10 and got[2] == 30 and isinstance(got[1], FunctionError)
    text = record_bundle(sweep)["text/plain"]
    assert "ValueError: x=2 is bad" in text and "FAILED" in text
    # which sweep the saved output shows, for JupyterLab when the table's kernel is gone (issue 35, point 2)
    assert record_bundle(sweep, 5.0)[SWEEP_MIME] == {
        "sweep": sweep.name, "label": "f-sweep", "state": "FAILED", "final": True, "as_of": None, "runs": 3,
    }  # fmt: skip


def test_cancel_all_stops_running_runs_and_never_starts_queued_ones() -> None:
    sweep = jupyter_sched.sweep(lambda s: __import__("time").sleep(s), {"s": [60] * 5}, max_concurrent=2)
    started = threading.Event()
    sweep.on_change(lambda: started.set() if any(r.job is not None for r in sweep.runs) else None)
    assert started.wait(60)
    sweep.cancel()
    sweep.wait(timeout=120)
    assert sweep.finished
    assert [r.state for r in sweep.runs].count("CANCELLED") == 5
    assert sum(1 for r in sweep.runs if r.job is not None) <= 2, "queued runs never started"


def test_nothing_launches_when_one_point_cannot_be_pickled() -> None:
    lock = threading.Lock()
    with pytest.raises(UnpicklableError, match="keyword argument 'x'"):
        jupyter_sched.sweep(lambda x: 1, {"x": [1, 2, lock]})


def test_bad_grids_are_refused_naming_the_key() -> None:
    with pytest.raises(ValueError, match=r"grid\['lr'\] = 0.1: give a list"):
        expand({"lr": 0.1})
    with pytest.raises(ValueError, match=r"grid\[1\]"):
        expand([{"a": 1}, 5])
    assert expand({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]


def test_a_new_process_reloads_the_finished_runs_with_their_results() -> None:
    sweep = jupyter_sched.sweep(lambda k: k * k, {"k": [1, 2, 3]}, max_concurrent=3)
    assert sweep.results(timeout=120) == [1, 4, 9]
    code = (
        "from jupyter_sched import load_sweep\n"
        f"s = load_sweep({sweep.name!r})\n"
        "print(s.results(timeout=60))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 4, 9]"


def test_sorting_from_python_while_result_columns_appear_does_not_stall_the_sweep(ip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``sweep.view().sort.value = "lr"`` before any result exists: each new result column replaces the
    menu's options (which selects "#" in ipywidgets) while the sweep's feeder reports changes."""
    gate = tmp_path / "gate"

    def train(lr: float) -> dict:
        import os
        import time

        while not os.path.exists(gate):
            time.sleep(0.05)
        return {"loss": round(1 - lr, 3), f"seen_{int(lr * 10)}": lr}  # every run brings a new column

    sweep = jupyter_sched.sweep(train, {"lr": [0.1, 0.2, 0.3, 0.4, 0.5]}, max_concurrent=2)
    view = sweep.view()
    view.sort.value = "lr"
    view.descending.value = True
    gate.touch()
    assert [v["loss"] for v in sweep.results(timeout=120)] == [0.9, 0.8, 0.7, 0.6, 0.5]
    wait_for(lambda: view.table.value.count("SUCCEEDED") == 5, 30, "the final table")
    assert view.sort.value == "lr" and "seen_5" in view.sort.options
    assert "seen_5" in view.table.value, "the new columns are shown"


def test_the_feeder_never_waits_on_the_view(ip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A view whose drawing hangs (a front end that never drains, a bug) must not stop the sweep: its
    runs launch and end, results() and cancel() return. The hang is injected: no real one is left."""
    from jupyter_sched.notebook.panes.sweep_view import SweepView

    release = threading.Event()
    hung = threading.Event()
    draw = SweepView._draw

    def hanging_draw(self) -> None:  # type: ignore[no-untyped-def]
        hung.set()
        release.wait(300)
        draw(self)

    monkeypatch.setattr(SweepView, "_draw", hanging_draw)
    try:
        sweep = jupyter_sched.sweep(lambda k: k + 1, {"k": [1, 2, 3, 4]}, max_concurrent=1)
        threading.Thread(target=sweep.view, daemon=True).start()  # its first drawing hangs in the constructor
        assert hung.wait(60)
        assert sweep.results(timeout=120) == [2, 3, 4, 5]
        slow = jupyter_sched.sweep(lambda s: __import__("time").sleep(s), {"s": [300, 300]}, max_concurrent=1)
        hung.clear()
        threading.Thread(target=slow.view, daemon=True).start()
        assert hung.wait(60)
        wait_for(lambda: slow.runs[0].job is not None, 60, "the first run to launch")
        slow.cancel()
        slow.wait(timeout=120)
        assert slow.finished and [r.state for r in slow.runs] == ["CANCELLED", "CANCELLED"]
    finally:
        release.set()
