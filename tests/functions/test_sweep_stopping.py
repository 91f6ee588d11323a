"""Early stopping in a real sweep on local_cwd: four function jobs log a loss per step with
``jupyter_sched.track``; the notebook side (the sweep's feeder) reads their metrics, MedianStopping finds the
one that is clearly losing, writes its stop file, and the run sees ``track.should_stop()`` turn true and
returns early (SUCCEEDED, marked stopped with the rule's reason), or, when it ignores the stop, is
cancelled after ``stop_grace`` (CANCELLED). The winners run to their end. Then the sweep's metric data:
``to_dataframe(metrics=...)``, ``metrics(key)`` and ``best(metric=..., scope=...)``, with a returned field
of the same name still winning in ``best(key)``.

The loser loops until it is told to stop (at most a bound that makes the test fail, not hang), so nothing
here depends on how fast the machine is.
"""

from __future__ import annotations

import html
import os
from types import SimpleNamespace
from typing import Any

import pytest

import jupyter_sched
from jupyter_sched.functions.sweeps.table import table_rows
from jupyter_sched.notebook.panes.sweep_view import record_bundle
from jupyter_sched.specs import AppState
from jupyter_sched.track.layout import STOP_ALL
from tests.conftest import require_module

require_module("pandas", "sweep.to_dataframe() returns a pandas DataFrame; pandas is in the test extra")

LOSER_STEPS = 300
"""The loser's bound: 300 steps of 0.1 s, far beyond the time it takes to be stopped."""


def _functions() -> SimpleNamespace:
    """Made here so that cloudpickle sends them by value (see tests/functions/test_results_data.py)."""

    def train(rate: float, listens: bool = True) -> dict:
        """Winners (rate > 0) log a falling loss, 1 / (1 + rate * step), for 8 steps; the loser (rate 0) logs
        10.0 until it is told to stop (``listens``) or reaches its bound. Returns what it saw; ``loss`` is the
        negated last step, a result field named like the metric, ranked the other way round."""
        import time

        from jupyter_sched import track

        track.define_metric("loss", goal="min")
        steps = 8 if rate > 0 else LOSER_STEPS
        for step in range(steps):
            loss = 1.0 / (1.0 + rate * step) if rate > 0 else 10.0
            track.log({"loss": loss, "rate": rate})
            if listens and track.should_stop():
                return {"saw_stop": True, "steps": step + 1, "loss": -step}
            time.sleep(0.2 if rate > 0 else 0.1)
        return {"saw_stop": False, "steps": steps, "loss": -steps}

    def by_hand(rate: float) -> dict:
        """:func:`train` for an image without jupyter_sched (local_docker's test image): the records and the
        stop check written out as docs/metrics.md describes them, for any program."""
        import json
        import os
        import time

        where = os.environ["JUPYTER_SCHED_METRICS_DIR"]
        stem = f"{os.environ['JUPYTER_SCHED_ROLE_NAME']}.{os.environ['JUPYTER_SCHED_REPLICA_ID']}"
        path = os.path.join(where, stem + ".jsonl")
        steps = 8 if rate > 0 else LOSER_STEPS
        for step in range(steps):
            loss = 1.0 / (1.0 + rate * step) if rate > 0 else 10.0
            record = {"v": 1, "w": "by-hand", "seq": step, "t": time.time(), "step": step, "metrics": {"loss": loss}}
            with open(path, "a") as f:
                f.write(json.dumps(record) + "\n")
            os.chmod(path, 0o644)  # the container's user is not the reader's
            if any(os.path.exists(os.path.join(where, name)) for name in ("stop", stem + ".stop")):
                return {"saw_stop": True, "steps": step + 1, "loss": -step}
            time.sleep(0.2 if rate > 0 else 0.1)
        return {"saw_stop": False, "steps": steps, "loss": -steps}

    return SimpleNamespace(train=train, by_hand=by_hand)


F = _functions()
RULE = dict(grace_steps=2, min_runs=3)
"""Two winners share the worst winning curve (rate 1): a median of the others is never better than it."""


def _check_winners(sweep: Any, loser: int) -> None:
    for run in sweep.runs:
        if run.index == loser:
            continue
        assert run.state == AppState.SUCCEEDED.name and run.stopped is None, (run.index, run.state, run.stopped)
        assert run.outcome.value == {"saw_stop": False, "steps": 8, "loss": -8}, "a winner ran to its end"


