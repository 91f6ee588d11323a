"""The quickstart notebook in JupyterLab, checked for what a person sees in the browser.

One page for the module: the notebook is opened and run top to bottom once, then each test looks at a
different part of the result, and the last tests add cells of their own (a job to cancel with the button,
a 200,000-line flood). Screenshots of the panes go to artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from tests.e2e.conftest import E2E_ARTIFACTS, REPO, SCREENSHOTS, Lab, LabServer, make_lab

DOCS_IMG = REPO / "docs" / "img" / "panes.png"
FLOOD = Path(__file__).with_name("flood.py")
FLOOD_LINES = 200_000
GREEN = "rgb(0, 162, 80)"  # ANSI green (32) in JupyterLab's palette, which the log pane uses


@pytest.fixture(scope="module")
def quickstart(browser_context: Any, lab_server: LabServer) -> Iterator[Lab]:
    lab = make_lab(browser_context, lab_server)
    started = time.monotonic()
    lab.open("quickstart.ipynb")
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    lab.run_all_seconds = time.monotonic() - started
    yield lab
    lab.page.close()


@pytest.fixture(autouse=True)
def _screenshot_on_failure(request: pytest.FixtureRequest, quickstart: Lab) -> Iterator[None]:
    yield
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        quickstart.page.screenshot(path=str(SCREENSHOTS / f"FAILED-{request.node.name}.png"), full_page=True)


def output_of(lab: Lab, needle: str) -> Any:
    """The output area of the tutorial cell whose source contains ``needle``."""
    return lab.cell(lab.cell_index_containing(needle)).locator(".jp-Cell-outputArea")


def log_lines(pane: Any) -> List[str]:
    return [line for line in pane.locator("pre.jsched-log-text").inner_text().split("\n") if line.strip()]


def test_status_pane_reaches_succeeded(quickstart: Lab) -> None:
    out = output_of(quickstart, "--steps 30")
    pill = out.locator(".jsched-status .jsched-pill").first
    pill.wait_for()
    assert pill.inner_text() == "SUCCEEDED"
    # Every replica row says SUCCEEDED; a finished job has no Cancel button: its output is now the record
    # (static HTML that needs no kernel), replaced in place when the job ended.
    states = out.locator(".jsched-status table .jsched-pill").all_inner_texts()
    assert states and set(states) == {"SUCCEEDED"}
    assert out.locator("button", has_text="Cancel").count() == 0
    assert out.locator(".jsched-record").count() == 1 and out.locator(".jupyter-widgets").count() == 0
    # The summary --wait prints when the job has ended.
    assert re.search(r"train SUCCEEDED: local_cwd://default/train-\w+ \(exit code 0\)", out.inner_text())
    quickstart.screenshot_themes(out.locator(".jsched-job").first, "quickstart-panes")
    shot = quickstart.screenshot(quickstart.cell(quickstart.cell_index_containing("--steps 30")), "quickstart-cell")
    if os.environ.get("JSCHED_UPDATE_DOCS_IMG"):  # refresh the README's picture from this run
        DOCS_IMG.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMG)


def test_progress_bar_is_one_line_ending_at_100(quickstart: Lab) -> None:
    pane = output_of(quickstart, "--steps 30").locator(".jsched-log")
    lines = log_lines(pane)
    bars = [line for line in lines if "train:" in line]
    assert len(bars) == 1, f"the \\r frames piled up instead of redrawing one line: {bars}"
    assert re.search(r"train: 100% \[#{20}\]$", bars[0]), bars[0]
    assert any("replica 0: 30 steps" in line for line in lines), lines
    assert any("warning: the dataset is tiny" in line for line in lines), lines


def test_colours_are_rendered(quickstart: Lab) -> None:
    pane = output_of(quickstart, "--steps 30").locator(".jsched-log")
    span = pane.locator("pre.jsched-log-text span", has_text=re.compile(r"^done$")).first
    span.wait_for()
    colour = span.evaluate("el => getComputedStyle(el).color")
    plain = pane.locator("pre.jsched-log-text").evaluate("el => getComputedStyle(el).color")
    assert colour == GREEN, f"'done' should be ANSI green, is {colour}"
    assert plain != GREEN
    # The escape sequences themselves never reach the page.
    assert "\x1b" not in pane.inner_text() and "[32m" not in pane.inner_text()


def test_logs_magic_shows_the_matching_lines(quickstart: Lab) -> None:
    pane = output_of(quickstart, "%sched_logs --regex").locator(".jsched-log")
    pane.locator(".jsched-log-header", has_text="ended").wait_for(timeout=15_000)
    lines = log_lines(pane)
    assert any(line.endswith("done: loss 0.042") for line in lines), lines
    assert any(line.endswith("warning: the dataset is tiny") for line in lines), lines
    assert not any("train:" in line or "replica 0" in line for line in lines), lines


def test_dryrun_table_is_shown(quickstart: Lab) -> None:
    out = output_of(quickstart, "--dryrun")
    table = out.locator(".jsched-dryrun table").first
    try:
        table.wait_for(timeout=10_000)
    except Exception:  # noqa: BLE001 - say what is shown instead
        shown = out.locator(".jp-OutputArea-output").first.evaluate("el => el.className")
        json_tree = out.locator(".jp-RenderedJSON").count() > 0
        pytest.fail(
            "the dry-run table is not shown"
            + (
                ": JupyterLab rendered the output's application/json as a JSON tree instead of its text/html"
                " (JupyterLab ranks its JSON renderer above HTML), so the bundle must not carry"
                " application/json"
                if json_tree
                else f"; the output shown is {shown!r}: {out.inner_text()[:300]!r}"
            )
        )
    text = out.inner_text()
    assert "nothing was started" in text
    assert "argv" in text and "scripts/train.py" in text and "cwd" in text
    assert "JUPYTER_SCHED_REPLICA_ID" in text
    quickstart.screenshot(out.locator(".jsched-dryrun").first, "quickstart-dryrun")


def test_cancelled_job_in_the_notebook(quickstart: Lab) -> None:
    out = output_of(quickstart, "%sched_cancel --wait long")
    assert re.search(r"long-\w+ on local_cwd: CANCELLED", out.inner_text())
    # The live pane of that job (shown by the cell before) followed it to the end.
    pane = output_of(quickstart, "long = %sched_run")
    pane.locator(".jsched-status .jsched-pill", has_text="CANCELLED").first.wait_for(timeout=15_000)


def test_cancel_button_cancels_a_running_job(quickstart: Lab) -> None:
    index = quickstart.append_and_run(
        "%sched_run utils.python --name button --script scripts/train.py --steps 2000 --delay 0.05"
    )
    out = quickstart.cell(index).locator(".jp-Cell-outputArea")
    status = out.locator(".jsched-status")
    status.locator(".jsched-pill", has_text="RUNNING").first.wait_for(timeout=30_000)
    # The progress bar is moving before we stop it.
    out.locator("pre.jsched-log-text", has_text="train:").wait_for(timeout=30_000)
    # One row of controls: Cancel (only while it can cancel), Pause, Save logs.
    row = out.locator(".jsched-controls")
    assert row.locator("button", has_text="Cancel").count() == 1
    assert row.locator("button", has_text="Save logs").count() == 1
    tops = row.locator("button").evaluate_all("els => els.map(e => Math.round(e.getBoundingClientRect().top))")
    assert len(set(tops)) == 1, f"the buttons are not in one row: {tops}"
    quickstart.screenshot_themes(out.locator(".jsched-job").first, "quickstart-running")
    # "Save logs" writes each replica's whole log next to the notebook and links it; the link opens the
    # file in JupyterLab.
    row.locator("button", has_text="Save logs").click()
    link = out.locator(".jsched-saved a", has_text="python/0")  # on a line of its own, under the buttons
    link.wait_for(timeout=30_000)
    href = link.get_attribute("href") or ""
    assert re.fullmatch(r"jsched-logs/button-\w+/python-0\.log", href), href
    assert "replica 0: 2000 steps" in (quickstart.server.root_dir / href).read_text()
    with quickstart.page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert f"lab/tree/{href}" in tab.url, tab.url
    tab.close()
    # Cancel cannot be undone, so the button asks for a second click to confirm.
    status.locator("button", has_text="Cancel").click()
    confirm = status.locator("button", has_text="Confirm cancel?")
    confirm.wait_for(timeout=10_000)
    confirm.click()
    status.locator(".jsched-pill", has_text="CANCELLED").first.wait_for(timeout=30_000)
    out.locator(".jsched-record").wait_for(timeout=30_000)  # the ended view became its record
    assert out.locator("button", has_text="Cancel").count() == 0
    quickstart.screenshot_themes(out.locator(".jsched-job").first, "quickstart-cancelled")


def test_flood_of_200000_lines_keeps_the_page_responsive(quickstart: Lab) -> None:
    index = quickstart.append_and_run(f"flood = %sched_run utils.python --name flood --script {FLOOD} {FLOOD_LINES}")
    out = quickstart.cell(index).locator(".jp-Cell-outputArea")
    out.locator(".jsched-status .jsched-pill", has_text="RUNNING").first.wait_for(timeout=30_000)

    # While the pane streams, a person runs another cell: time from "run" to its result on the page.
    round_trips: List[float] = []
    while len(round_trips) < 3:
        started = time.monotonic()
        probe = quickstart.append_and_run("1+1")
        quickstart.cell(probe).locator(".jp-OutputArea-output", has_text="2").wait_for(timeout=60_000)
        round_trips.append(time.monotonic() - started)
    still_running = out.locator(".jsched-status .jsched-pill", has_text="RUNNING").count() > 0

    started = time.monotonic()
    out.locator(".jsched-status .jsched-pill", has_text="SUCCEEDED").first.wait_for(timeout=120_000)
    pane = out.locator(".jsched-log")
    pane.locator("pre.jsched-log-text", has_text=f"line {FLOOD_LINES}: done").wait_for(timeout=60_000)
    settle = time.monotonic() - started
    lines = log_lines(pane)
    assert lines[-1].endswith(f"line {FLOOD_LINES}: done"), lines[-3:]
    # A bounded tail is shown, with a count of what is not.
    assert len(lines) < 5000
    assert "not shown" in pane.locator(".jsched-log-header").inner_text()
    # And the page still answers at once afterwards.
    started = time.monotonic()
    probe = quickstart.append_and_run("2+2")
    quickstart.cell(probe).locator(".jp-OutputArea-output", has_text="4").wait_for(timeout=30_000)
    after = time.monotonic() - started

    metrics = {
        "flood_lines": FLOOD_LINES,
        "round_trip_during_flood_s": [round(t, 3) for t in round_trips],
        "probes_done_while_job_running": still_running,
        "seconds_from_probes_to_last_line_shown": round(settle, 2),
        "round_trip_after_flood_s": round(after, 3),
        "quickstart_run_all_s": round(quickstart.run_all_seconds, 1),
    }
    E2E_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (E2E_ARTIFACTS / "flood-metrics.json").write_text(json.dumps(metrics, indent=1))
    print("\nflood metrics:", json.dumps(metrics))
    quickstart.screenshot(out.locator(".jsched-job").first, "quickstart-flood")
    assert quickstart.page_problems() == []


def test_no_rate_limit_or_widget_errors(quickstart: Lab, lab_server: LabServer) -> None:
    """Runs last in this module: everything above streamed through the same server and page."""
    assert quickstart.page_problems() == []
    assert lab_server.log_problems() == []
    assert not quickstart.page.locator("text=Error displaying widget").count()
