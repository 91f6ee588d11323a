"""End-of-job notifications in a real JupyterLab in Chromium, from what the server saw end
(``GET jobs/ended?since=``), not from two snapshots of the list:

- three failing jobs of under a second each, run while the sidebar is closed (the list is then asked every
  5 s, so each starts and ends between two asks), each notify exactly once; after a page reload none
  notifies again (the cursor is kept in localStorage). Screenshots: ``notification-short-{light,dark}.png``.
  The same with the sidebar open (asked every second).
- a job and a role named with U+202E (which writes what follows backwards) and ESC show those characters
  escaped (``\\u202e``) in the notification, the sidebar and the job view, and the job view follows that
  role's log. Screenshot: ``notification-bidi-light.png``.
- a sweep's notification opens its one failed run, or the sweep's runs in the sidebar when several failed.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from tests.e2e.conftest import Lab, LabServer

SCRIPT = str(Path(sys.executable).parent / "jupyter-sched")
CURSOR_KEY = "jupyter-sched:ended-cursor:"

# every toast the page ever shows, counted once per element (an init script: it runs again after a reload)
COUNT_TOASTS = """
window.__toasts = [];
const seen = new WeakSet();
const look = () => {
  for (const t of document.querySelectorAll('.Toastify__toast')) {
    if (!seen.has(t)) { seen.add(t); window.__toasts.push(t.innerText); }
  }
};
new MutationObserver(look).observe(document, { childList: true, subtree: true });
"""


@pytest.fixture
def closed(lab: Lab, lab_server: LabServer) -> Iterator[Lab]:
    """JupyterLab with no notebook open and the Jobs sidebar closed, every toast counted, every ask of
    ``jobs/ended`` counted, and the notifier's cursor kept (it has asked once)."""
    page = lab.page
    page.add_init_script(COUNT_TOASTS)
    asks: List[str] = []
    page.on("requestfinished", lambda r: asks.append(r.url) if "/jupyter-sched/api/jobs/ended" in r.url else None)
    lab.asks = asks  # type: ignore[attr-defined]
    open_lab(lab, lab_server)
    yield lab
    lab.set_theme(False)


def open_lab(lab: Lab, server: LabServer) -> None:
    page = lab.page
    page.goto(server.url(f"lab?reset&token={server.token}"))
    page.wait_for_function("() => window.jupyterapp !== undefined && window.jupyterapp.shell !== undefined",
                           timeout=60_000)  # fmt: skip
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    assert not page.locator(".jsl-sidebar").is_visible()
    page.wait_for_function("(k) => Object.keys(localStorage).some(key => key.startsWith(k))", arg=CURSOR_KEY,
                           timeout=60_000)  # fmt: skip


def asks_more(lab: Lab, n: int) -> None:
    """Waits until the notifier has asked ``jobs/ended`` ``n`` more times (each answer is told when it comes)."""
    asks: List[str] = lab.asks  # type: ignore[attr-defined]
    target = len(asks) + n
    lab.page.wait_for_function("() => true")  # let the event loop hand over finished requests
    deadline_ms = 60_000
    waited = 0
    while len(asks) < target:
        assert waited < deadline_ms, f"the notifier asked {len(asks)} times, not {target}"
        lab.page.wait_for_timeout(250)
        waited += 250


def toasts(lab: Lab) -> List[str]:
    return lab.page.evaluate("() => window.__toasts.slice()")  # type: ignore[no-any-return]


def env_of(server: LabServer) -> Dict[str, str]:
    return dict(os.environ, JUPYTER_SCHED_LOG_DIR=str(server.sched_log_dir), NO_COLOR="1")


