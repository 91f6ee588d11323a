"""A dry run in JupyterLab: maths-looking text stays literal, and a copy button copies its block.

The env holds ``$x$ and $y$`` and the command ``\\(hi\\)``: typeset, they would turn into formulas and
the text between them would vanish. The copy buttons are inline ``onclick`` handlers, so they must work
in JupyterLab's rendered HTML (a trusted output) without any extension.
"""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Lab

LINE = "%sched_run --dryrun -s local_cwd utils.sh --num_replicas 2 --env 'A=$x$ and $y$,HF_TOKEN=abc' 'echo \\(hi\\)'"


def test_dryrun_is_literal_and_copyable(lab: Lab, browser_context: Any) -> None:
    browser_context.grant_permissions(["clipboard-read", "clipboard-write"])
    lab.open(lab.server.write_notebook("dryrun.ipynb", ["%load_ext jupyter_sched", LINE]))
    lab.run_all()
    lab.wait_all_done(timeout=60_000)
    out = lab.cell(1).locator(".jsched-dryrun")
    out.locator("table").first.wait_for(timeout=30_000)
    text = out.inner_text()
    assert "A=$x$ and $y$" in text and "echo \\(hi\\)" in text and "abc" not in text
    assert out.locator(".MathJax, mjx-container, .katex").count() == 0
    env_block = out.locator("details", has_text="vars").first
    env_block.locator("button", has_text="copy").click()
    copied = lab.page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("A=$x$ and $y$\nHF_TOKEN=********\n")
    assert env_block.locator("button").inner_text() == "copied"
    lab.screenshot(out, "dryrun-local")
    assert lab.page_problems() == []
