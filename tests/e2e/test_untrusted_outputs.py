"""A job output in a notebook nobody trusted here follows no job until the user trusts the notebook.

Someone else's ``.ipynb`` names job handles in its job outputs (``application/vnd.jupyter-sched.job+json``).
Opened untrusted, its job outputs show the record saved in the file and a line that says how to follow
the job live; the page asks the Jupyter server nothing about those handles (no detail, no log, no log
stream: checked on every request the page makes). Once the user trusts the notebook (JupyterLab's own
confirmation dialog), the same outputs go live. Nothing the file says becomes markup while untrusted.

The notebook is made the way one arrives from elsewhere: a job cell run in the browser and saved (so its
output is what jupyter_sched really writes, naming a real running job), then copied with a note of its
sender added, which no signature of this server vouches for (Jupyter trusts a notebook whose exact
content it signed: what its user ran or trusted).

Checked in JupyterLab and in Notebook 7 (the same renderer). Screenshots (light and dark):
artifacts/screenshots/outputs-untrusted-*.png, notebook7-outputs-untrusted-*.png.
"""

from __future__ import annotations

import copy
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JOB_MIME, JS_PANEL, Lab, LabServer, page_on

TIMEOUT = 60_000  # ms: upper bounds for what must become visible on a shared machine, not timings
HOSTILE = '<img src=x onerror="window.__jschedPwned = 1">'
"""What a hostile file could put where the output's own text goes (the saved state, the record)."""


@pytest.fixture
def nb7(browser_context: Any, notebook7_server: LabServer, request: pytest.FixtureRequest) -> Iterator[Lab]:
    with page_on(browser_context, notebook7_server, request) as helper:
        yield helper


@pytest.fixture
def go(tmp_path: Path) -> Iterator[Path]:
    """The file the test's job waits for; created at the end whatever happened, so the job never outlives
    the test (it is detached: nothing else would end it)."""
    path = tmp_path / "GO"
    yield path
    path.touch()


def output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


