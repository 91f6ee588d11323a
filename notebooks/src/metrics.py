# Source of notebooks/metrics.ipynb (build: .venv/bin/python scripts/notebooks.py metrics).
# Depends on the local_cwd scheduler and torch (CPU); about a minute on 2 cores. The sweep's grid runs from
# the largest learning rate down, so the first two runs set the bar and every later one is worse than the
# median at every step: which runs are stopped is then the same on every run, only the step they are
# stopped at (and the numbers in the reason) depend on timing, and notebooks/sanitize.cfg masks those.
# min_runs=2, not 3: with 3, the third run could be judged only once the fourth (started later) caught up
# with it, so on a quick machine it sometimes finished unjudged (seen once in 11 builds).

# %% [markdown]
# # Metrics: watch a model learn, and stop the runs that lose
#
# A training function that prints `epoch 3 loss 0.41` leaves you reading numbers in a log. With
# `jupyter_sched.track` it hands them to whoever watches the job instead: the job's pane charts them while
# it runs, `job.metrics()` reads them as a DataFrame, and a sweep uses them to stop its losing runs early.
# No tracking service is involved: the records are files beside the job's logs. You will:
#
# 1. train a small PyTorch model as a function job that logs its loss and accuracy, and watch the charts,
# 2. read what it logged: long, wide and as a summary,
# 3. sweep learning rates with `MedianStopping`, which stops the runs that fall behind,
# 4. rank the runs by what they logged, and read the metrics from the command line.
#
# Everything runs on this machine (`local_cwd`), on CPU, in seconds.

# %%
%load_ext jupyter_sched
import sys

import torch

import jupyter_sched
from jupyter_sched import track

# %% [markdown]
# ## A model that logs
#
# The data: points in the plane, labelled by whether they fall inside a circle, which a linear model
# cannot learn and a two-layer MLP can. `make_data` is seeded, so every run sees the same points.

# %%
def make_data(n: int = 8192) -> tuple:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, 2, generator=gen)
    y = (x.pow(2).sum(dim=1) < 1.4).long()
    split = n * 3 // 4
    return x[:split], y[:split], x[split:], y[split:]

# %% [markdown]
# `train` is ordinary PyTorch plus three calls. `track.define_metric` says which way is better (it is
# kept with the values: charts mark the best point, and `best()` needs no `mode`), `track.log` records one
# step (here an epoch) of any number of keys, `/` grouping them, and `track.should_stop()` is how a sweep
# asks a run to end early (below; alone it is always False). Outside a job every `track` call does
# nothing, so the same function also runs in this kernel.

