# Source of notebooks/distributed.ipynb (build: .venv/bin/python scripts/notebooks.py distributed).
# Runs on local_cwd, except the retries section, which needs Docker (local processes are not restarted).

# %% [markdown]
# # Distributed patterns: roles, ranks, failures and retries
#
# A distributed job is several processes that start together, find each other and share the work. In
# jupyter_sched that is an *app* of one or more *roles*, each run as N *replicas*. This notebook shows the
# patterns you need to run one: replicas that know their rank, apps with different roles, what happens
# when one replica fails, retries, and reading the logs of the one replica you care about.
#
# Everything runs on `local_cwd` (replicas are processes on this machine) except retries, which need a
# backend that restarts replicas: Docker here, or Slurm.

# %%
%load_ext jupyter_sched

# %% [markdown]
# ## Ranks: `dist.spmd`
#
# `dist.spmd` runs N copies of one program (single program, multiple data) and tells each its place:
# `RANK` (0..N-1), `WORLD_SIZE`, and `MASTER_ADDR`/`MASTER_PORT`, where rank 0 can be reached. These are
# the variables PyTorch's `init_process_group()` reads, so a DDP script runs unchanged.
#
# `scripts/allreduce.py` is a tiny all-reduce with the standard library: rank 0 listens on `MASTER_PORT`,
# the other ranks connect to `MASTER_ADDR`, every rank contributes a number and learns the sum.

# %%
job = %sched_run --wait dist.spmd --num_replicas 3 --script scripts/allreduce.py
print(*job.logs(), sep="\n")

# %% [markdown]
# Each line starts with `role/replica`, so you can tell the ranks apart in one listing. On this machine
# `MASTER_ADDR` is `localhost`; on Docker it is the name of rank 0's container (see `docker.ipynb`).

# %% [markdown]
# ## Several roles in one app
#
# When processes do different jobs, say a data server and the trainers that read from it, give each kind
# its own role. Roles are written as an `AppDef` in Python; every role has its own command, replica count
# and environment, and all roles start and stop together as one app. The replica id is in
# `JUPYTER_SCHED_REPLICA_ID`, and `${replica_id}` in arguments is replaced per replica.

# %%
import sys

from jupyter_sched.specs import AppDef, Role

server = Role("server", "unused", entrypoint="sh", args=["-c", "echo serving shards 0-2; sleep 1; echo server done"])
trainer = Role(
    "trainer", "unused", entrypoint=sys.executable, num_replicas=2,
    args=["scripts/train.py", "--steps", "4"], env={"RANK": "${replica_id}", "LR": "0.05"},
)
pipeline = AppDef("pipeline", [server, trainer])

# %%
%sched_run --wait pipeline

# %% [markdown]
# The status pane above shows one row per replica of each role. `%sched_logs` can narrow the logs down to a
# role (and replicas with `-r`); from code, `job.logs(role=..., k=...)` does the same.

# %%
%sched_logs pipeline server

# %% [markdown]
# ## When a replica fails
#
# Replicas fail on their own: here rank 1 of 3 exits with code 3 (`--fail-rank 1`) and the other ranks
# finish. The app is FAILED as soon as any replica fails, and the status says which one and how. With
# `--wait` a failed job raises (so Run All stops there); here the cell launches it and `flaky.wait()`
# returns its final status instead.

# %%
flaky = %sched_run dist.spmd --num_replicas 3 --script scripts/train.py --steps 5 --fail-rank 1
flaky.wait()

# %% [markdown]
# ## Reading one replica's logs
#
# With many replicas, look at the one that failed. `job.logs(role, k)` returns its lines (stderr lines
# marked `!`); `%sched_logs flaky train -r 1` shows the same in a live pane.

# %%
print(*flaky.logs(role="train", k=1), sep="\n")

# %% [markdown]
# ## Retries
#
# A replica that fails for a passing reason (a node going away, a full disk, a flaky download) can be
# restarted: `--max_retries N` on a component, `Role(max_retries=N)` in an `AppDef`. The local backend does
# not restart processes; Docker restarts the failed container (only that replica), Slurm requeues.
#
# This replica fails its first attempt and succeeds on the second. The container keeps its files across
# a restart, so the script remembers that it already tried.

# %%
retried = %sched_run --wait -s local_docker utils.sh --image jupyter-sched/busybox:local --max_retries 2 'if [ -e /tmp/tried ]; then echo "attempt 2: ok"; else touch /tmp/tried; echo "attempt 1: failed"; exit 1; fi'
retried.wait()

# %% [markdown]
# The app SUCCEEDED with one restart, and the log keeps the output of both attempts:

# %%
print(*retried.logs(), sep="\n")

# %% [markdown]
# Docker keeps exited containers, with their logs, until they are removed:

# %%
from jupyter_sched.schedulers.docker_scheduler import create_scheduler

create_scheduler("default").cleanup(retried.app_id)
