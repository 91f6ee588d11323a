"""The browser harness itself: a real JupyterLab, a real kernel, a real Chromium."""

from __future__ import annotations

import nbformat

from tests.e2e.conftest import Lab


def test_cell_output_renders(lab: Lab) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("import sys\nprint('hello from', 'the kernel', sys.prefix)")]
    nbformat.write(nb, str(lab.server.root_dir / "smoke.ipynb"))

    lab.open("smoke.ipynb")
    lab.run_all()
    lab.wait_all_done(timeout=60_000)

    output = lab.cell(0).locator(".jp-OutputArea-output")
    output.filter(has_text="hello from the kernel").wait_for()
    # The kernel is this venv's interpreter (the kernelspec the fixture installed), not some other Python.
    import sys

    assert sys.prefix in output.inner_text()
    assert lab.page_problems() == []
