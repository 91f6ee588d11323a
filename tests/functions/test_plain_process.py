"""``jupyter_sched.submit`` and ``sweep`` in a plain Python process where IPython, traitlets and ipywidgets
cannot be imported at all: the functions layer and its Job live below the notebook."""

from __future__ import annotations

import os
import subprocess
import sys

BLOCK_UI = "import sys; [sys.modules.__setitem__(m, None) for m in ('IPython','traitlets','ipywidgets')]; "


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK_UI + code], capture_output=True, text=True, timeout=120,
                          env=os.environ)  # fmt: skip


def test_submit_returns_its_result_without_ipython() -> None:
    out = _run("import jupyter_sched as j; print(j.submit(abs, -1).result())")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "1\n"


def test_a_sweep_its_failure_and_its_logs_without_ipython() -> None:
    code = (
        "import jupyter_sched as j\n"
        "s = j.sweep(lambda k: k * k, {'k': [1, 2, 3]}, max_concurrent=2)\n"
        "print(s.results(timeout=60))\n"
        "job = j.submit(print, 'hello')\n"
        "job.result(timeout=60)\n"
        "print(job.logs(streams='stdout'))\n"
        "from jupyter_sched.frontend.job import JobFailed\n"
        "try:\n"
        "    j.submit(os._exit, 3).result(timeout=60)\n"
        "except JobFailed as e:\n"
        "    print('JobFailed', e.state)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'traitlets', 'ipywidgets')"
        " and sys.modules[m] is not None))\n"
    )
    out = _run("import os; " + code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[1, 4, 9]", "['hello']", "JobFailed FAILED", "[]"]
