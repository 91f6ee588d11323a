# Source of notebooks/functions.ipynb (build: .venv/bin/python scripts/notebooks.py functions).
# Depends only on the local_cwd scheduler; the same calls take scheduler="local_docker" or "slurm".

# %% [markdown]
# # Functions and sweeps: run the notebook's own Python
#
# A component turns a script into an app. Often there is no script yet: the code is a function in this
# notebook. `jupyter_sched.submit(fn, *args, **kwargs)` runs it as an app (in a process here, a container
# with `scheduler="local_docker"`, a Slurm job with `scheduler="slurm"`) and brings its return value back,
# the way `executor.submit(fn).result()` does in submitit or `client.submit` in dask, but with this
# project's panes, dry runs and backends. You will:
#
# 1. submit a function (a closure over a notebook variable) and get its value,
# 2. run it on two replicas that know their rank,
# 3. see a remote exception and an object that cannot be sent,
# 4. launch a function from `%sched_run` with flags, and dry-run it,
# 5. sweep a grid of parameters, a few runs at a time, into one table,
# 6. treat the results as data: a DataFrame, the best run, retrying what failed, re-running a call here.

# %%
%load_ext jupyter_sched
import os

import jupyter_sched

# %% [markdown]
# ## Submit a function, get its value
#
# `train` reads `dataset`, a variable of this notebook: the function, its closure and the globals it uses
# are pickled with cloudpickle into the app's job directory, and each replica unpickles and calls it.
# `job` is the same `Job` that `%sched_run` returns: assigning it shows its live panes (its prints are in
# its logs), and `job.result()` waits and returns rank 0's return value.

# %%
dataset = list(range(10))


def train(lr: float = 0.1, epochs: int = 1) -> dict:
    print(f"training on {len(dataset)} samples, lr={lr}")
    loss = sum(dataset) / (1 + lr * 10 * epochs)
    return {"loss": round(loss, 3), "epochs": epochs}


job = jupyter_sched.submit(train, lr=0.5, epochs=2)
job.result()

# %%
job

# %%
job.logs()

# %% [markdown]
# ## Replicas know their rank
#
# With `num_replicas=N` every replica calls the function, with `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and
# `MASTER_PORT` in its environment (as `dist.spmd` sets them, so `torch.distributed` initialises with no
# arguments). `job.results()` is every replica's value, in rank order.

# %%
def whoami() -> str:
    return f"rank {os.environ['RANK']} of {os.environ['WORLD_SIZE']}"


jupyter_sched.submit(whoami, num_replicas=2).results()

# %% [markdown]
# ## When it raises, and what cannot be sent
#
# A function that raises re-raises here as `FunctionError`, carrying the replica and the traceback the
# replica printed (it starts at your function, not in jupyter_sched). Without the `try` the cell shows
# that traceback as its error.

# %%
from jupyter_sched.functions import FunctionError, UnpicklableError


def evaluate(split: str) -> float:
    scores = {"train": 0.9}
    return scores[split]


try:
    jupyter_sched.submit(evaluate, "test").result()
except FunctionError as e:
    print("replica", e.replica.split("/")[-1], "raised", e.exc_type)
    print(e.remote_traceback.strip().splitlines()[-1])

# %% [markdown]
# Open files, locks, clients and the kernel itself cannot leave this process. They are refused before
# anything is launched, naming where the call reaches them:

# %%
import threading

cache_lock = threading.Lock()


def cached_train() -> None:
    with cache_lock:
        pass


try:
    jupyter_sched.submit(cached_train)
except UnpicklableError as e:
    print(e.path)

# %% [markdown]
# ## From the magic
#
# `%sched_run` runs a notebook function too: name it like a component, and its signature becomes its
# flags (`--lr 0.3`, converted by the annotations). Run options come first as usual (`-s`, `--cfg`,
# `--wait`, `--dryrun`); `--num_replicas`, `--image`, `--h` and `--name` are the job's. `--dryrun`
# shows the function, where it is defined, its pickled size, the interpreter and the image, then the
# scheduler's request.

# %%
%sched_run --dryrun train --lr 0.3 --epochs 3

# %%
job = %sched_run --wait --quiet train --lr 0.3 --epochs 3

# %%
job.result()

