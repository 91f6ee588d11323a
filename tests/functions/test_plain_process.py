"""``jupyter_sched.submit`` and ``sweep`` in a plain Python process where IPython, traitlets and ipywidgets
cannot be imported at all: the functions layer and its Job live below the notebook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_plain_script_with_ipython_installed_imports_neither_ipython_nor_traitlets(tmp_path: Path) -> None:
    """IPython is installed here (the notebook needs it), yet a script that never imports it has no shell to
    show a job in: ``submit``, ``sweep``, ``map`` and a Job's ``wait``/``result`` must not import it (with
    traitlets, about 80 modules and 75-110 ms) just to find that out."""
    import importlib.util

    assert importlib.util.find_spec("IPython") and importlib.util.find_spec("traitlets"), "both are installed"
    script = tmp_path / "plain.py"
    script.write_text(
        "import sys\n"
        "import jupyter_sched as j\n"
        "job = j.submit(abs, -4)\n"
        "job.wait(timeout=60)\n"
        "print(job.result(timeout=60))\n"
        "print(j.sweep(pow, {'base': [2, 3], 'exp': [2]}).results(timeout=60))\n"
        "print(j.map(abs, [-1, -2]).results(timeout=60))\n"
        "print(sorted(m for m in ('IPython', 'traitlets', 'ipywidgets', 'ipykernel') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180,
                         cwd=tmp_path, env=os.environ)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["4", "[4, 9]", "[1, 2]", "[]"]
