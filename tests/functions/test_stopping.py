"""Early stopping's rules on crafted histories: MedianStopping (Optuna's MedianPruner: the run's best so far
against the median of the others at the same step), SuccessiveHalving (Optuna's asynchronous rungs, by
arrival time), a callable's answers, the reasons' text, and the errors of bad arguments. The rules are
pure functions of the histories, so these need no job; tests/functions/test_sweep_stopping.py runs them
in a real sweep. Also the scopes of ``sweep.best(metric=..., scope=...)`` (Ray Tune's meanings)."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import List, Optional, Sequence

import pytest

import jupyter_sched
from jupyter_sched.functions.sweeps import metric_data, table
from jupyter_sched.functions.sweeps.stopping import (
    MedianStopping,
    Point,
    RunHistory,
    SuccessiveHalving,
    as_rule,
    decide,
)


def run(index: int, losses: Sequence[Optional[float]], t0: float = 0.0, key: str = "loss") -> RunHistory:
    """A run that logged ``losses`` at steps 0, 1, ... (None: nothing at that step), one a second from ``t0``."""
    points = [Point(step, t0 + step, v) for step, v in enumerate(losses) if v is not None]
    return RunHistory(index, {"i": index}, label=f"i={index}", series={key: points})


def test_median_stopping_stops_the_run_whose_best_is_worse_than_the_median_at_that_step() -> None:
    winners = [run(0, [1.0, 0.8, 0.6, 0.5]), run(1, [1.0, 0.7, 0.5, 0.5]), run(2, [1.0, 0.9, 0.7, 0.5])]
    loser = run(3, [1.2, 1.1, 1.0, 0.9])
    history = [*winners, loser]
    rule = MedianStopping("loss", grace_steps=2, min_runs=3)
    assert rule(loser, history) == "stopped at step 3: loss 0.9 worse than the median 0.5 (of 3 other runs)"
    assert [rule(w, history) for w in winners] == [None, None, None], "as good as the median is not worse"


def test_median_stopping_compares_the_best_so_far_not_the_value_at_the_step() -> None:
    """Optuna's and Ray's choice: a run that was good once is judged by its best value up to the step."""
    others = [run(i, [1.0, 0.6, 0.5, 0.5]) for i in range(3)]
    dipped = run(3, [1.0, 0.3, 0.9, 0.9])  # at step 3 it logs 0.9 > 0.5, but its best so far, 0.3, is not worse
    assert MedianStopping("loss", grace_steps=0)(dipped, [*others, dipped]) is None


def test_median_stopping_waits_for_grace_steps_and_min_runs() -> None:
    others = [run(i, [0.1, 0.1, 0.1]) for i in range(3)]
    loser = run(3, [9.0, 9.0, 9.0])
    history = [*others, loser]
    assert MedianStopping("loss", grace_steps=3)(loser, history) is None, "steps 0-2 are in the grace period"
    assert MedianStopping("loss", grace_steps=0, min_runs=4)(loser, history) is None, "3 others, 4 needed"
    assert MedianStopping("loss", grace_steps=2)(loser, history) == (
        "stopped at step 2: loss 9 worse than the median 0.1 (of 3 other runs)"
    )


def test_a_run_ahead_of_the_others_is_judged_at_the_latest_step_they_reached() -> None:
    others = [run(i, [1.0, 0.5, 0.4]) for i in range(3)]
    fast = run(3, [1.0, 0.9, 0.8, 0.7, 0.6, 0.1])  # at step 5 it is the best, but nobody else is there
    assert MedianStopping("loss", grace_steps=1)(fast, [*others, fast]) == (
        "stopped at step 2: loss 0.8 worse than the median 0.4 (of 3 other runs)"
    )


def test_median_stopping_by_max_and_with_nan() -> None:
    others = [run(i, [0.5, 0.8], key="acc") for i in range(2)] + [run(2, [0.5, math.nan], key="acc")]
    low = run(3, [0.5, 0.6], key="acc")
    rule = MedianStopping("acc", mode="max", grace_steps=1, min_runs=2)
    assert rule(low, [*others, low]) == "stopped at step 1: acc 0.6 worse than the median 0.8 (of 2 other runs)"
    assert MedianStopping("acc", mode="max", grace_steps=1, min_runs=3)(low, [*others, low]) is None, (
        "a NaN is no value: only 2 others count at step 1"
    )
    diverged = run(4, [math.nan, math.nan], key="acc")
    assert rule(diverged, [*others, diverged]) == "stopped at step 1: acc is NaN, the median of 2 other runs 0.8"


def test_successive_halving_keeps_the_best_fraction_of_those_that_reached_a_rung_first() -> None:
    """Optuna's asynchronous rule: at rung 0 (step 1) a run goes on if it is in the best 1/2 of the runs that
    had reached step 1 by the time it did, itself included; the first to arrive always goes on."""
    rule = SuccessiveHalving("loss", min_steps=1, reduction_factor=2)
    first = run(0, [1.0, 0.5, 0.45], t0=0)  # reaches step 1 at t=1, alone
    worse_later = run(1, [1.0, 0.9], t0=1)  # t=2: [0.5, 0.9] -> the best 1 of 2 is 0.5
    better_later = run(2, [1.0, 0.4], t0=2)  # t=3: [0.5, 0.9, 0.4] -> the best 1 of 3 is 0.4
    history = [first, worse_later, better_later]
    assert rule(first, history) is None
    assert rule(better_later, history) is None
    assert rule(worse_later, history) == (
        "stopped at step 1: loss 0.9 worse than 0.5, the cutoff of the best 1 of 2 runs at rung 0 (step 1)"
    )
    # rung 1 is step 2: the first there goes on, a later and worse one does not
    slow = run(3, [1.0, 0.45, 0.6], t0=3)  # step 1 at t=4: [0.5, 0.9, 0.4, 0.45] -> best 2 of 4: cutoff 0.45
    history.append(slow)
    assert rule(slow, history) == (
        "stopped at step 2: loss 0.6 worse than 0.45, the cutoff of the best 1 of 2 runs at rung 1 (step 2)"
    )


def test_successive_halving_stops_a_nan_and_honours_bootstrap_count() -> None:
    nan = run(0, [1.0, math.nan])
    assert SuccessiveHalving("loss", min_steps=1)(nan, [nan]) == "stopped at step 1: loss is NaN at rung 0 (step 1)"
    alone = run(1, [1.0, 0.5])
    assert SuccessiveHalving("loss", min_steps=1, bootstrap_count=1)(alone, [alone]).startswith(
        "stopped at step 1: rung 0 (step 1) had seen 1 runs"
    )
    assert SuccessiveHalving("loss", min_steps=4)(alone, [alone]) is None, "not at the first rung yet"


def test_a_callable_rule_says_true_or_a_reason() -> None:
    r = run(0, [1.0, 2.0, 4.0])

    def diverging(run: RunHistory, history: List[RunHistory]) -> bool:
        return (run.last("loss") or 0) > 3

    assert decide(diverging, r, [r]) == (
        "stopped at step 2: test_a_callable_rule_says_true_or_a_reason.<locals>.diverging said so"
    )
    assert decide(lambda run, history: "loss above 3", r, [r]) == "stopped at step 2: loss above 3"
    assert decide(lambda run, history: "stopped: my words", r, [r]) == "stopped: my words"
    assert decide(lambda run, history: False, r, [r]) is None
    with pytest.raises(TypeError, match=r"returned 1\.5 \(a float\): return True or a reason string"):
        decide(lambda run, history: 1.5, r, [r])


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: MedianStopping("loss", mode="minimize"), ValueError, r"\(mode='minimize'\): give mode=\"min\""),
        (lambda: MedianStopping("loss", grace_steps=-1), ValueError, r"grace_steps=-1\): give an integer of 0 or more"),
        (lambda: MedianStopping("loss", min_runs=0), ValueError, r"min_runs=0\): give an integer of 1 or more"),
        (lambda: MedianStopping("loss", grace_steps=2.5), TypeError, r"grace_steps=2.5\): give an integer"),
        (lambda: MedianStopping("val loss"), ValueError, r"MedianStopping\(metric=...\): metric key 'val loss'"),
        (lambda: SuccessiveHalving("loss", reduction_factor=1), ValueError, r"reduction_factor=1\): give an int"),
        (lambda: SuccessiveHalving("loss", mode="best"), ValueError, r"SuccessiveHalving\(mode='best'\)"),
        (lambda: SuccessiveHalving("loss", min_steps=0), ValueError, r"min_steps=0\): give an integer of 1 or more"),
        (lambda: as_rule("median"), TypeError, r"stop='median' \(a str\): give jupyter_sched.MedianStopping"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_field_and_the_fix(make, error, words) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=words):
        make()


def test_a_bad_stop_fails_the_sweep_before_anything_is_prepared() -> None:
    with pytest.raises(TypeError, match=r"stop=3 \(a int\)"):
        jupyter_sched.sweep(lambda x: x, {"x": [1]}, stop=3)
    with pytest.raises(ValueError, match=r"stop_grace=-1: give the seconds"):
        jupyter_sched.sweep(lambda x: x, {"x": [1]}, stop=MedianStopping("loss"), stop_grace=-1)
    with pytest.raises(TypeError, match=r"stop='loss' \(a str\)"):
        jupyter_sched.map(lambda x: x, [1], stop="loss")


def test_the_rules_are_exported_from_the_package() -> None:
    assert jupyter_sched.MedianStopping is MedianStopping
    assert jupyter_sched.SuccessiveHalving is SuccessiveHalving


def test_best_scopes_are_ray_tunes_with_nan_skipped() -> None:
    values = [5.0, 1.0, 4.0, 3.0, 2.0, 6.0]
    assert metric_data.score(values, "min", "last") == 6.0
    assert metric_data.score(values, "min", "all") == 1.0
    assert metric_data.score(values, "max", "all") == 6.0
    assert metric_data.score(values, "min", "avg") == 3.5
    assert metric_data.score(values, "min", "last-5-avg") == 3.2
    assert metric_data.score(values, "min", "last-2-avg") == 4.0
    assert metric_data.score([], "min", "last") is None
    with pytest.raises(ValueError, match=r"best\(scope='first'\): give scope=\"last\""):
        metric_data.check_scope("first")
    with pytest.raises(ValueError, match=r"to_dataframe\(metrics='mean'\): give metrics=\"last\""):
        metric_data.check_how("mean")


def test_metric_columns_join_the_records_and_a_result_field_of_their_name_moves_aside() -> None:
    """``to_dataframe(metrics=...)``'s cells: ``metrics.<key>`` per run; a returned ``{"metrics": {"acc": ..}}``
    would be ``metrics.acc`` too, so it becomes ``result.metrics.acc`` (as a field named like a column does)."""
    done = SimpleNamespace(index=0, params={"lr": 1}, state="SUCCEEDED", error="", launched=None, started=None,
                           ended=None, status=None, handle="h", stopped="stopped at step 3: loss 2 worse",
                           outcome=SimpleNamespace(ok=True, value={"metrics": {"acc": 1.0}, "loss": 2.0}))  # fmt: skip
    row = table.records([done], {0: {"metrics.acc": 0.5, "metrics.loss": 2.5}})[0]
    assert row["result.metrics.acc"] == 1.0 and row["metrics.acc"] == 0.5 and row["metrics.loss"] == 2.5
    assert row["loss"] == 2.0 and row["stopped"] == "stopped at step 3: loss 2 worse"
    assert list(row)[-3:] == ["stopped", "error", "handle"]  # the handle last: what runs are compared by first
    assert table.records([done])[0]["metrics.acc"] == 1.0, "without metric columns the field keeps its name"


def test_metric_cells_come_from_rank_0s_summary_or_its_records(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rank 0 is the run's role's replica 0; without a summary file (a replica killed before its first one)
    the stats are made from its records. A run's directory comes from its runner (any object with
    ``metrics_dir``: here one that names a directory of hand-written files)."""
    lines = [
        '{"v":1,"seq":0,"t":1.0,"define":{"loss":"min"}}',
        '{"v":1,"seq":1,"t":2.0,"step":0,"metrics":{"loss":0.9}}',
        '{"v":1,"seq":2,"t":3.0,"step":1,"metrics":{"loss":0.4}}',
        '{"v":1,"seq":3,"t":4.0,"step":2,"metrics":{"loss":"NaN"}}',
        '{"v":1,"seq":4,"t":5.0,"step":3,"metrics":{"loss":0.6}}',
    ]
    (tmp_path / "train.0.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "train.1.jsonl").write_text('{"v":1,"seq":0,"t":1.0,"step":0,"metrics":{"loss":0.1}}\n')
    runner = SimpleNamespace(metrics_dir=lambda handle: str(tmp_path))
    run = SimpleNamespace(index=0, handle="h", job=SimpleNamespace(runner=runner, role="train"))
    assert metric_data.summary_columns([run], "last") == {0: {"metrics.loss": 0.6}}
    assert metric_data.summary_columns([run], "best") == {0: {"metrics.loss": 0.4}}, "the goal is min"
    assert metric_data.values(run, "loss") == [0.9, 0.4, 0.6], "rank 0's values, NaN left out"
    assert metric_data.best([run], "loss", scope="avg").value == pytest.approx(1.9 / 3)