# %%
def train(lr: float = 0.3, epochs: int = 40) -> dict:
    torch.set_num_threads(1)  # one core per run: two runs at a time fit this machine
    torch.manual_seed(0)
    x, y, x_val, y_val = make_data()
    model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    track.define_metric("loss", goal="min")
    track.define_metric("val/acc", goal="max")
    for epoch in range(epochs):
        total = 0.0
        for i in range(0, len(x), 32):
            loss = torch.nn.functional.cross_entropy(model(x[i : i + 32]), y[i : i + 32])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        with torch.no_grad():
            acc = (model(x_val).argmax(dim=1) == y_val).float().mean().item()
        track.log({"loss": total / (len(x) // 32), "val/acc": acc})
        if track.should_stop():
            break
    return {"val_acc": round(acc, 3), "epochs": epoch + 1}

# %% [markdown]
# ## Live charts in the job's pane
#
# Submit it as any function. The pane grows a **Metrics** section as soon as the first step is logged:
# one small chart per key, the value by step, redrawn as the records arrive (at most twice a second), with
# the last value and the best by the key's goal. When the job ends the cell keeps its final record, charts
# included (as images), so this saved notebook shows the curves without a kernel.

# %%
job = jupyter_sched.submit(train, lr=0.3)
job

# %%
job.result()

# %% [markdown]
# ## What it logged, as data
#
# `job.metrics()` reads the records again, as a pandas DataFrame in long form: one row per step and key,
# with the time it was logged (`t`, dropped here) and which replica logged it. It works while the job
# runs, after it ends, and after a kernel restart (`%sched_job HANDLE` gives back the `job`).

# %%
job.metrics().drop(columns="t").head(6)

# %% [markdown]
# `wide=True` puts each key in its own column, one row per step: what you would plot or compare.

# %%
job.metrics(wide=True).drop(columns="t").round(4).tail(3)

# %% [markdown]
# `job.metrics.summary` is what the replica kept per key without reading every record: the count, the
# last value and its step, the lowest and highest and their steps, and the goal.

# %%
job.metrics.summary

# %% [markdown]
# ## A sweep that stops its losers
#
# Which learning rate? A sweep tries eight, two at a time. The small ones learn slowly, and after a few
# epochs their loss curves say so; without early stopping each would still run all 40 epochs.
# `stop=jupyter_sched.MedianStopping("loss", grace_steps=5, min_runs=2)` is Optuna's median rule: from step
# 5 on, a run whose best loss so far is worse than the median of the other runs' losses at the same step
# (once 2 others have one there) is stopped. The sweep decides in this kernel, from the records it already
# follows: it makes `track.should_stop()` true in that run, which then returns what it has (a run that
# ignored it would be cancelled after a grace period), and its slot goes to the next run.
#
# The table has a column per logged metric, its best cell marked, and says why each stopped run stopped.

# %% tags=["nbval-ignore-output"]
rule = jupyter_sched.MedianStopping("loss", mode="min", grace_steps=5, min_runs=2)
lrs = [0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001]
sweep = jupyter_sched.sweep(train, {"lr": lrs}, max_concurrent=2, stop=rule)
sweep

# %% [markdown]
# The grid starts from the largest rate, so the first two runs finish and set the bar; every later run
# falls behind them within a few epochs and is stopped soon after the grace steps. (At which step exactly
# depends on how fast the machine is: the sweep judges the records it has seen so far.)
#
# ## The sweep as data
#
# `sweep.to_dataframe(metrics="best")` has a row per run with a `metrics.<key>` column per logged key
# (each run's best value by the key's goal) and the `stopped` reason (None for a run that went the whole
# way). A stopped run returned normally, so its state is SUCCEEDED and its result is there too: how many
# epochs it ran before it saw `track.should_stop()`.

# %% tags=["nbval-ignore-output"]
sweep.wait()
df = sweep.to_dataframe(metrics="best")
df[["lr", "state", "epochs", "metrics.loss", "metrics.val/acc", "stopped"]]

# %% [markdown]
# Why each run ended:

# %%
for lr, why in zip(df["lr"], df["stopped"].fillna("ran all 40 epochs")):
    print(f"lr={lr:<6}  {why}")

# %% [markdown]
# The best values of the runs that went the whole way (a stopped run's best depends on when it was
# stopped):

# %%
df[df["stopped"].isna()][["lr", "metrics.loss", "metrics.val/acc"]].round(4)

# %% [markdown]
# `sweep.best(metric=..., scope=...)` ranks the runs by what they logged, with Ray Tune's scopes: `"last"`
# the last value, `"all"` the best of every step, `"avg"` the mean, `"last-5-avg"` the mean of the last
# five steps (NaN skipped). Every run that logged counts, stopped ones too.

# %%
best = sweep.best(metric="loss", mode="min", scope="last-5-avg")
best.run.params, round(best.value, 4)

# %% [markdown]
# `sweep.metrics("loss")` is every run's records of one key as one long DataFrame, with a `run` column:
# ready for a plot of all the curves side by side.

# %%
losses = sweep.metrics("loss")
losses.drop(columns="t").head(3)

# %% [markdown]
# Or for counting what early stopping saved: the epochs the eight runs trained, out of the 320 they would
# have trained without it (the count varies a little with the machine's speed).

# %% tags=["nbval-ignore-output"]
epochs_run = losses.groupby("run")["step"].max() + 1
f"{epochs_run.sum()} epochs of {len(lrs) * 40}"

# %% [markdown]
# ## From the command line
#
# `jupyter-sched metrics HANDLE` prints the same summary in a terminal (`--format csv` or `jsonl` for the
# records, `--follow` while the job runs, `--key` to pick keys). It is run here with the kernel's
# interpreter, as `python -m jupyter_sched`, so it is found wherever this notebook runs; `%sched_metrics
# job` shows the same table in a cell.

# %%
!{sys.executable} -m jupyter_sched metrics {job.handle}

# %% [markdown]
# The records as CSV (here without the `t` column, the seconds since the epoch when each was logged):

# %%
!{sys.executable} -m jupyter_sched metrics {job.handle} --key loss --format csv | cut -d, -f1,3- | head -4
