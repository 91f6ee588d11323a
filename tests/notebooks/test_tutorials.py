"""The tutorial notebooks run top to bottom and show what their stored outputs show (nbval).

Each notebook runs in its own ``pytest --nbval`` (a fresh kernel from this venv, outputs compared after
``notebooks/sanitize.cfg``), so a failure here prints nbval's cell-by-cell diff. The same command works by
hand; see docs/notebooks.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SANITIZE = NOTEBOOKS / "sanitize.cfg"

# The tutorials docs/notebooks.md promises (each has a source in notebooks/src/), then any other source.
PROMISED = ["quickstart", "python_api", "components", "distributed", "docker"]
TUTORIALS = PROMISED + sorted({p.stem for p in (NOTEBOOKS / "src").glob("*.py")} - set(PROMISED))
# Engine fixtures (tests/notebooks/conftest.py): skip locally without the engine, FAIL under CI=true.
NEEDS = {
    "docker": "tutorial_images",
    "distributed": "tutorial_images",  # its retries section runs on Docker
    "slurm": "slurm_available",
    "ray": "ray_cluster",  # tests/conftest.py: a Ray head with its dashboard (scripts/setup/ray.sh)
    "metrics": "torch_installed",  # tests/conftest.py: PyTorch, CPU build (scripts/setup/torch.sh)
}
NBVAL_TAGS = {"nbval-ignore-output", "nbval-skip", "raises-exception", "nbval-check-output"}


def nbval_command(notebook: Path) -> list[str]:
    return [
        sys.executable, "-m", "pytest", str(notebook),
        "--nbval", "--nbval-current-env", f"--nbval-sanitize-with={SANITIZE}",
        "--nbval-cell-timeout=240",
        "-p", "no:cacheprovider", "-o", "addopts=", "-q",
    ]  # fmt: skip


@pytest.mark.parametrize("name", TUTORIALS)
def test_notebook_runs_and_matches_its_outputs(name: str, request: pytest.FixtureRequest) -> None:
    notebook = NOTEBOOKS / f"{name}.ipynb"
    assert notebook.exists(), f"{notebook} is missing: write notebooks/src/{name}.py, then scripts/notebooks.py {name}"
    if name in NEEDS:
        request.getfixturevalue(NEEDS[name])
    proc = subprocess.run(
        nbval_command(notebook), cwd=REPO, env=dict(os.environ), capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, f"nbval failed for {notebook.name}:\n{proc.stdout[-12000:]}\n{proc.stderr[-3000:]}"


def test_notebooks_are_built_from_their_sources() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "notebooks.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", TUTORIALS)
def test_notebook_is_a_tutorial_not_a_test(name: str) -> None:
    """No test scaffolding in what readers see; every code cell was run and most outputs are compared."""
    notebook = NOTEBOOKS / f"{name}.ipynb"
    if not notebook.exists():
        pytest.fail(f"{notebook} is missing")
    nb = nbformat.read(str(notebook), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    markdown = [c for c in nb.cells if c.cell_type == "markdown"]
    assert markdown and markdown[0].source.startswith("# "), "a tutorial opens with a title"
    assert len(markdown) >= len(code) // 2, "prose should explain the cells"
    for cell in code:
        assert "NBVAL" not in cell.source and "assert " not in cell.source, cell.source
        assert cell.execution_count is not None, (
            f"cell never executed (run scripts/notebooks.py {name}):\n{cell.source}"
        )
        if not cell.source.startswith("%%writefile"):  # a file's content is as long as the file
            assert len(cell.source.splitlines()) <= 25, f"keep cells short:\n{cell.source}"
        unknown = set(cell.metadata.get("tags", [])) - NBVAL_TAGS
        assert not unknown, f"unexpected tags {unknown}"
    ignored = [c for c in code if "nbval-ignore-output" in c.metadata.get("tags", [])]
    with_output = [c for c in code if c.outputs]
    assert len(ignored) * 4 <= len(with_output), (
        f"{len(ignored)} of {len(with_output)} cells with output are not compared: sanitise instead"
    )
    for cell in code:
        errors = [o.get("ename") for o in cell.outputs if o.output_type == "error"]
        if errors:
            assert "raises-exception" in cell.metadata.get("tags", []), f"unexpected {errors} in:\n{cell.source}"