def someone_elses_notebook(lab: Lab, server: LabServer, go: Path) -> Tuple[str, str]:
    """Runs a detached job cell in the browser, saves it mid-run and shuts its kernel down; returns the copy
    a colleague would send (a markdown cell added, a second, hostile copy of the job output appended) and
    the job's handle. Cell 2 of the copy is the job's cell, cell 3 the hostile one."""
    from playwright.sync_api import expect

    tag = random_id()[:6]
    original = server.write_notebook(f"ours-{tag}.ipynb", [
        "%load_ext jupyter_sched",
        f"job = %sched_run --detach utils.sh --name shared-{tag} 'echo started-{tag};"
        f" while [ ! -e {go} ]; do sleep 0.2; done; echo finished-{tag}'\njob",
    ])  # fmt: skip
    lab.open(original)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    expect(output(lab, 1).locator(".jsched-status .jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    server.shutdown_kernels()

    data: Dict[str, Any] = json.loads((server.root_dir / original).read_text())
    job_cell = data["cells"][1]
    (saved,) = [o for o in job_cell["outputs"] if JOB_MIME in o.get("data", {})]
    handle = str(saved["data"][JOB_MIME]["handle"])
    assert saved["data"][JOB_MIME]["final"] is False and f"/shared-{tag}-" in handle
    hostile = copy.deepcopy(job_cell)
    hostile["id"] = f"hostile-{tag}"
    (bad,) = [o for o in hostile["outputs"] if JOB_MIME in o.get("data", {})]
    bad["data"][JOB_MIME]["state"] = f"RUNNING {HOSTILE}"
    bad["data"]["text/html"] = f"<p>hostile-record {HOSTILE}<script>window.__jschedPwned = 2</script></p>"
    hostile["outputs"] = [bad]
    note = {"cell_type": "markdown", "id": f"note-{tag}", "metadata": {},
            "source": "Here is my run, have a look (sent by a colleague)."}  # fmt: skip
    data["cells"] = [note, *data["cells"], hostile]
    theirs = f"theirs-{tag}.ipynb"
    (server.root_dir / theirs).write_text(json.dumps(data, indent=1))
    return theirs, handle


def record_requests(lab: Lab, handle: str) -> List[str]:
    """Every URL the page requests from now on that names ``handle`` in the jobs API (detail, logs, log
    stream, cancel); the list grows as the page runs."""
    quoted = urllib.parse.quote(handle, safe="")  # as encodeURIComponent spells it
    named: List[str] = []

    def seen(request: Any) -> None:
        url = request.url
        if "jupyter-sched/api/jobs/" in url and (quoted in url or handle in urllib.parse.unquote(url)):
            named.append(url)

    lab.page.on("request", seen)
    return named


def check_untrusted(lab: Lab, handle: str, named: List[str], where: str) -> None:
    """The job's output and the hostile copy: the saved record and the hint, no request, no markup."""
    from playwright.sync_api import expect

    for index in (2, 3):
        hint = output(lab, index).locator(".jsl-untrusted")
        expect(hint).to_contain_text("This notebook is not trusted", timeout=TIMEOUT)
        expect(hint).to_contain_text(where)
        expect(hint).to_contain_text("To follow it live, trust the notebook")
    mine = output(lab, 2)
    expect(mine.locator(".jsched-record")).to_contain_text("RUNNING")  # the record as it was saved
    expect(mine.locator(".jsl-untrusted")).to_contain_text("the job as it was saved (RUNNING as of")
    assert mine.locator(".jsl-job-view").count() == 0
    # the file's text stays text: the hostile state is shown literally, its record sanitized
    hostile = output(lab, 3)
    expect(hostile.locator(".jsl-untrusted")).to_contain_text(f"as it was saved (RUNNING {HOSTILE} as of")
    expect(hostile).to_contain_text("hostile-record")
    assert hostile.locator("img[onerror], script").count() == 0
    # a live view would have asked at once, in the same render that drew the hint; a moment more for a
    # request on its way
    lab.page.wait_for_timeout(3000)
    assert lab.page.evaluate("() => window.__jschedPwned") is None
    assert named == [], f"an untrusted output asked the server about {handle}: {named}"


def check_trusted(lab: Lab, handle: str, named: List[str], go: Path, tag_text: str) -> None:
    """After trusting: the job's output follows the job from the server, then keeps its final state."""
    from playwright.sync_api import expect

    view = output(lab, 2).locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text(tag_text, timeout=TIMEOUT)
    assert output(lab, 2).locator(".jsl-untrusted").count() == 0
    assert any("/logs" in url for url in named), named  # the detail, then its log
    go.touch()
    expect(output(lab, 2).locator(".jsched-record")).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    assert lab.page_problems() == []


def test_an_untrusted_notebook_shows_saved_job_records_until_trusted(lab: Lab, lab_server: LabServer,
                                                                      go: Path) -> None:  # fmt: skip
    from playwright.sync_api import expect

    theirs, handle = someone_elses_notebook(lab, lab_server, go)
    named = record_requests(lab, handle)
    lab.open(theirs)
    assert lab.page.evaluate(f"() => ({JS_PANEL}).content.model.cells.get(2).trusted") is False
    check_untrusted(lab, handle, named, "the button below, or Trust Notebook in the command palette")
    lab.screenshot_themes(output(lab, 2), "outputs-untrusted")

    # the output's button runs JupyterLab's notebook:trust, which asks first: cancelled, nothing changes
    output(lab, 2).locator("button.jsl-trust").click()
    dialog = lab.page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Trust this notebook?", timeout=TIMEOUT)
    dialog.locator("button", has_text=re.compile(r"^Cancel$")).click()
    dialog.wait_for(state="detached")
    expect(output(lab, 2).locator(".jsl-untrusted")).to_be_visible()
    assert named == []
    # trusted: the outputs are rendered again, trusted, and follow the job live
    output(lab, 2).locator("button.jsl-trust").click()
    dialog.locator("button.jp-mod-warn", has_text="Trust").click()
    dialog.wait_for(state="detached")
    check_trusted(lab, handle, named, go, "started-")
    assert lab.page.evaluate("() => window.__jschedPwned") is None


def test_notebook7_shows_saved_job_records_until_trusted(nb7: Lab, notebook7_server: LabServer,
                                                         go: Path) -> None:  # fmt: skip
    """The same in Notebook 7, trusted from its File menu (Notebook 7 has *File › Trust Notebook*)."""
    from playwright.sync_api import expect

    theirs, handle = someone_elses_notebook(nb7, notebook7_server, go)
    named = record_requests(nb7, handle)
    nb7.open(theirs)
    check_untrusted(nb7, handle, named, "the button below, or File › Trust Notebook")
    expect(nb7.page.locator(".jp-NotebookTrustedStatus")).to_have_text("Not Trusted")
    nb7.screenshot_themes(output(nb7, 2), "notebook7-outputs-untrusted")
    nb7.page.locator(".lm-MenuBar-item", has_text=re.compile(r"^File$")).click()
    nb7.page.locator(".lm-Menu-item", has_text=re.compile(r"^Trust Notebook")).click()
    dialog = nb7.page.locator(".jp-Dialog")
    dialog.locator("button.jp-mod-warn", has_text="Trust").click()
    dialog.wait_for(state="detached")
    check_trusted(nb7, handle, named, go, "started-")
