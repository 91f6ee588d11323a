"""Checks that early stopping's rules decide as Optuna's pruners do, on the same random histories.

    pip install --target /tmp/optuna-env optuna              # Optuna is not a dependency: anywhere importable
    .venv/bin/python scripts/optuna_yardstick.py --path /tmp/optuna-env [--sweeps 200] [--seed 0]

``MedianStopping`` and ``SuccessiveHalving`` (``jupyter_sched/functions/sweeps/stopping.py``) say they have the
semantics of Optuna's ``MedianPruner`` and ``SuccessiveHalvingPruner``. This runs both on the same sweeps:
random noisy learning curves (3 to 12 runs of 5 to 30 steps, minimised or maximised, random grace, minimum
runs, first rung and reduction factor), the runs one after another as an Optuna study runs trials (a
report and a ``should_prune()`` at each step; a pruned trial stops there). Ours gets each run's history as
it grows, with the run's steps timed in that order. Two differences are by design and set up alike here:
Optuna's median counts only COMPLETE trials (ours counts every other run that reached the step, running or
stopped, as Ray Tune's rule does; here the others are the completed runs), and Optuna's rungs are
judged in the order trials reached them (ours by the records' timestamps, which here are that order). It
prints each sweep whose decisions (the step each run was stopped at, or none) differ and exits 1 if any do.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any, List, Optional


def curves(rng: random.Random, runs: int, steps: int) -> List[List[float]]:
    """Noisy falling curves a / (1 + b * step) + noise, one per run."""
    out = []
    for _ in range(runs):
        a, b = rng.uniform(0.2, 2.0), rng.uniform(0.01, 0.5)
        out.append([a / (1 + b * s) + rng.gauss(0, 0.05) for s in range(steps)])
    return out


def with_optuna(optuna: Any, pruner: Any, data: List[List[float]], direction: str) -> List[Optional[int]]:
    study = optuna.create_study(pruner=pruner, direction=direction)
    decisions: List[Optional[int]] = []
    for values in data:
        trial = study.ask()
        pruned_at = None
        for step, value in enumerate(values):
            trial.report(value, step)
            if trial.should_prune():
                pruned_at = step
                break
        if pruned_at is None:
            study.tell(trial, values[-1])
        else:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        decisions.append(pruned_at)
    return decisions


def with_ours(rule: Any, data: List[List[float]], completed_only: bool) -> List[Optional[int]]:
    from jupyter_sched.functions.sweeps.stopping import Point, RunHistory

    histories: List[Any] = []
    decisions: List[Optional[int]] = []
    for index, values in enumerate(data):
        me = RunHistory(index, {}, series={"loss": []})
        pruned_at = None
        for step, value in enumerate(values):
            me.series["loss"].append(Point(step, index * 1000.0 + step, value))
            others = [h for h in histories if h.done or not completed_only]
            if rule(me, [*others, me]) is not None:
                pruned_at = step
                break
        me.done = pruned_at is None  # completed, as Optuna counts it
        histories.append(me)
        decisions.append(pruned_at)
    return decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", help="a directory to import optuna from (pip install --target DIR optuna)")
    parser.add_argument("--sweeps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.path:
        sys.path.append(args.path)
    import optuna

    from jupyter_sched.functions.sweeps.stopping import MedianStopping, SuccessiveHalving

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = random.Random(args.seed)
    checked = differ = 0
    for _ in range(args.sweeps):
        data = curves(rng, rng.randint(3, 12), rng.randint(5, 30))
        mode = rng.choice(["min", "max"])
        direction = "minimize" if mode == "min" else "maximize"
        grace, min_runs = rng.randint(0, 4), rng.randint(1, 3)
        median = optuna.pruners.MedianPruner(n_startup_trials=0, n_warmup_steps=grace, n_min_trials=min_runs)
        theirs = with_optuna(optuna, median, data, direction)
        ours = with_ours(MedianStopping("loss", mode=mode, grace_steps=grace, min_runs=min_runs), data, True)
        checked, differ = checked + 1, differ + (theirs != ours)
        if theirs != ours:
            print(f"MedianStopping differs (mode={mode}, grace={grace}, min_runs={min_runs}): {theirs} vs ours {ours}")
        min_steps, factor = rng.randint(1, 3), rng.choice([2, 3, 4])
        halving = optuna.pruners.SuccessiveHalvingPruner(min_resource=min_steps, reduction_factor=factor)
        theirs = with_optuna(optuna, halving, data, direction)
        rule = SuccessiveHalving("loss", mode=mode, min_steps=min_steps, reduction_factor=factor)
        ours = with_ours(rule, data, False)
        checked, differ = checked + 1, differ + (theirs != ours)
        if theirs != ours:
            print(f"SuccessiveHalving differs (mode={mode}, min_steps={min_steps}, factor={factor}): {theirs} vs"
                  f" ours {ours}")  # fmt: skip
    print(f"{checked - differ}/{checked} sweeps decided as Optuna {optuna.__version__} decides them")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
