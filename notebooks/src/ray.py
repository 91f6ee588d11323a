# Source of notebooks/ray.ipynb (build: .venv/bin/python scripts/notebooks.py ray).
# Needs Ray (pip install 'jupyter_sched[ray]') and a running Ray head: bash scripts/setup/ray.sh starts one
# on 127.0.0.1 with its dashboard (the tests, tests/notebooks/, run this notebook against it).

# %% [markdown]
# # Ray: the same job on a Ray cluster
#
# jupyter_sched runs every scheduler TorchX has installed as `torchx:<name>`, with the same magics and
# panes as its own backends. This notebook runs one training job on `local_cwd` (processes on this
# machine), then the same job on a Ray cluster with `-s torchx:ray`, and shows what differs.

# %% [markdown]
# ## A Ray cluster to talk to
#
# Any Ray cluster whose dashboard you can reach will do. On one machine, start a head node with
# `ray start --head --dashboard-host 127.0.0.1` (or `bash scripts/setup/ray.sh`, which also waits until
# it takes jobs). TorchX's Ray scheduler finds the cluster through `RAY_ADDRESS`, the dashboard's URL.

# %%
import os

os.environ.setdefault("RAY_ADDRESS", "http://127.0.0.1:8265")
print("jobs go to the Ray dashboard at", os.environ["RAY_ADDRESS"])

# %%
%load_ext jupyter_sched

# %% [markdown]
# ## On this machine
#
# `scripts/train.py` stands in for a training job: a progress bar drawn with `\r`, a warning on stderr and
# a coloured summary. On `local_cwd` it runs as a process in this notebook's directory.

# %%
local = %sched_run --wait utils.python --script scripts/train.py --steps 10

# %% [markdown]
# ## On Ray
#
# The same line with `-s torchx:ray`, plus `--workspace .`: a Ray job runs in a *working directory* that
# Ray uploads to the cluster, and the workspace is what goes into it. jupyter_sched copies it to a
# directory of its own first (TorchX writes its driver into the directory and deletes it afterwards), so
# this directory is never touched. Without `--workspace` the job gets an empty one.
#
# The panes are the same. Ray keeps one log per job, with stdout and stderr together and every line
# prefixed by the Ray actor that printed it, so the job shows as one replica, `ray/0`. Ray cannot stream
# a log, so the pane reads it again every second and shows the new lines.

# %%
remote = %sched_run --wait -s torchx:ray --workspace . utils.python --script scripts/train.py --steps 10

# %% [markdown]
# Both jobs finished with the same result. From code, the `Job` objects work alike: `wait()`, `logs()`,
# `cancel()`. Here the lines of both that report the run, with the script's colours removed:

# %%
for job in (local, remote):
    print(job.handle.split("://")[0] + ":", job.state, *job.logs(regex="replica 0|loss"), sep="\n  ")

# %% [markdown]
# ## Before it runs: the dry run
#
# `--dryrun` shows TorchX's own request for Ray: the directory the job would upload, the command each
# replica (a Ray actor) runs, its CPUs, and its environment. Secrets are masked as in every other output:
# a token passed with `--env` shows as `********`. A dry run needs no cluster.

# %% tags=["nbval-ignore-output"]
%sched_run --dryrun -s torchx:ray --workspace . utils.python --env HF_TOKEN=hf_abc123 --script scripts/train.py

# %% [markdown]
# ## What differs on Ray
#
# - **Environment.** The job runs in the cluster's Python, not this kernel's: the role's `image` means
#   nothing to Ray. Packages come from the cluster (or a `requirements.txt` in the workspace, installed by
#   Ray).
# - **Logs.** One log per job (`ray/0`), read again every second while it is followed; `--streams stderr`
#   is empty and `--since`/`--until` are refused, since Ray's lines carry no time.
# - **Replicas.** TorchX's Ray driver starts a replica's command once Ray has placed its actor, and starts
#   no more once one command has ended: of replicas that exit at once, only the first may run. Jobs whose
#   replicas wait for each other (`dist.spmd`, `dist.ddp`) are not affected.
# - **Repeated lines.** Ray folds a line printed by several replicas into one
#   (`[repeated 2x across cluster]`) unless the cluster runs with `RAY_DEDUP_LOGS=0`
#   (`scripts/setup/ray.sh` sets it).
# - **Listing.** `%sched_list -s torchx:ray` lists every job of the cluster named by `RAY_ADDRESS`, also
#   those of other sessions.
