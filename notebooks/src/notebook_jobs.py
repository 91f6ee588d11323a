# Source of notebooks/notebook_jobs.ipynb (build: .venv/bin/python scripts/notebooks.py notebook_jobs).
# Depends only on the local_cwd scheduler; the same calls take scheduler="local_docker" (with
# image="jupyter-sched/python:local") or "slurm". The notebook it runs is written by the tutorial itself.

# %% [markdown]
# # Notebooks as jobs: parameters in, an executed notebook out
#
# "Run this notebook overnight with `lr=0.01`, and three more with other values" needs no script around
# it: `jupyter_sched.Notebook("train.ipynb")` is a runnable that `submit` and `sweep` take like a function.
# The job runs the notebook in its replica with nbclient, with the parameters injected as papermill does
# (a notebook written for papermill runs unchanged; papermill itself is never needed), writes the executed
# notebook as it goes, and hands back what the notebook recorded. You will:
#
# 1. write a notebook with a `parameters` cell and read its parameters,
# 2. run it as a job with other values, and open what it produced,
# 3. sweep it over a grid, one executed notebook per run, into a DataFrame,
# 4. do the same from the `%sched_notebook` magic (and `jupyter-sched notebook` in a terminal).

# %%
%load_ext jupyter_sched
import json
import os
import tempfile

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import jupyter_sched

# %% [markdown]
# ## A notebook with parameters
#
# The defaults go in one cell tagged `parameters` (JupyterLab: the property inspector's "Cell Tags"), one
# `name = value  # help` a line; an annotation or a `# type:` comment gives the type. To hand a value back,
# the notebook calls `jupyter_sched.record(name, value)` (outside a job it records nothing). Here the
# notebook is written with nbformat; yours is any `.ipynb`.

# %%
folder = tempfile.mkdtemp(prefix="jsched-nbjobs-")
path = os.path.join(folder, "train.ipynb")
cells = [
    new_markdown_cell("# Train"),
    new_code_cell("lr: float = 0.1  # learning rate\nepochs = 2  # type: int\noptimizer = 'sgd'",
                  metadata={"tags": ["parameters"]}),
    new_code_cell("loss = 1.0\nfor epoch in range(epochs):\n    loss = round(loss / (1 + 10 * lr), 4)\n"
                  "    print(f'epoch {epoch}: loss {loss}')"),
    new_code_cell("import jupyter_sched\njupyter_sched.record('loss', loss)\n"
                  "jupyter_sched.record('optimizer', optimizer)"),
]
nbformat.write(new_notebook(cells=cells), path)

# %% [markdown]
# `inspect_notebook` reads the `parameters` cell the way papermill's `inspect_notebook` does: each
# parameter's name, type, default (as written) and help.

# %%
jupyter_sched.inspect_notebook(path)

# %% [markdown]
# ## Run it as a job
#
# Every keyword of `submit` other than its own (`scheduler`, `num_replicas`, `cfg`, `resource`, `image`,
# `name`) is a parameter. The notebook is read now, at submit, and the job carries that copy with the
# values injected: editing the file afterwards does not change the running job, and the file itself is
# never written. Displayed, the job is the usual live view; its status pane also says which cell runs
# (`cell 3/4 · loss = 1.0`), then how it ended, and where the executed notebook is.

# %% tags=["nbval-ignore-output"]
job = jupyter_sched.submit(jupyter_sched.Notebook(path), lr=0.5, epochs=3)
job

# %% [markdown]
# `job.result()` waits and returns what the notebook recorded:

# %%
job.result()

# %% [markdown]
# `job.output_path` is the executed notebook (the partial one while it runs; `job.notebook_progress()` is
# the record the pane reads). Its outputs are the cells' own, and the values went into a cell tagged
# `injected-parameters` right after the `parameters` cell, as with papermill:

# %%
executed = nbformat.read(job.output_path, as_version=4)
print(job.notebook_progress()["state"], os.path.basename(job.output_path))
print(executed.cells[2].source)
print(executed.cells[3].outputs[0]["text"])

# %% [markdown]
# A cell that raises fails the job with a reason naming the cell, `cell 3 (In [3]) raised ...`; the
# output is still saved with that cell marked failed, and later cells are not run.
#
# ## A sweep of notebooks
#
# `jupyter_sched.sweep(Notebook(...), grid)` runs the notebook once per point of the grid, a few at a
# time, each run with its own executed notebook. `to_dataframe()` has a row per run with the parameters,
# the recorded values and `output_path` (below, the job directory that holds it); `best` works on
# recorded values.

# %%
sweep = jupyter_sched.sweep(jupyter_sched.Notebook(path), {"lr": [0.5, 0.1, 0.01]}, max_concurrent=2)
sweep.results()

# %%
df = sweep.to_dataframe()
df["job directory"] = [os.path.basename(os.path.dirname(p)) for p in df["output_path"]]
df[["lr", "state", "loss", "job directory"]]

# %%
best = sweep.best("loss")
best.run.params, best.value

# %% [markdown]
# ## From the magic
#
# `%sched_notebook` takes `%sched_run`'s run options (`-s`, `--cfg`, `--wait`, `--dryrun`, `--quiet`...)
# before the notebook, and papermill's flags after it: `-p NAME VALUE` (a Python literal where the value is
# one, else a string), `-r NAME VALUE` (always a string), `-f params.yaml` and `-y 'name: value'` (YAML).
# `$path` is this notebook's variable, expanded as `%sched_run` expands it. `--help-notebook` lists the
# parameters:

# %%
%sched_notebook --help-notebook $path

# %% [markdown]
# `--wait` blocks until the notebook has run (`--quiet`: no live view here); the Job is returned as from
# `submit`:

# %%
job = %sched_notebook --wait --quiet $path -p lr 0.2 -y 'epochs: 1' -r optimizer adam
job.result()

# %% [markdown]
# A misspelt name is a warning by default (the notebook may read it some other way); `--strict` refuses
# it before anything is launched, naming the flag it came from and the names the notebook defines:

# %% tags=["raises-exception"]
%sched_notebook --strict $path -p learning_rate 0.1

# %% [markdown]
# In a terminal, `jupyter-sched notebook` takes the same line, with `run`'s options and behaviour (on a
# local scheduler it waits and streams the cells' output; the output notebook's path is printed at the end):
#
# ```
# jupyter-sched notebook -s slurm --wait train.ipynb -p lr 0.01 -f params.yaml
# ```
#
# More in [docs/notebook_jobs.md](../docs/notebook_jobs.md): the kernel, timeouts, other output formats,
# sending the notebook's folder, cancel, and where each backend runs the notebook.
