"""Results as data, remote errors re-run here, sweeps steered afterwards: real function jobs on local_cwd.

A sweep's runs become a DataFrame (parameters, state, times, peak memory, flattened result fields, the
error text) and a best run; ``results()`` raises, returns or skips errors, naming a failed run by its
parameters; ``retry_failed()`` launches only the failed runs again, in the same sweep, also from a sweep
found again in another process; ``map`` sweeps one argument; ``as_completed`` yields jobs in the order
they end (gated by files, so the order is the test's, not the machine's speed); ``job.exception()`` is
what ``result()`` would raise; ``rerun_here()`` raises the remote error again in this process, with the
function's own frame (its locals) at the bottom of the traceback.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any, List

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError, MissingResultError
from jupyter_sched.functions.sweeps.table import format_value
from jupyter_sched.notebook.panes.sweep_view import record_bundle
from tests.conftest import require_module
from tests.notebook.nbhelpers import wait_for

require_module("pandas", "sweep.to_dataframe() returns a pandas DataFrame; pandas is in the test extra")


def _functions() -> SimpleNamespace:
    """The jobs' functions, made here so that cloudpickle sends them by value (a test module's own
    functions would be pickled by reference, and a replica would import the test module)."""

    def flaky_with(gate: str) -> Any:
        def flaky(lr: float, epochs: int = 1) -> dict:
            """Raises for lr >= 1 until ``gate`` exists; else a loss and a nested metric. Runs long enough
            (0.3 s) for the usage sampler, whose first sample of a replica is 0.1 s after it starts."""
            import time

            time.sleep(0.3)
            if lr >= 1.0 and not os.path.exists(gate):
                raise ValueError(f"lr {lr} is too high")
            return {"loss": round(1 / (lr * epochs), 4), "metrics": {"acc": lr / 4}}

        return flaky

    def gated(gate: str, value: int) -> int:
        import time

        while not os.path.exists(gate):
            time.sleep(0.05)
        return value

    def pick(xs: list, n: int) -> int:
        return xs[n]

    def explode(n: int) -> Any:
        rank = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        if rank == (1, 2):
            return pick([1, 2], n)
        return rank

    return SimpleNamespace(flaky_with=flaky_with, gated=gated, explode=explode)


F = _functions()


def _sweep(tmp_path: Path, **kwargs: Any) -> Any:
    """lr 0.5, 1.0, 2.0 for 4 epochs: the last two fail until ``tmp_path/gate`` exists."""
    return jupyter_sched.sweep(F.flaky_with(str(tmp_path / "gate")), {"lr": [0.5, 1.0, 2.0], "epochs": [4]}, **kwargs)


def test_a_sweep_is_a_dataframe_of_params_then_results_then_state_times_memory_errors(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, max_concurrent=3)
    sweep.wait(timeout=120)
    df = sweep.to_dataframe()
    import pandas as pd
    assert list(df.index) == [0, 1, 2] and df.index.name == "run"
    assert list(df.columns) == [  # what runs are compared by first (on screen), how each went after, handle last
        "lr", "epochs", "loss", "metrics.acc", "state", "submitted", "started", "ended", "elapsed_s",
        "peak_memory_bytes", "cpu_seconds", "stopped", "error", "handle",
    ]  # fmt: skip
    assert all(t.microsecond == 0 for t in df["started"]), "times to the second: microseconds are noise"
    assert list(df["lr"]) == [0.5, 1.0, 2.0] and str(df["lr"].dtype) == "float64"
    assert list(df["state"]) == ["SUCCEEDED", "FAILED", "FAILED"]
    assert df.loc[0, "loss"] == 0.5 and df.loc[0, "metrics.acc"] == 0.125
    assert math.isnan(df.loc[1, "loss"]), "a failed run has no result fields"
    assert df.loc[1, "error"] == "ValueError: lr 1.0 is too high" and pd.isna(df.loc[0, "error"])
    assert (df["peak_memory_bytes"] > 0).all(), "each run's peak memory, as its record kept it"
    assert (df["ended"] >= df["started"]).all() and (df["elapsed_s"] >= 0).all()
    assert df.loc[0, "handle"] == sweep.runs[0].job.handle
    assert sweep.records()[2]["error"] == "ValueError: lr 2.0 is too high"


def test_best_picks_the_lowest_or_highest_field_and_refuses_unknown_ones(tmp_path: Path) -> None:
    (tmp_path / "gate").touch()
    sweep = _sweep(tmp_path, max_concurrent=3)
    sweep.wait(timeout=120)
    best = sweep.best("loss")
    assert (best.run.index, best.value, best.run.params["lr"]) == (2, 0.125, 2.0)
    assert sweep.best("metrics.acc", mode="max").run.index == 2
    assert sweep.best("loss", mode="max").value == 0.5
    assert sweep.best(lambda r: abs(r["loss"] - 0.25)).run.index == 1
    assert "run 2: lr=2.0, epochs=4" in repr(best)
    with pytest.raises(ValueError, match=r"no run has a result field 'los'; the fields are: 'loss', 'metrics.acc'"):
        sweep.best("los")
    with pytest.raises(ValueError, match='mode="min"'):
        sweep.best("loss", mode="lowest")


def test_results_raise_name_the_run_by_its_params_return_or_skip(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, max_concurrent=3)
    with pytest.raises(FunctionError) as info:
        sweep.results(timeout=120)
    err = info.value
    assert err.run == "lr=1.0, epochs=4"
    text = str(err)
    assert text.startswith(f"run {err.run}: ValueError: lr 1.0 is too high")
    assert 'sweep.results(errors="return")' in text and "retry_failed()" in text and "rerun_here(1)" in text
    assert "1 SUCCEEDED, 2 FAILED" in text or "2 FAILED, 1 SUCCEEDED" in text
    assert err.hint in err._render_traceback_()  # IPython shows the hint under the remote traceback
    got = sweep.results(errors="return")
    assert got[0] == {"loss": 0.5, "metrics": {"acc": 0.125}}
    assert [type(e) for e in got[1:]] == [FunctionError, FunctionError]
    assert repr(got[2]) == "<FunctionError in run lr=2.0, epochs=4: ValueError: lr 2.0 is too high>"
    assert sweep.results(errors="skip") == [{"loss": 0.5, "metrics": {"acc": 0.125}}]
    with pytest.raises(ValueError, match='errors="raise", "return"'):
        sweep.results(errors="ignore")


def test_a_cancelled_run_is_an_error_naming_it(tmp_path: Path) -> None:
    gate = tmp_path / "never"

    def wait_for_gate(k: int) -> int:
        import time

        while not os.path.exists(gate):
            time.sleep(0.05)
        return k

    sweep = jupyter_sched.sweep(wait_for_gate, {"k": [1, 2]}, max_concurrent=1)
    wait_for(lambda: sweep.runs[0].job is not None, 60, "the first run to launch")
    sweep.cancel()
    got = sweep.results(timeout=120, errors="return")
    assert all(isinstance(e, MissingResultError) for e in got)
    assert str(got[1]).startswith("run k=2: ended CANCELLED without a value")


def test_retry_failed_runs_only_the_failed_points_again_in_the_same_sweep(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, max_concurrent=2)
    sweep.wait(timeout=120)
    first = [run.job.handle for run in sweep.runs]
    assert sweep.counts() == {"SUCCEEDED": 1, "FAILED": 2}
    (tmp_path / "gate").touch()
    retried = sweep.retry_failed()
    assert list(retried) == [1, 2] and len(retried) == 2, "what it launched again, not the sweep"
    assert repr(retried) == (
        f"sweep {sweep.name}: retrying 2 runs: #1 (lr=1.0, epochs=4), #2 (lr=2.0, epochs=4)"
        " (the sweep's table shows them; sweep.results() waits for them)"
    )
    values = sweep.results(timeout=120)
    assert [v["loss"] for v in values] == [0.5, 0.25, 0.125]
    assert sweep.runs[0].job.handle == first[0], "the run that succeeded was not launched again"
    assert [run.job.handle != old for run, old in zip(sweep.runs[1:], first[1:])] == [True, True]
    assert [run.attempts for run in sweep.runs] == [1, 2, 2]
    assert all(run.job.name.startswith(f"{sweep.name}-00") for run in sweep.runs)
    text = record_bundle(sweep)["text/plain"]
    assert "3 SUCCEEDED" in text and "FAILED" not in text and "lr 1.0 is too high" not in text
    nothing = sweep.retry_failed()
    assert len(nothing) == 0 and sweep.finished, "nothing failed: nothing to do"
    assert repr(nothing) == f"sweep {sweep.name}: no FAILED run to retry"


def test_load_sweep_in_another_process_retries_the_failed_calls(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, max_concurrent=3)
    sweep.wait(timeout=120)
    (tmp_path / "gate").touch()
    code = (
        "import jupyter_sched\n"
        f"s = jupyter_sched.load_sweep({sweep.name!r})\n"
        "print(s.counts_text())\n"
        "s.retry_failed()\n"
        "print([v['loss'] for v in s.results(timeout=120)])\n"
        "print([r.attempts for r in s.runs])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["2 FAILED, 1 SUCCEEDED", "[0.5, 0.25, 0.125]", "[1, 2, 2]"]


def test_map_sweeps_one_argument_positionally() -> None:
    def square(x: int) -> int:
        return x * x

    sweep = jupyter_sched.map(square, range(4), max_concurrent=2)
    assert sweep.results(timeout=120) == [0, 1, 4, 9]
    assert [run.params for run in sweep.runs] == [{"x": 0}, {"x": 1}, {"x": 2}, {"x": 3}]
    assert jupyter_sched.map(math.sqrt, [4.0, 9.0]).results(timeout=120) == [2.0, 3.0]  # positional-only
    with pytest.raises(TypeError, match="give a list of values"):
        jupyter_sched.map(square, "abc")


def test_as_completed_yields_in_end_order_then_ends(tmp_path: Path) -> None:
    gates = [str(tmp_path / f"g{i}") for i in range(3)]
    jobs = [jupyter_sched.submit(F.gated, gate, i) for i, gate in enumerate(gates)]
    Path(gates[2]).touch()
    order: List[int] = []
    for job in jupyter_sched.as_completed(jobs, timeout=120):
        order.append(job.result())
        if order == [2]:
            Path(gates[0]).touch()
        elif order == [2, 0]:
            Path(gates[1]).touch()
    assert order == [2, 0, 1]
    stuck = jupyter_sched.submit(F.gated, str(tmp_path / "never"), 9)
    with pytest.raises(TimeoutError, match="1 job"):
        list(jupyter_sched.as_completed([stuck], timeout=1))
    stuck.cancel()


def test_as_completed_over_a_sweep_yields_runs_launched_later_and_retried(tmp_path: Path) -> None:
    gate = str(tmp_path / "gate")
    sweep = jupyter_sched.sweep(F.flaky_with(gate), {"lr": [2.0, 0.5, 1.0]}, max_concurrent=1)
    ended = [job.handle for job in jupyter_sched.as_completed(sweep, timeout=120)]
    assert ended == [run.job.handle for run in sweep.runs], "max_concurrent=1: they end in grid order"
    Path(gate).touch()
    sweep.retry_failed()
    again = [job.handle for job in sweep.as_completed(timeout=120)]
    assert set(again) == {run.job.handle for run in sweep.runs}, "every run once, the retried ones new"


def test_job_exception_is_what_result_would_raise() -> None:
    assert jupyter_sched.submit(lambda: 1).exception(timeout=60) is None
    err = jupyter_sched.submit(lambda: {}["missing"]).exception(timeout=60)
    assert isinstance(err, FunctionError) and err.exc_type == "KeyError"
    assert isinstance(err.exception, KeyError), "the remote exception itself"
    from jupyter_sched.frontend.job import JobFailed

    assert isinstance(jupyter_sched.submit(lambda: os._exit(3)).exception(timeout=60), JobFailed)


def test_rerun_here_raises_the_remote_error_here_in_the_functions_own_frame() -> None:
    rank_before = os.environ.get("RANK")
    job = jupyter_sched.submit(F.explode, 5, num_replicas=2)
    err = job.exception(timeout=60)
    assert isinstance(err, FunctionError) and err.rank == 1
    with pytest.raises(IndexError) as info:
        err.rerun_here()  # as replica 1 of 2, like the failed one
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [(f.name, f.line) for f in frames[-2:]] == [("explode", "return pick([1, 2], n)"), ("pick", "return xs[n]")]
    assert frames[-1].filename == __file__, "the frame names the file the function was written in"
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_locals == {"xs": [1, 2], "n": 5}, "what a debugger sees in the failing frame"
    assert os.environ.get("RANK") == rank_before, "the replica's RANK is set for the call only"


def test_sweep_rerun_here_returns_a_runs_value_and_raises_a_failed_ones_error(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, max_concurrent=3)
    sweep.wait(timeout=120)
    assert sweep.rerun_here(0) == {"loss": 0.5, "metrics": {"acc": 0.125}}
    with pytest.raises(ValueError, match="lr 2.0 is too high"):
        sweep.rerun_here(2)


def test_a_float_parameter_keeps_its_decimal_point_in_the_table() -> None:
    sweep = jupyter_sched.sweep(lambda lr, n: {"out": lr * n}, {"lr": [1.0, 0.5], "n": [2]}, max_concurrent=2)
    sweep.wait(timeout=120)
    text = record_bundle(sweep)["text/plain"]
    rows = [line.split() for line in text.splitlines()[2:4]]
    assert rows[0][:3] == ["0", "1.0", "2"] and rows[1][:3] == ["1", "0.5", "2"]
    assert "2.0" in rows[0] and "1.0" in rows[1], "a float result keeps its point too"
    assert [format_value(v) for v in (1.0, 2, 1e-7, 0.30000000000000004, float("nan"))] == [
        "1.0", "2", "1e-07", "0.3", "nan"
    ]  # fmt: skip


def test_to_dataframe_without_pandas_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['pandas'] = None  # as if it were not installed\n"
        "import jupyter_sched\n"
        "s = jupyter_sched.sweep(lambda x: x, {'x': [1]})\n"
        "s.wait(timeout=60)\n"
        "try:\n"
        "    s.to_dataframe()\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "print(s.records()[0]['result'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "sweep.to_dataframe() needs pandas, which is not installed in this environment: pip install pandas"
        " (or use sweep.records(), the same rows as dicts)",
        "1",
    ]


def test_a_sweeps_run_has_one_role_named_after_its_call_not_the_run(tmp_path: Path) -> None:
    """The role names each log line's gutter (``train/0 |``): the app already names the run (issue 35, point 16)."""
    from jupyter_sched.functions.launch import prepare
    from jupyter_sched.runner import get_runner

    def make() -> Any:
        def train(lr: float) -> float:
            return lr

        return train

    nb = tmp_path / "sweep_nb.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    runner = get_runner()
    for call, role in ((make(), "train"), (jupyter_sched.Notebook(str(nb)), "sweep_nb")):
        meta = {"sweep": "s-abc", "index": 3}
        request = prepare(runner, call, (), {}, name="s-abc-003", meta=meta)
        assert request.info.app is not None
        assert (request.info.app.name, request.info.app.roles[0].name) == ("s-abc-003", role)
        alone = prepare(runner, call, (), {})  # a submit's app is its one role: named alike
        assert alone.info.app is not None and alone.info.app.roles[0].name == alone.info.app.name