# %% [markdown]
# ## A sweep
#
# `jupyter_sched.sweep(fn, grid, max_concurrent=N)` runs `fn(**point)` for each point: a list of keyword
# dicts, or a dict of lists meaning their product. At most `max_concurrent` run at a time; the rest wait
# in the kernel. Its display is one table, a row per run: parameters, state, elapsed time, and the scalars
# of the returned dict as columns (sort by any of them in the live view; Cancel all; pick a run to see
# its panes). In a saved notebook the table's final state stays, no widget manager needed.

# %% tags=["nbval-ignore-output"]
sweep = jupyter_sched.sweep(train, {"lr": [0.1, 0.3, 1.0], "epochs": [1, 2]}, max_concurrent=2)
sweep

# %% [markdown]
# `sweep.results()` waits and returns the values in grid order (the product's order: the last key varies
# fastest).

# %%
results = sweep.results()
[(run.params["lr"], run.params["epochs"], r["loss"]) for run, r in zip(sweep.runs, results)]

# %% [markdown]
# Each run is an ordinary app of the session named `<sweep>-NNN`, so `%sched_list` shows them together,
# and `jupyter_sched.load_sweep(sweep.name)` finds the runs and their results again after a kernel
# restart. The table keeps its controls after the end: sort by any column, in either direction, or pick a
# run and show its panes. `sweep.sort("loss")` does the same from code, and the saved notebook keeps the
# table as sorted.
#
# ## Results as data
#
# `sweep.to_dataframe()` is a pandas DataFrame with one row per run: the parameters, the state, when it
# was submitted, started and ended, its peak memory and CPU time, the returned dict's fields (nested
# dicts flattened as `metrics.acc`) and the error, if any. (pandas is optional: install it to use this;
# `sweep.records()` gives the same rows as dicts.)

# %%
df = sweep.to_dataframe()
df[["lr", "epochs", "state", "loss"]].sort_values("loss")

# %% [markdown]
# `sweep.best(key)` is the run with the lowest value of a result field (`mode="max"` for the highest),
# and that value; the run's `params` are what to train with next, its `job` has its logs.

# %%
best = sweep.best("loss")
best.run.params, best.value

# %% [markdown]
# ## When some runs fail: retry them, or run one here
#
# `jupyter_sched.map(fn, items)` calls `fn` on each item. A map of a few items runs an app per item: a sweep
# over one argument (a long map runs its items in chunks, an app per chunk: see docs/functions.md). Here one
# shard of the data is missing, so one run fails. `results()` would raise that run's error, naming the item
# by its index and value (`#2 (shard='c')`) and saying how to get the others: `errors="return"` puts each
# error in its run's place, `errors="skip"` leaves them out.

# %%
import tempfile

shards = tempfile.mkdtemp(prefix="jsched-shards-")
for name, text in {"a": "3 1 4", "b": "1 5 9 2 6"}.items():
    with open(os.path.join(shards, f"{name}.txt"), "w") as f:
        f.write(text)


def count(shard: str) -> int:
    with open(os.path.join(shards, f"{shard}.txt")) as f:
        return len(f.read().split())


counts = jupyter_sched.map(count, ["a", "b", "c"], max_concurrent=3)
counts.results(errors="return")

# %% [markdown]
# `counts.rerun_here(2)` calls run 2's function with its arguments in this kernel (so does
# `error.rerun_here()` on the error itself): it raises the same error here, where `%debug` opens the
# failing frame with its variables, and a `breakpoint()` in the function would stop. Each frame shows its
# cell and source line.

# %%
try:
    counts.rerun_here(2)
except FileNotFoundError as e:
    print("here too:", e.strerror, os.path.basename(e.filename))

# %% [markdown]
# Once the cause is fixed, `retry_failed()` launches only the failed runs again, in the same sweep (its
# table updates; `load_sweep(name).retry_failed()` works after a restart too), and `results()` has every
# value.

# %%
with open(os.path.join(shards, "c.txt"), "w") as f:
    f.write("2 7")
counts.retry_failed()
counts.results()

# %% [markdown]
# For jobs submitted one by one, `job.exception()` is what `job.result()` would raise (None when it
# succeeded), and `jupyter_sched.as_completed(jobs)` yields the jobs as they end, whichever ends first.

# %%
jobs = [jupyter_sched.submit(count, name) for name in ["a", "b"]]
sorted(job.result() for job in jupyter_sched.as_completed(jobs))