def short_failures(lab: Lab, server: LabServer, tmp_path: Path) -> List[str]:
    """Runs three failing jobs of 0.3 s one after the other and waits until each has notified; their names."""
    tag = secrets.token_hex(3)
    names = [f"blip{i}x{tag}" for i in range(3)]
    for i, name in enumerate(names):
        # in the foreground: the command returns when the job has ended, well under the 5 s between two asks
        done = subprocess.run([SCRIPT, "run", "-s", "local_cwd", "--wait", "utils.sh", "--name", name,
                               f"sleep 0.3; exit {i + 1}"], env=env_of(server), cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
        assert done.returncode != 0, done.stdout + done.stderr
    for i, name in enumerate(names):
        toast = lab.page.locator(".Toastify__toast", has_text=f"{name} FAILED: sh/0 exit code {i + 1}")
        toast.wait_for(timeout=60_000)
    return names


def test_short_failures_notify_once_each_with_the_sidebar_closed_and_not_after_a_reload(
    closed: Lab, lab_server: LabServer, tmp_path: Path
) -> None:  # fmt: skip
    names = short_failures(closed, lab_server, tmp_path)
    page = closed.page
    assert not page.locator(".jsl-sidebar").is_visible()
    closed.screenshot_themes(page.locator(".Toastify__toast", has_text=names[0]).first, "notification-short")
    asks_more(closed, 2)  # two more answers: nothing is told again
    told = toasts(closed)
    for name in names:
        assert sum(name in text for text in told) == 1, (name, told)

    page.reload()
    page.wait_for_function("() => window.jupyterapp !== undefined && window.jupyterapp.shell !== undefined",
                           timeout=60_000)  # fmt: skip
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    asks_more(closed, 2)
    again = toasts(closed)
    assert not [text for text in again if any(name in text for name in names)], again


def test_short_failures_notify_once_each_with_the_sidebar_open(closed: Lab, lab_server: LabServer,
                                                                tmp_path: Path) -> None:  # fmt: skip
    page = closed.page
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    page.locator(".jsl-sidebar").wait_for(state="visible")
    names = short_failures(closed, lab_server, tmp_path)
    asks_more(closed, 3)
    told = toasts(closed)
    for name in names:
        assert sum(name in text for text in told) == 1, (name, told)


ROLE = "tr\u202eain\x1b"
SUBMIT = """
import sys
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role
name, role = sys.argv[1], sys.argv[2]
with get_runner("default") as runner:
    print(runner.run(AppDef(name, [Role(role, image="", entrypoint="sh", args=["-c", "echo followed-here; exit 4"])]),
                     "local_cwd", cfg={"outlive_owner": True}))
"""


def test_bidi_and_control_characters_show_escaped_and_the_role_log_is_followed(
    closed: Lab, lab_server: LabServer, tmp_path: Path
) -> None:  # fmt: skip
    name = f"ev\u202eil{secrets.token_hex(2)}"
    done = subprocess.run([sys.executable, "-c", SUBMIT, name, ROLE], env=env_of(lab_server), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    handle = done.stdout.strip().splitlines()[-1]
    page = closed.page
    shown_role = "tr\\u202eain\\x1b"
    toast = page.locator(".Toastify__toast", has_text=f"{shown_role}/0 exit code 4")
    toast.wait_for(timeout=60_000)
    text = toast.inner_text()
    assert "\u202e" not in text and "\x1b" not in text and "ev\\u202eil" in text, repr(text)
    closed.screenshot(toast, "notification-bidi-light")
    # the job view: the role's tab and its log, followed under the role's exact name
    page.evaluate("(h) => window.jupyterapp.commands.execute('jupyter-sched:open-job', {handle: h})", handle)
    view = page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"]')
    view.locator(".jsl-log", has_text="followed-here").wait_for(timeout=60_000)
    view_text = view.inner_text()
    assert "\u202e" not in view_text and "\x1b" not in view_text, repr(view_text)
    assert shown_role + "/0" in view_text and "ev\\u202eil" in view_text, repr(view_text)
    # the sidebar's row
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    row = page.locator(f'.jsl-sidebar .jsl-row[data-handle="{handle}"]')
    row.wait_for(timeout=60_000)
    row_text = row.inner_text() + (row.get_attribute("title") or "")
    assert "\u202e" not in row_text and "ev\\u202eil" in row_text, repr(row_text)


def gated_sweep(server: LabServer, tmp_path: Path, codes: List[int]) -> Tuple[str, List[str]]:
    """Runs named as one sweep's (``<name>-<id>-NNN``, as ``jupyter_sched.sweep`` names them) that all end when
    the test says (a gate file), with these exit codes; the sweep's name and the runs' handles in run order."""
    sweep = f"notify-sweep-a{secrets.token_hex(6)}"
    gate = tmp_path / f"gate-{sweep}"
    handles = []
    for i, code in enumerate(codes):
        done = subprocess.run([SCRIPT, "run", "-s", "local_cwd", "--cfg", "outlive_owner=true", "utils.sh",
                               "--name", f"{sweep}-{i:03d}",
                               f"while [ ! -e {gate} ]; do sleep 0.1; done; exit {code}"],
                              env=env_of(server), cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        handles.append(done.stdout.strip().splitlines()[-1])
    gate.touch()
    return sweep, handles


def test_a_sweeps_open_goes_to_its_failed_run_or_to_the_sweep_when_several_failed(
    closed: Lab, lab_server: LabServer, tmp_path: Path
) -> None:  # fmt: skip
    """Issue 35, point 7: not to the newest run. The failed run is the oldest here, so "the newest run" (what
    Open opened before) is another one."""
    page = closed.page
    _, handles = gated_sweep(lab_server, tmp_path, [5, 0, 0])
    toast = page.locator(".Toastify__toast", has_text="sweep notify-sweep ended: ").filter(has_text="1 FAILED")
    toast.wait_for(timeout=60_000)
    toast.locator("button", has_text="Open").click()
    view = page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handles[0]}"]')
    view.wait_for(timeout=60_000)
    view.locator(".jsl-pill", has_text="FAILED").first.wait_for(timeout=60_000)
    for other in handles[1:]:
        assert page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{other}"]').count() == 0

    second, two = gated_sweep(lab_server, tmp_path, [0, 6, 7])
    toast = page.locator(".Toastify__toast", has_text="sweep notify-sweep ended: ").filter(has_text="2 FAILED")
    toast.wait_for(timeout=60_000)
    toast.locator("button", has_text="Open").click()
    # the sweep: the Jobs sidebar lists that sweep's runs, and no job view opened for one of them
    sidebar = page.locator(".jsl-sidebar")
    sidebar.wait_for(state="visible", timeout=60_000)
    sidebar.locator(".jsl-sweep-bar", has_text=f"runs of sweep {second}").wait_for(timeout=60_000)
    for handle in two:
        sidebar.locator(f'.jsl-row[data-handle="{handle}"]').wait_for(timeout=60_000)
        assert page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"]').count() == 0