def test_median_stopping_stops_the_loser_which_returns_early(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sweep = jupyter_sched.sweep(F.train, {"rate": [1.0, 1.0, 0.0, 3.0]}, max_concurrent=4,
                                stop=jupyter_sched.MedianStopping("loss", **RULE))  # fmt: skip
    sweep.wait(timeout=50)
    assert sweep.finished, sweep.counts_text()
    loser = sweep.runs[2]
    assert loser.state == AppState.SUCCEEDED.name, (loser.state, loser.error)
    saw = loser.outcome.value
    assert saw["saw_stop"] is True and saw["steps"] < LOSER_STEPS, saw
    assert loser.stopped is not None and loser.stopped.startswith("stopped at step "), loser.stopped
    assert "loss 10 worse than the median" in loser.stopped and "(of 3 other runs)" in loser.stopped
    assert not loser.stop_cancelled
    directory = sweep.runner.metrics_dir(loser.handle)
    assert os.path.exists(os.path.join(directory, STOP_ALL)), "the stop file is in the run's metrics directory"
    _check_winners(sweep, 2)

    df = sweep.to_dataframe()
    assert df.loc[2, "stopped"] == loser.stopped and df["stopped"].isna().sum() == 3
    assert list(df.columns)[-3:] == ["stopped", "error", "handle"]
    assert sweep.records()[2]["stopped"] == loser.stopped
    names, rows = table_rows(sweep.runs)
    assert rows[2][names.index("stopped")] == loser.stopped, "the live table has the column"
    record = record_bundle(sweep)
    assert loser.stopped in record["text/plain"] and html.escape(loser.stopped) in record["text/html"], (
        "the notebook's saved table shows the reason (its renderer takes every column of the rows)"
    )

    # the metric data: metrics.<key> columns, a long frame over the runs, best by scope
    last = sweep.to_dataframe(metrics="last")
    assert last.loc[2, "metrics.loss"] == 10.0 and last.loc[3, "metrics.loss"] == pytest.approx(1 / 22)
    assert last.loc[0, "metrics.rate"] == 1.0
    assert sweep.to_dataframe(metrics="max").loc[0, "metrics.loss"] == 1.0
    assert sweep.to_dataframe(metrics="best").loc[3, "metrics.loss"] == pytest.approx(1 / 22), "goal min"
    long = sweep.metrics("loss")
    assert list(long.columns) == ["run", "step", "t", "key", "value", "role", "replica"]
    assert set(long["run"]) == {0, 1, 2, 3} and set(long["key"]) == {"loss"}
    assert list(long[long["run"] == 0]["step"]) == list(range(8))
    assert set(sweep.metrics()["key"]) == {"loss", "rate"}
    best = sweep.best(metric="loss", mode="min", scope="last")
    assert best.run.index == 3 and best.value == pytest.approx(1 / 22)
    assert sweep.best(metric="loss", scope="all").run.index == 3
    assert sweep.best(metric="loss", mode="max", scope="avg").run.index == 2, "the loser's mean is 10"
    assert sweep.best(metric="rate", mode="max", scope="last-5-avg").value == 3.0
    # a returned field of the same name still wins: the result's "loss" is the negated step count
    assert sweep.best("loss").value < 0
    assert sweep.best("rate", mode="max").value == 3.0, "no result field 'rate': the logged metric is ranked"
    with pytest.raises(ValueError, match=r"no run has a result field 'nothing'; the fields are: 'saw_stop'"):
        sweep.best("nothing")
    with pytest.raises(ValueError, match=r"no run has logged a value of 'acc'; the logged keys are: 'loss', 'rate'"):
        sweep.best(metric="acc")


def test_a_loser_that_ignores_the_stop_is_cancelled_after_the_grace(tmp_path) -> None:  # type: ignore[no-untyped-def]
    grid = [{"rate": 1.0}, {"rate": 1.0}, {"rate": 3.0}, {"rate": 0.0, "listens": False}]
    sweep = jupyter_sched.sweep(F.train, grid, max_concurrent=4, stop_grace=1.0,
                                stop=jupyter_sched.MedianStopping("loss", **RULE))  # fmt: skip
    sweep.wait(timeout=50)
    assert sweep.finished, sweep.counts_text()
    loser = sweep.runs[3]
    assert loser.state == AppState.CANCELLED.name, (loser.state, loser.error, loser.outcome)
    assert loser.stop_cancelled and loser.stopped is not None and "worse than the median" in loser.stopped
    _check_winners(sweep, 3)
    got = sweep.results(errors="return")
    assert "stopped at step" in str(got[3]), got[3]
    assert sweep.to_dataframe().loc[3, "stopped"] == loser.stopped
    assert jupyter_sched.load_sweep(sweep.name).wait(timeout=30).runs[3].stopped == loser.stopped, "the manifest"

    # launched again, it is a new app: its reason is cleared, its new records are followed, and it is stopped
    # (and cancelled) again, judged against the winners' histories, which ended
    first = loser.handle
    assert list(sweep.retry_failed(cancelled=True)) == [3]
    sweep.wait(timeout=50)
    assert sweep.finished, sweep.counts_text()
    assert loser.attempts == 2 and loser.handle != first
    assert loser.state == AppState.CANCELLED.name and loser.stopped is not None and loser.stop_cancelled
    assert os.path.exists(os.path.join(sweep.runner.metrics_dir(loser.handle), STOP_ALL))


def test_a_function_rule_stops_with_its_reason_and_a_rule_that_raises_turns_stopping_off() -> None:
    """Any callable ``(run, history)`` is a rule; its string is the reason. A rule that raises ends early
    stopping for the sweep (saying so in ``stop_problem``), never the sweep: its runs go on to their end."""

    def too_high(run: Any, history: Any) -> Any:
        return f"loss {run.last('loss')} above 5" if (run.last("loss") or 0) > 5 else None

    grid = [{"rate": 1.0}, {"rate": 0.0}]
    sweep = jupyter_sched.sweep(F.train, grid, max_concurrent=2, stop=too_high)
    sweep.wait(timeout=50)
    assert sweep.finished, sweep.counts_text()
    loser = sweep.runs[1]
    assert loser.state == AppState.SUCCEEDED.name and loser.outcome.value["saw_stop"] is True
    assert loser.stopped is not None and loser.stopped.startswith("stopped at step ")
    assert loser.stopped.endswith(": loss 10.0 above 5"), loser.stopped
    assert sweep.runs[0].stopped is None and sweep.runs[0].outcome.value["steps"] == 8

    def broken(run: Any, history: Any) -> bool:
        raise ZeroDivisionError("the rule's own bug")

    grid = [{"rate": 1.0}, {"rate": 2.0}]
    with pytest.warns(RuntimeWarning, match="early stopping is off"):
        sweep = jupyter_sched.sweep(F.train, grid, max_concurrent=2, stop=broken).wait(timeout=50)
    assert sweep.finished, sweep.counts_text()
    assert [r.state for r in sweep.runs] == [AppState.SUCCEEDED.name] * 2
    assert [r.stopped for r in sweep.runs] == [None, None]
    assert sweep.stop_problem is not None
    assert "the stop rule " in sweep.stop_problem and "broken raised ZeroDivisionError: the rule's own bug" in (
        sweep.stop_problem
    )


def test_median_stopping_on_slurm(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    """The same sweep on the real Slurm cluster: the records and the stop file go through the shared job_dir."""
    sweep = jupyter_sched.sweep(F.train, {"rate": [1.0, 1.0, 0.0, 3.0]}, scheduler="slurm", max_concurrent=4,
                                stop=jupyter_sched.MedianStopping("loss", **RULE))  # fmt: skip
    sweep.wait(timeout=240)
    assert sweep.finished, sweep.counts_text()
    loser = sweep.runs[2]
    assert loser.job_dir.startswith(slurm_cluster.job_root), "it ran through the shared job directory"
    assert loser.state == AppState.SUCCEEDED.name, (loser.state, loser.error)
    assert loser.outcome.value["saw_stop"] is True and loser.outcome.value["steps"] < LOSER_STEPS
    assert loser.stopped is not None and "loss 10 worse than the median" in loser.stopped
    _check_winners(sweep, 2)
    assert sweep.to_dataframe().loc[2, "stopped"] == loser.stopped


def test_median_stopping_on_local_docker(docker_engine) -> None:  # type: ignore[no-untyped-def]
    """local_docker mounts the app's metrics directory into each container: the feeder reads the records the
    containers write there and its stop file is seen inside (the test image lacks jupyter_sched, so the
    function writes the record lines and checks the stop file itself, as any program may)."""
    sweep = jupyter_sched.sweep(F.by_hand, {"rate": [1.0, 1.0, 0.0, 3.0]}, scheduler="local_docker",
                                image="jupyter-sched/python:local", max_concurrent=4,
                                stop=jupyter_sched.MedianStopping("loss", **RULE))  # fmt: skip
    sweep.wait(timeout=120)
    assert sweep.finished, sweep.counts_text()
    loser = sweep.runs[2]
    assert loser.state == AppState.SUCCEEDED.name, (loser.state, loser.error)
    assert loser.outcome.value["saw_stop"] is True and loser.outcome.value["steps"] < LOSER_STEPS
    assert loser.stopped is not None and "loss 10 worse than the median" in loser.stopped
    _check_winners(sweep, 2)
