# Source of notebooks/quickstart.ipynb (build: .venv/bin/python scripts/notebooks.py quickstart).
# The browser tests (tests/e2e/test_quickstart.py) run this notebook in JupyterLab and find cells by the
# text of their source: keep "--dryrun", "--steps 30" and "%sched_cancel" in the cells that use them.

# %% [markdown]
# # Quickstart: run a job from a notebook and watch it live
#
# jupyter_sched launches *apps* (one or more roles, each a command run as N replicas) on a *scheduler*:
# processes on this machine, Docker containers or a Slurm cluster. In a notebook each job gets two live
# panes, its status and its logs, that keep updating while you work in other cells.
#
# This notebook uses `local_cwd`, the default scheduler: every replica is a process on this machine,
# started in this notebook's directory. There is nothing else to install.

# %%
%load_ext jupyter_sched

# %% [markdown]
# ## Look before you leap: `--dryrun`
#
# `%sched_run` takes a *component*, a function that builds an app from command-line style arguments, and
# parses its line exactly like the `jupyter-sched run` command. The built-in `utils.python` runs a Python
# script. `--dryrun` shows what would start, replica by replica: the command, the working directory, the
# environment and where the logs go. Nothing runs.

# %%
%sched_run --dryrun utils.python --script scripts/train.py

# %% [markdown]
# The script, `scripts/train.py`, stands in for a training job: it draws a progress bar with `\r`, prints
# a warning on stderr and a coloured summary.
#
# ## Run it
#
# Without `--dryrun` the job starts and the cell shows the two panes. The status pane has a state pill,
# one row per replica and a Cancel button; the log pane redraws the progress bar in place (as a terminal
# does), shows colours, and marks stderr lines. `--wait` keeps the cell busy until the job ends, then
# prints a one-line summary; leave it out and the cell returns at once while the panes keep updating.

# %%
%sched_run --wait utils.python --script scripts/train.py --steps 30

# %% [markdown]
# ## Read the logs
#
# `%sched_logs` shows the logs of the last job; give it a handle, an app id, a name or a `Job` variable
# for another one, a role and replicas (`-r 0,1`) to narrow it down, or `--regex` to filter. Logs stay on
# disk, so this works for jobs of earlier kernels too.

# %%
%sched_logs --regex "loss|warning"

# %% [markdown]
# `%sched_run` returns a `Job`. Keep it in a variable to use the job from code: `job.wait()` blocks until
# it ends and returns its status, and `job.logs()` returns the log lines with progress bars resolved and
# colours removed, ready to parse. With several replicas each line starts with `role/k |` (`role/k !` for
# stderr). `--name` names the app (the default is the script's name).

# %%
job = %sched_run utils.python --name pair --num_replicas 2 --script scripts/train.py --steps 5
job.wait()

# %%
print(*job.logs(), sep="\n")

# %% [markdown]
# ## Cancel a long job
#
# A job that runs too long can be stopped with the Cancel button in its status pane, or from code with
# `%sched_cancel` (or `job.cancel()`). Replicas get SIGTERM, then SIGKILL after a grace period, and the job
# ends CANCELLED.

# %%
long = %sched_run utils.python --name long --script scripts/train.py --steps 100000 --delay 0.1

# %%
%sched_cancel --wait long

# %% [markdown]
# ## Find your jobs
#
# `%sched_list` shows the jobs of this session, including those started by earlier kernels (the session
# is `default` unless you `%config SchedMagics.session_name = "..."`), and `%sched_status` shows one job's state
# per replica.

# %%
%sched_list

# %%
%sched_status job

# %% [markdown]
# ## Next
#
# - `python_api.ipynb`: the same without magics, for scripts and tools.
# - `components.ipynb`: write your own component instead of `utils.python`.
# - `distributed.ipynb`: several roles and replicas, ranks, failures and retries.
# - `docker.ipynb`: the same jobs in containers with `-s local_docker`.
