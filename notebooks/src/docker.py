# Source of notebooks/docker.ipynb (build: .venv/bin/python scripts/notebooks.py docker).
# Needs a running Docker engine and the images of scripts/setup/images.sh (bash scripts/setup/docker.sh).

# %% [markdown]
# # Jobs in containers: `local_docker`
#
# The same apps run in Docker containers when you add `-s local_docker`. Each replica becomes a container
# on the local Docker engine, which buys you what plain processes cannot give: the exact environment of an
# image, enforced CPU and memory limits, restarts of failed replicas, and a network where replicas reach
# each other by name (`torchx`, the one TorchX's containers join, so a sidecar made for them reaches ours). It is also the closest thing on your laptop to a cluster run.
#
# This notebook keeps its jobs in a session of their own, so that the clean-up at the end removes only
# what the tutorial created.

# %%
%load_ext jupyter_sched
%config SchedMagics.session_name = "docker-tutorial"

# %% [markdown]
# ## Images built locally
#
# A role's `image` is now what runs. Images come from the engine, so an image you build locally needs no
# registry. This project builds two, from scratch, with `scripts/setup/images.sh`:
# `jupyter-sched/python:local` (Debian with Python 3) and `jupyter-sched/busybox:local` (a shell and the
# usual tools). Built-in components take `--image`; each replica's container is named after the app, the
# role and the replica.

# %%
%sched_run --wait -s local_docker utils.sh --image jupyter-sched/busybox:local 'echo "hello from $(hostname)"'

# %% [markdown]
# ## Environment: `--env` and `copy_env`
#
# A container does not inherit your environment. Pass variables with the component's `--env`, or copy them
# from the notebook's environment by name with the run option `copy_env` (glob patterns), which is handy
# for credentials. Displays mask values whose names look secret (`TOKEN`, `KEY`, `PASSWORD`...); the
# container gets the real value.

# %%
import os

os.environ["TUTORIAL_API_TOKEN"] = "s3cr3t"  # usually set before Jupyter starts
os.environ["TUTORIAL_REGION"] = "eu-west"

# %%
%sched_run --dryrun -s local_docker --cfg copy_env=TUTORIAL_* utils.sh --image jupyter-sched/busybox:local --env GREETING=hello 'env | grep -E "^(TUTORIAL|GREETING)" | sort'

# %%
job = %sched_run --wait -s local_docker --cfg copy_env=TUTORIAL_* utils.sh --image jupyter-sched/busybox:local --env GREETING=hello 'env | grep -E "^(TUTORIAL|GREETING)" | sort'
print(*job.logs(), sep="\n")

# %% [markdown]
# ## Data from the host: a bind mount
#
# `--mounts type=bind,src=HOST_DIR,dst=CONTAINER_DIR[,readonly]` makes a host directory visible inside
# every replica. `readonly` protects your data from the job. (`type=volume` mounts a named Docker volume
# instead.) `$data` puts the notebook's variable `data` into the line, as a shell would; `{...}` is left
# as written, so Python code and `${replica_id}` in a line stay intact.

# %%
import tempfile
from pathlib import Path

data = Path(tempfile.mkdtemp(prefix="jsched-docker-"))
(data / "numbers.txt").write_text("".join(f"{i}\n" for i in range(1, 101)))
print(data)

# %%
job = %sched_run --wait -s local_docker utils.sh --image jupyter-sched/busybox:local --mounts type=bind,src=$data,dst=/data,readonly 'wc -l < /data/numbers.txt; touch /data/new 2>/dev/null || echo "cannot write: read-only"'
print(*job.logs(), sep="\n")

# %% [markdown]
# ## Your code in the image: `--workspace`
#
# Your scripts are on the host, not in the image. `--workspace DIR` builds an image with `DIR` copied on
# top of the role's image (into its working directory, `/workspace` by default) just before the run, and
# uses it for the job; a `.dockerignore` in `DIR` keeps files out, and `--cfg quiet=true` hides the build
# log. Edit, run again, and the new code is in the next image.
#
# ## Replicas that talk to each other by name
#
# All replicas join one Docker network, where each container's name is its host name. `dist.spmd` sets
# `MASTER_ADDR` to the name of rank 0's container, so the all-reduce from `distributed.ipynb` runs
# unchanged across three containers:

# %%
job = %sched_run --wait -s local_docker --workspace . --cfg quiet=true dist.spmd --image jupyter-sched/python:local --num_replicas 3 --script scripts/allreduce.py
print(*job.logs(), sep="\n")

# %% [markdown]
# `%sched_describe` shows where each replica ran: on Docker the host of a replica is its container's name.
# Beside each replica is what it used, when the engine sampled it: Docker samples a container's stats about
# once a second, so a replica that lives only a fraction of a second may end before its first sample.

# %%
%sched_describe job

# %% [markdown]
# ## Cleaning up
#
# Docker keeps exited containers, and their logs, so you can read them later, even after a kernel restart.
# When you no longer need them, remove them: `prune()` removes every finished app of a session (running
# ones are left alone), `cleanup(app_id)` one app.

# %%
from jupyter_sched.schedulers.docker_scheduler import create_scheduler

docker = create_scheduler("docker-tutorial")
removed = docker.prune()
docker.list()
