"""Helpers of the notebook tests (imported by the test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, List


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Polls ``predicate`` until it is truthy (a liveness guard, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def py(code: str, flags: str = "") -> str:
    """A shell-quoted ``utils.python [FLAGS] -c CODE`` component line."""
    return f"utils.python {flags} -c {shlex.quote(code)}"



def run_headless(cells: List[str], base: Path, name: str = "saved.ipynb") -> Path:
    """Runs a notebook of ``cells`` the way ``nbconvert --execute`` and papermill do (nbclient, a real
    kernel of this venv, no front end, no JUPYTER_SCHED_* variable but a fresh log dir), saves it without
    widget state under ``base`` and returns its path."""
    import nbformat
    from nbclient import NotebookClient

    kernel = "jsched-headless-python3"
    spec_dir = base / "jupyter" / "kernels" / kernel
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "jupyter_sched headless test", "language": "python"}  # fmt: skip
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    env = {
        "JUPYTER_PATH": str(base / "jupyter"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_SCHED_LOG_DIR": str(base / "state"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    saved = {k: os.environ.get(k) for k in [*env, "JUPYTER_SCHED_NONINTERACTIVE"]}
    os.environ.update(env)
    os.environ.pop("JUPYTER_SCHED_NONINTERACTIVE", None)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    try:
        NotebookClient(nb, timeout=240, kernel_name=kernel, allow_errors=True, store_widget_state=False,
                       resources={"metadata": {"path": str(base)}}).execute()  # fmt: skip
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    path = base / name
    nbformat.write(nb, str(path))
    return path


#: A notebook with a job of each kind a record must keep (used by tests/notebook/test_record.py and
#: tests/e2e/test_saved_notebook.py).
RECORD_CELLS = [
    "%load_ext jupyter_sched",
    # 1: a job that ends while its cell waits
    "%sched_run --wait utils.sh --name waited 'echo hello-waited; printf \"\\033[32mgreen\\033[0m\\n\";"
    " for i in 1 2 3; do printf \"\\rstep $i/3\"; sleep 0.2; done; echo; echo to-stderr >&2'",
    # 2: a background job that ends two cells later
    "%sched_run utils.sh --name later 'sleep 3; echo background-done'",
    "x = 1",
    "import time; time.sleep(5)",
    # 5: a failing job: the reason is in the record
    "%sched_run --wait utils.python --name broken -c \"import sys; print('before'); d = {}; d['y']\"",
    # 6: magics on ended apps: static output
    "%sched_logs waited",
    "%sched_status waited",
    # 8: maths-looking text stays literal text
    "%sched_run --wait utils.python --name dollars"
    " -c \"d, b = chr(36), chr(92); print(f'cost {d}A and {d}B {b}(x{b})')\"",
    # 9: user text outside <pre> (a dry run's env block) is not typeset either
    "from jupyter_sched.specs import AppDef, Role\n"
    "app = AppDef('envs', [Role('main', image='', entrypoint='echo', args=['hi'],"
    " env={'GREETING': '$A and $B', 'MATH': '\\\\(x\\\\)'})])\n"
    "%sched_run --dryrun app",
]
