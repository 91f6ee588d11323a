# Source of notebooks/python_api.ipynb (build: .venv/bin/python scripts/notebooks.py python_api).
# Depends only on jupyter_sched.runner and the local_cwd scheduler.

# %% [markdown]
# # The Python API: jobs from scripts and other tools
#
# The `%sched_*` magics are a thin layer over one class, `jupyter_sched.runner.Runner`. Use it directly
# when you write a script, a CI step, a test or another tool that launches jobs: nothing in this notebook
# needs IPython or widgets, and every cell works unchanged in a plain `.py` file.
#
# You will:
#
# 1. describe an app (roles × replicas) as data,
# 2. dry-run it to see exactly what would start,
# 3. run it, follow a replica's log, and wait for the result,
# 4. read statuses, handle a failure, cancel a job, and find jobs again later.

# %%
import sys
import tempfile

from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.specs import AppDef, AppState, AppStatusError, Role

# %% [markdown]
# ## A runner
#
# A runner is a *session*: every app it starts gets a handle `scheduler://session/app_id`, a plain string
# you can store and use from any other process. By default logs go to a per-user state directory and
# outlive the kernel; here `log_dir` keeps this tutorial's logs in a throwaway directory.

# %% tags=["nbval-ignore-output"]
logs = tempfile.mkdtemp(prefix="jsched-api-")
runner = get_runner("api-tutorial", log_dir=logs)
runner.scheduler_backends()

# %% [markdown]
# The list depends on what is installed (plugins can add schedulers). `local_cwd`, always first, runs each
# replica as a process on this machine in the current directory. It is the default and needs nothing
# installed, which makes it the place to try an app before sending it to Docker or Slurm.

# %% [markdown]
# ## Describe the app
#
# An `AppDef` is a name and a list of `Role`s; each role is one command run as `num_replicas` identical
# replicas. Here one role runs `scripts/train.py` (a stand-in for real training: a progress bar, a warning,
# a coloured summary) twice. `sys.executable` runs it with this kernel's Python; on `local_cwd` the image
# is not used, so any placeholder will do.

# %%
app = AppDef(
    name="train",
    roles=[
        Role(
            name="trainer",
            image="unused",
            entrypoint=sys.executable,
            args=["scripts/train.py", "--steps", "5"],
            env={"LR": "0.1"},
            num_replicas=2,
        )
    ],
)

# %% [markdown]
# ## Dry run first
#
# `dryrun` validates the app and builds the exact request the scheduler would receive, without starting
# anything. Printing it shows, per replica, the command, working directory, environment and log files:
# the first thing to check when a job misbehaves. Mistakes (a missing entrypoint, a bad name) are raised
# here, before any replica runs.

# %%
info = runner.dryrun(app, "local_cwd")
print(info)

# %% [markdown]
# ## Run it and follow a log
#
# `schedule` starts what the dry run described and returns the handle. `log_lines(..., should_tail=True)`
# (the runner's front to each scheduler's `log_iter`) follows one replica's output until that replica
# ends. Each item is a line ending in `\n`, or a progress
# frame ending in `\r`: print items with `end=""` and the bar redraws in place, as in a terminal.

# %%
handle = runner.schedule(info)
print(handle)

# %%
for line in runner.log_lines(handle, "trainer", k=0, should_tail=True):
    print(line, end="")

# %% [markdown]
# ## Wait for the result
#
# `wait` blocks until the app is terminal (SUCCEEDED, FAILED or CANCELLED) and returns its status; with
# `timeout` it returns the current status instead of blocking forever. On local backends it wakes as soon
# as a replica exits, so there is no polling delay to tune.

# %%
status = runner.wait(handle, timeout=60)
status.state

# %% [markdown]
# The status carries one entry per replica, with its state and exit code: what a script checks before
# moving on, and what `format()` prints for people.

# %%
for role in status.roles:
    for replica in role.replicas:
        print(f"{role.role}[{replica.id}] {replica.state} exit_code={replica.exit_code}")

# %% [markdown]
# ## Other replicas, other streams, filters
#
# Logs are kept per replica and per stream. `k` picks the replica, `streams` picks `stdout`, `stderr` or
# `combined` (the default, both in the order they were written), and `regex` keeps matching lines only.
# Without `should_tail` you get what is there now, which for a finished app is everything.

# %%
for line in runner.log_lines(handle, "trainer", k=1, streams=Stream.STDERR):
    print(line, end="")

# %%
list(runner.log_lines(handle, "trainer", k=1, regex="done|replica"))

# %% [markdown]
# ## When a job fails
#
# The same script with `--fail` exits with code 3. The app ends FAILED, and `format()` shows which
# replica failed and how. `raise_for_status()` turns anything but SUCCEEDED into an `AppStatusError`, which
# is what a script or CI step usually wants.

# %%
failing = AppDef(
    "flaky",
    [Role("trainer", "unused", entrypoint=sys.executable, args=["scripts/train.py", "--steps", "3", "--fail"])],
)
failed = runner.wait(runner.run(failing, "local_cwd"), timeout=60)
print(failed.format())

# %%
try:
    failed.raise_for_status()
except AppStatusError as e:
    print(f"{type(e).__name__}: the app ended {e.status.state}")

# %% [markdown]
# ## Cancel a job
#
# `cancel` returns at once: replicas get SIGTERM, then SIGKILL if they are still there after the grace
# period (`cfg={"cancel_grace": seconds}`). The app ends CANCELLED, not FAILED, so you can tell the two
# apart.

# %%
sleeper = runner.run(AppDef("sleeper", [Role("main", "unused", entrypoint="sleep", args=["600"])]), "local_cwd")
runner.status(sleeper).state

# %%
runner.cancel(sleeper)
runner.wait(sleeper, timeout=30).state

# %% [markdown]
# ## Find jobs again
#
# Apps are recorded on disk, so `list` shows every app of the session, including those started by other
# processes, and a handle is all another process needs. A second runner (think: another script, or this
# notebook after a kernel restart) sees the same apps and their logs.

# %%
for entry in sorted(runner.list("local_cwd"), key=lambda a: a.name):
    print(f"{entry.name:8} {str(entry.state):10} {entry.app_handle}")

# %%
with get_runner("api-tutorial", log_dir=logs) as other:
    print(other.status(handle).state)
    print(list(other.log_lines(handle, "trainer", k=0, regex="loss")))

# %% [markdown]
# ## In a script
#
# Put it together with `with get_runner() as runner:`; leaving the block closes the runner and stops any
# app it started that is still running, so an interrupted script leaves no stray processes (pass
# `cfg={"outlive_owner": True}` for jobs that must survive it). A complete script:
#
# ```python
# import sys
# from jupyter_sched.runner import get_runner
# from jupyter_sched.specs import AppDef, Role
#
# app = AppDef("train", [Role("trainer", "unused", entrypoint=sys.executable, args=["train.py"])])
# with get_runner() as runner:
#     handle = runner.run(app, "local_cwd")
#     for line in runner.log_lines(handle, "trainer", should_tail=True):
#         print(line, end="")
#     status = runner.wait(handle)
# print(status.format())
# sys.exit(0 if status.state == AppState.SUCCEEDED else 1)
# ```
#
# The `jupyter-sched` command does the same from a shell, and the magics do it with live panes in a
# notebook; all three are this API underneath.

# %%
runner.close()
