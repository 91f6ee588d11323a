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
# 5. sweep a grid of parameters, a few runs at a time, into one table.

# %%
%load_ext jupyter_sched
import os

import jupyter_sched

# %% [markdown]
# ## Submit a function, get its value
#
# `train` reads `dataset`, a variable of this notebook: the function, its closure and the globals it uses
# are pickled with cloudpickle into the app's job directory, and each replica unpickles and calls it.
# `job` is the same `Job` that `%sched_run` returns (display it for the live panes; its prints are in its
# logs), and `job.result()` waits and returns rank 0's return value.

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
# and `jupyter_sched.load_sweep(sweep.name)` finds the finished runs and their results
# again after a kernel restart.

# %%
best = min(zip(sweep.runs, results), key=lambda pair: pair[1]["loss"])
best[0].params
