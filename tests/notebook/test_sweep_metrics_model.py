"""The sweep table's metrics model (``notebook.panes.sweep_metrics``) over a real sweep on local_cwd: runs that
log thousands of steps keep a bounded series with their spike, an ended run is read once more and then never
again, a run launched again is read anew from its new app, NaN is never the best cell, and the chart is drawn
again only after something new was read."""

from __future__ import annotations

import math
import os

import jupyter_sched
from jupyter_sched.frontend.jobs.metric_charts import MAX_POINTS
from jupyter_sched.notebook.panes.sweep_metrics import SweepMetrics
from jupyter_sched.notebook.panes.sweep_view import record_bundle, rows
from jupyter_sched.track.layout import RECORDS_SUFFIX, replica_stem


def _functions():  # type: ignore[no-untyped-def]
    """Made here so that cloudpickle sends them by value (see tests/functions/test_results_data.py)."""

    def train(rate: float, steps: int, fail: bool = False) -> int:
        import math

        from jupyter_sched import track

        track.define_metric("loss", goal="min")
        for step in range(steps):
            loss = 1e6 if step == steps // 3 else 1.0 / (1 + rate * step)
            track.log({"loss": math.nan if rate == 0 and step == steps - 1 else loss, "step_seen": step})
        if fail:
            raise RuntimeError("failing on purpose, after logging")
        return steps

    return train


def test_long_runs_stay_bounded_ended_runs_are_not_read_again_and_nan_is_never_best() -> None:
    train = _functions()
    sweep = jupyter_sched.sweep(train, {"rate": [1.0, 2.0, 0.0], "steps": [6000]}, max_concurrent=3)
    assert sweep.results(timeout=180) == [6000, 6000, 6000]
    model = SweepMetrics()
    assert model.refresh(list(sweep.runs))
    for index in range(3):
        kept = model.runs[index]
        assert kept.final and kept.replica is not None
        points = kept.series["loss"]
        assert len(points) <= 2 * MAX_POINTS and (2000, 1e6) in points, "bounded, the spike kept"
        assert points[-1][0] == 5999
    assert model.keys() == ["loss", "step_seen"] and model.columns() == ["loss", "step_seen"]
    assert math.isnan(model.last(2, "loss") or 0.0), "run 2 ended on NaN"
    assert model.best_run("loss", "min") == 1, "1 / (1 + 2 * 5999) is the lowest; NaN is never the best"
    assert model.best_run("loss", None) is None and model.best_run("step_seen", "max") == 0, "ties: the first"
    chart = model.chart_html()
    assert chart is model.chart_html(), "nothing new read: the same drawing"
    # an ended run is never read again: a line appended to its file now is not seen
    kept = model.runs[0]
    assert kept.directory is not None and kept.replica is not None
    path = os.path.join(kept.directory, replica_stem(*kept.replica) + RECORDS_SUFFIX)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"v":1,"w":"late","seq":1,"t":1.0,"step":6000,"metrics":{"loss":0.0}}\n')
    assert not model.refresh(list(sweep.runs)) and model.last(0, "loss") != 0.0
    assert model.chart_html() is chart


def test_a_run_launched_again_is_read_anew_from_its_new_app() -> None:
    train = _functions()
    sweep = jupyter_sched.sweep(train, [{"rate": 1.0, "steps": 5}, {"rate": 1.0, "steps": 3, "fail": True}])
    sweep.wait(timeout=180)
    model = SweepMetrics()
    model.refresh(list(sweep.runs))
    first = model.runs[1].handle
    assert [p[0] for p in model.runs[1].series["loss"]] == [0, 1, 2]
    sweep.retry_failed()
    sweep.wait(timeout=180)
    assert sweep.runs[1].handle != first
    assert model.refresh(list(sweep.runs)), "the new app is read"
    assert model.runs[1].handle == sweep.runs[1].handle
    assert [p[0] for p in model.runs[1].series["loss"]] == [0, 1, 2], "from its own file, not appended to the old"


def test_a_returned_field_named_like_a_metric_column_is_the_result_column() -> None:
    def train(rate: float) -> dict:
        from jupyter_sched import track

        for step in range(3):
            track.log({"loss": rate * (3 - step)})
        return {"metrics": {"loss": -rate}}  # flattened: the field "metrics.loss", as the metric's column

    sweep = jupyter_sched.sweep(train, {"rate": [1.0, 2.0]})
    sweep.wait(timeout=180)
    text = record_bundle(sweep)["text/plain"]  # reads the runs' metrics
    names, data = rows(sweep)
    assert names.count("metrics.loss") == 1 and "metrics.loss (result)" in names, names
    assert [row[names.index("metrics.loss")] for row in data] == [1.0, 2.0], "the last value logged"
    assert [row[names.index("metrics.loss (result)")] for row in data] == [-1.0, -2.0], "the returned field"
    assert "metrics.loss (result)" in text.splitlines()[1]
