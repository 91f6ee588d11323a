"""A sweep with early stopping against the same sweep without: CPU seconds spent and the best result found.

    .venv/bin/python benchmarks/bench_stopping.py [--epochs 100] [--concurrent 4] [--rounds 1]

Sixteen runs of a small CPU PyTorch model (an MLP on a fixed synthetic regression set, one thread each),
over a grid of learning rates and momenta, on local_cwd: once with ``stop=MedianStopping("val_loss",
grace_steps=10, min_runs=3)``, once without, alternating round by round. Each run logs its validation loss
per epoch with ``jupyter_sched.track``, checks ``track.should_stop()``, and returns its best validation
loss. Printed per sweep: the CPU seconds of all runs (the backend's per-replica totals, torch's import
included), the wall time, how many runs were stopped, and the best ``best_val`` found (with its run).
Needs torch (CPU build) and pandas.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import note  # noqa: E402

import jupyter_sched  # noqa: E402

GRID = {"lr": [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1], "momentum": [0.0, 0.9]}


def make_train(epochs: int) -> Any:
    """The run's function, made here so cloudpickle sends it by value."""

    def train(lr: float, momentum: float) -> Dict[str, Any]:
        import torch

        from jupyter_sched import track

        torch.set_num_threads(1)
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(5120, 32, generator=gen)
        w = torch.randn(32, 1, generator=gen)
        y = torch.tanh(x @ w) + 0.1 * torch.randn(5120, 1, generator=gen)
        x_train, y_train, x_val, y_val = x[:4096], y[:4096], x[4096:], y[4096:]
        torch.manual_seed(1)
        model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
        track.define_metric("val_loss", goal="min")
        best = float("inf")
        for epoch in range(epochs):
            for i in range(0, len(x_train), 64):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x_train[i : i + 64]), y_train[i : i + 64])
                loss.backward()
                opt.step()
            with torch.no_grad():
                val = torch.nn.functional.mse_loss(model(x_val), y_val).item()
            best = min(best, val) if val == val else best
            track.log({"val_loss": val, "train_loss": loss.item()})
            if track.should_stop():
                return {"best_val": best, "epochs": epoch + 1}
        return {"best_val": best, "epochs": epochs}

    return train


def one(epochs: int, concurrent: int, stop: bool) -> Dict[str, Any]:
    rule = jupyter_sched.MedianStopping("val_loss", grace_steps=10, min_runs=3) if stop else None
    start = time.monotonic()
    sweep = jupyter_sched.sweep(make_train(epochs), GRID, max_concurrent=concurrent, stop=rule)
    sweep.wait()
    wall = time.monotonic() - start
    df = sweep.to_dataframe()
    best = sweep.best("best_val")
    return {
        "cpu_s": float(df["cpu_seconds"].sum()), "wall_s": wall, "stopped": int(df["stopped"].notna().sum()),
        "epochs": int(df["epochs"].sum()), "best": best.value, "best_run": best.run.label,
        "states": sweep.counts_text(),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    for r in range(args.rounds):
        for stop in (r % 2 == 0, r % 2 == 1):
            got = one(args.epochs, args.concurrent, stop)
            name = f"sweep of 16, {'MedianStopping' if stop else 'no stopping'}, round {r + 1}"
            note(name, f"{got['cpu_s']:.1f} CPU s, {got['wall_s']:.1f} s wall, {got['stopped']} stopped,"
                       f" {got['epochs']} epochs in all, best best_val {got['best']:.5f} ({got['best_run']});"
                       f" {got['states']}", stop=stop, **got)  # fmt: skip


if __name__ == "__main__":
    main()
