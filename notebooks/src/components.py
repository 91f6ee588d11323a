# Source of notebooks/components.ipynb (build: .venv/bin/python scripts/notebooks.py components).
# The %%writefile cell writes notebooks/my_components.py, which is committed with the same content, so
# running the notebook leaves the work tree unchanged.

# %% [markdown]
# # Writing your own component
#
# `utils.python` and `dist.spmd` are *components*: plain Python functions that return an `AppDef`. Write
# your own when you launch the same kind of job again and again with a few things changing. The function
# fixes what stays the same (the command, the image, the resources) and its typed parameters become the
# flags you pass on each run, the same way from `%sched_run`, from the `jupyter-sched` command and from
# Python.

# %%
%load_ext jupyter_sched

# %% [markdown]
# ## A component is a typed function
#
# Annotate every parameter (`str`, `int`, `float`, `bool`, `Optional[...]`, lists and dicts) and the return
# type `AppDef`. The docstring's first line is the component's summary and its `Args:` section the help of
# each flag. Defaults make flags optional.
#
# The command is `python3` rather than this kernel's interpreter, so the same component also runs in a
# container image; on `local_cwd` it is the `python3` on your `PATH`.

# %%
%%writefile my_components.py
"""Components for the tutorials: the training job with the knobs we change most."""
from typing import Dict, Optional

from jupyter_sched.specs import AppDef, Role, resource


def train(
    steps: int = 20,
    lr: float = 0.01,
    replicas: int = 1,
    fail: bool = False,
    env: Optional[Dict[str, str]] = None,
    image: str = "jupyter-sched/python:local",
) -> AppDef:
    """Trains the tutorial model (scripts/train.py).

    Args:
        steps: optimisation steps
        lr: learning rate (the script reads it from $LR)
        replicas: how many copies of the trainer to run
        fail: make every replica fail at the end, to see what a failure looks like
        env: extra environment variables, e.g. A=1,B=2
        image: the container image (local_cwd ignores it)
    """
    args = ["scripts/train.py", "--steps", str(steps)] + (["--fail"] if fail else [])
    trainer = Role(
        name="trainer", image=image, entrypoint="python3", args=args, num_replicas=replicas,
        env={"LR": str(lr), **(env or {})}, resource=resource(cpu=1, memMB=512),
    )
    return AppDef(name="train", roles=[trainer])

# %% [markdown]
# ## Flags and help come from the signature
#
# Name a component in a file as `FILE.py:FUNCTION`; the file is loaded afresh on every run, so edits take
# effect without restarting the kernel. `--help` shows the flags built from the signature and docstring.

# %%
%sched_run my_components.py:train --help

# %% [markdown]
# Values are parsed by type: `--steps 5` is an `int`, `--fail` a `bool` flag, `--env A=1,B=2` a dict. A dry
# run shows the app they produce.

# %%
%sched_run --dryrun my_components.py:train --steps 5 --lr 0.1 --env WANDB_MODE=offline

# %% [markdown]
# A value of the wrong type is refused before anything starts, with the flag named and the usage shown.

# %% tags=["raises-exception"]
%sched_run my_components.py:train --steps many

# %% [markdown]
# ## Run it
#
# A component runs like any built-in. Here two replicas, waiting for the end; `job.logs()` then gives the
# lines of both.

# %%
job = %sched_run --wait my_components.py:train --steps 5 --lr 0.1 --replicas 2
print(*job.logs(), sep="\n")

# %% [markdown]
# ## From Python
#
# A component is just a function: call it to get the `AppDef`, look at it or adjust it, then run it with
# `%sched_run APP` (or with the `Runner`, see `python_api.ipynb`). Handy to try a variation once without
# adding a flag for it.

# %%
from my_components import train

app = train(steps=3)
app.roles[0].max_retries = 2
app.roles[0].env

# %%
%sched_run --wait app

# %% [markdown]
# ## Share it
#
# To give a component a short name, publish it from a package as an entry point in the group
# `jupyter_sched.components`:
#
# ```toml
# [project.entry-points."jupyter_sched.components"]
# train = "mypkg.components:train"          # %sched_run train --steps 5
# mypkg = "mypkg.components"                # every component of the module: %sched_run mypkg.train
# ```
#
# Defaults for a project go in its `pyproject.toml`, and flags given on a run still win:
#
# ```toml
# [tool.jupyter_sched.components."train"]
# replicas = 2
# env = { WANDB_MODE = "offline" }
# ```
