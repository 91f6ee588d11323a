"""The browser harness itself: a real JupyterLab, a real kernel, a real Chromium."""

from __future__ import annotations

import sys

from tests.e2e.conftest import Lab


def test_cell_output_renders(lab: Lab) -> None:
    lab.open(lab.server.write_notebook("smoke.ipynb", ["import sys\nprint('hello from', 'the kernel', sys.prefix)"]))
    lab.run_all()
    lab.wait_all_done(timeout=60_000)

    output = lab.cell(0).locator(".jp-OutputArea-output")
    output.filter(has_text="hello from the kernel").wait_for()
    # The kernel is this venv's interpreter (the kernelspec the fixture installed), not some other Python.
    assert sys.prefix in output.inner_text()
    assert lab.page_problems() == []
