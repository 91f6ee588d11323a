# Source of notebooks/slurm.ipynb (build: .venv/bin/python scripts/notebooks.py slurm).
# Needs a running Slurm cluster with 4 nodes: sudo bash scripts/setup/slurm.sh (see docs/slurm.md).
# Uses the Python API only (jupyter_sched.runner), no magics.

# %% [markdown]
# # Slurm: the same jobs on a cluster
#
# When one machine is no longer enough, the app you ran with `local_cwd` can run on a Slurm cluster
# unchanged: same `AppDef`, same `Runner` calls, same log lines. Only the scheduler name (`"slurm"`) and
# a few run options change. This notebook runs an app of two roles on a cluster, follows a replica's
# log while it runs, reads every replica's state and logs, cancels a job, and shows what happens when an
# app cannot fit the cluster.

# %% [markdown]
# ## A cluster to talk to
#
# `sudo bash scripts/setup/slurm.sh` installs Debian's Slurm packages and starts a small cluster on this
# machine: one controller and four `slurmd` "nodes" with 2 CPUs and 4000 MB each. On a real cluster you
# skip this: the notebook only needs Slurm's client commands (`sbatch`, `squeue`, `sacct`...) on `PATH`.

# %%
import subprocess

nodes = subprocess.run(["sinfo", "--noheader", "--Node", "--format=%N %P %c %m"], capture_output=True, text=True)
for line in nodes.stdout.splitlines():
    name, partition, cpus, memory = line.split()
    print(f"{name}: partition {partition}, {cpus} CPUs, {memory} MB")

# %% [markdown]
# ## A runner, and where the job files go
#
# Each app gets a directory holding its batch script and every replica's logs. The nodes write the logs
# and this notebook reads them, so on a real cluster that directory must be on storage both see (the
# default, under your home directory, usually is). The local cluster shares this machine's disk, so a
# throwaway directory will do here.

# %%
import sys
import tempfile
import time

from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, AppState, InvalidAppError, Role, macros, resource

runner = get_runner("slurm-tutorial", job_root=tempfile.mkdtemp(prefix="jsched-slurm-"))
cfg = {"time": "5"}  # run options: a 5-minute limit; see the end of the notebook for all of them

# %% [markdown]
# ## The app
#
# Two trainers run `scripts/train.py` (a progress bar, a warning, a summary) and one reader reports where
# rank 0 runs. Macros are filled in per replica: `${replica_id}` becomes 0 or 1, and `${rank0_env}`
# becomes the *name* of the variable holding rank 0's address, which the shell expands.
# `resource` says what each replica needs; Slurm reserves it.

# %%
trainer = Role(
    "trainer", "unused", entrypoint=sys.executable, args=["scripts/train.py", "--steps", "5"],
    env={"RANK": macros.replica_id}, num_replicas=2, resource=resource(cpu=1, memMB=256),
)  # fmt: skip
reader = Role(
    "reader", "unused", entrypoint="sh", args=["-c", 'echo "reader: rank 0 is at $(printenv $0)"', macros.rank0_env],
    resource=resource(cpu=1, memMB=256),
)  # fmt: skip
app = AppDef("train", [trainer, reader])

# %% [markdown]
# ## Dry run: what Slurm will get
#
# Each replica becomes one component of a *heterogeneous job*, with its own node, CPUs and memory. The
# dry run already asked the cluster (`sinfo`) whether that fits, so an impossible app is refused here
# instead of waiting in the queue forever.

# %%
info = runner.dryrun(app, "slurm", cfg)
print(info.request.capacity)
for r in info.request.to_json()["replicas"]:
    print(f"{r['role']}[{r['replica_id']}] -> component {r['component']}: {' '.join(r['sbatch'][1:])}")

# %% [markdown]
# The batch script is an ordinary one: you could submit it yourself with `sbatch`. One `srun` starts every
# replica; each runs under a small wrapper that writes its stdout, stderr and both combined into the
# app's directory.

# %%
print(info.request.script)

# %% [markdown]
# ## Run it and follow a replica
#
# `schedule` submits the script with `sbatch`. The handle ends with the Slurm job id, so `squeue` and
# `sacct` show the same job. `log_lines(..., should_tail=True)` follows a replica from the queue to its
# end, with progress frames (`\r`) as their own items, exactly as on the local backend.

# %% tags=["nbval-ignore-output"]
handle = runner.schedule(info)
print(handle)

# %%
for line in runner.log_lines(handle, "trainer", k=0, should_tail=True):
    print(line, end="")

# %% [markdown]
# ## Wait, then read every replica
#
# `wait` polls Slurm until the app ends. Each replica's state and exit code come from Slurm's own record of
# its step, and each replica ran on a node of its own.

# %%
status = runner.wait(handle, timeout=120)
print(status.format())

# %%
hosts = [replica.hostname for role in status.roles for replica in role.replicas]
print(f"{len(hosts)} replicas on {len(set(hosts))} different nodes")

# %% [markdown]
# Logs are kept per replica and per stream (`stdout`, `stderr`, or `combined`, the default).

# %%
print("".join(runner.log_lines(handle, "reader")), end="")
print("".join(runner.log_lines(handle, "trainer", k=1, streams="stderr")), end="")

# %% [markdown]
# ## Find jobs again
#
# `list` shows the apps this session submitted, from any process, with their state as Slurm reports it.
# A handle is all another process (or this notebook after a restart) needs for status and logs.

# %%
[(entry.name, str(entry.state)) for entry in runner.list("slurm")]

# %% [markdown]
# ## Cancel
#
# `cancel` runs `scancel` and returns at once; Slurm stops every replica and the app ends CANCELLED.

# %%
sleeper = runner.run(AppDef("sleeper", [Role("main", "unused", entrypoint="sleep", args=["600"])]), "slurm", cfg)
while runner.status(sleeper).state != AppState.RUNNING:
    time.sleep(0.2)
runner.cancel(sleeper)
runner.wait(sleeper, timeout=60).state

# %% [markdown]
# ## When an app cannot fit
#
# Every replica needs a node of its own, and no node here has 8 CPUs. Slurm itself would accept such a job
# and leave it pending forever (holding up others); the dry run and `run` refuse it and say why.

# %%
too_big = AppDef("big", [Role("main", "unused", entrypoint="true", num_replicas=2, resource=resource(cpu=8))])
try:
    runner.run(too_big, "slurm", cfg)
except InvalidAppError as e:
    print(e)

# %% [markdown]
# ## Run options
#
# Partition, time limit, account, QoS, node features, mail, the job directory and more. Pass them as `cfg`
# (or `--cfg key=value` on the command line). docs/slurm.md explains each and the whole mapping.

# %%
print(runner.scheduler_run_opts("slurm"))

# %%
runner.close()
