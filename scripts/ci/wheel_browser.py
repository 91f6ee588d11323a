"""The Jobs sidebar of an installed wheel, seen in a real browser (run by scripts/ci/wheel_smoke.sh).

wheel_smoke.sh starts JupyterLab from the fresh venv the wheel was installed into; this script (run with the
development venv's Python, which has Playwright) checks what a user of that wheel gets, with no step but
``pip install``:

1. the server extension answers: ``GET /jupyter-sched/api/jobs`` with the token is 200 JSON with a job list;
2. the JupyterLab extension is loaded: the Jobs tab is in the left sidebar; a click shows the panel, which
   has a row for each ``local_cwd`` job the API listed (the jobs the smoke test ran before, in its own log
   dir; not the local_docker backend's, whose containers on this host other runs may remove at any moment)
   and no error notice;
3. a screenshot of it goes to ``artifacts/screenshots/wheel-sidebar.png`` (also when a check fails).

Chromium is Debian's, launched as tests/e2e/conftest.py launches it (its ``CHROMIUM`` and ``CHROMIUM_ARGS``,
repeated here: importing that conftest would bring pytest, tests/conftest.py and this checkout's
jupyter_sched into a check that is about the wheel). Any failure exits 1 with a message that says which
step failed and the tail of the server's log.

    python scripts/ci/wheel_browser.py --url http://127.0.0.1:PORT --token TOKEN --server-log LOG [--pid PID]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "artifacts" / "screenshots" / "wheel-sidebar.png"
CHROMIUM = os.environ.get("JSCHED_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
JOBS_TAB = '.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]'
"""The Jobs sidebar's tab: its widget id is ``jupyter-sched-jobs`` (labextension/src/sidebar.ts)."""
DEADLINE_S = 120.0
"""Generous: the machine may be busy, and JupyterLab's first load of its bundles is slow on 2 cores."""


def fail(message: str, server_log: Optional[Path] = None) -> NoReturn:
    if server_log is not None and server_log.exists():
        tail = server_log.read_text(errors="replace").splitlines()[-40:]
        print("--- the last lines of JupyterLab's log ---", *tail, "---", sep="\n", file=sys.stderr)
    print(f"wheel_browser: {message}", file=sys.stderr)
    sys.exit(1)


def get(url: str, token: str, timeout: float = 10.0) -> Any:
    """GET ``url`` with the token; the parsed JSON (raises on a status that is not 200 or a body that is not JSON)."""
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        if resp.status != 200:
            raise ValueError(f"status {resp.status}")
        return json.loads(resp.read())


def wait_for_server(url: str, token: str, pid: Optional[int], server_log: Path) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        if pid is not None:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                fail(f"JupyterLab (pid {pid}) exited before it answered", server_log)
        try:
            get(f"{url}/api/status", token)
            return
        except (OSError, ValueError):
            if time.monotonic() > deadline:
                fail(f"JupyterLab did not answer {url}/api/status in {DEADLINE_S:.0f} s", server_log)
            time.sleep(0.5)


def check_api(url: str, token: str, server_log: Path) -> List[str]:
    """The server extension's job list, straight from the API; the handles of its ``local_cwd`` jobs."""
    deadline = time.monotonic() + DEADLINE_S
    while True:  # the first listing asks every backend (Docker, Slurm), which a busy machine may make slow
        try:
            body: Dict[str, Any] = get(f"{url}/jupyter-sched/api/jobs", token, timeout=30.0)
            break
        except urllib.error.HTTPError as e:
            fail(f"GET /jupyter-sched/api/jobs answered {e.code} (is the wheel's server extension enabled?)",
                 server_log)  # fmt: skip
        except (OSError, ValueError) as e:
            if time.monotonic() > deadline:
                fail(f"GET /jupyter-sched/api/jobs gave no JSON in {DEADLINE_S:.0f} s: {e}", server_log)
            print(f"wheel_browser: GET /jupyter-sched/api/jobs: {e}; asking again", file=sys.stderr)
    if not isinstance(body, dict) or not isinstance(body.get("jobs"), list):
        fail(f"GET /jupyter-sched/api/jobs answered JSON without a job list: {str(body)[:300]}", server_log)
    print(f"server extension: GET /jupyter-sched/api/jobs answered 200 JSON listing {body.get('apps')} job(s)")
    return [str(row["handle"]) for row in body["jobs"] if str(row.get("handle", "")).startswith("local_cwd://")]


def check_sidebar(url: str, token: str, handles: List[str], server_log: Path) -> None:
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        fail(f"no Playwright in {sys.executable} ({e}; bash scripts/setup/browser.sh installs it)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        fail(f"no Chromium at {CHROMIUM} (bash scripts/setup/browser.sh installs it)")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    step = "launching Chromium"
    with tempfile.TemporaryDirectory(prefix="wheel-browser-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 800},
        )  # fmt: skip
        timeout_ms = DEADLINE_S * 1000
        context.set_default_timeout(timeout_ms)
        page = context.new_page()
        try:
            step = "opening JupyterLab"
            page.goto(f"{url}/lab?reset&token={token}")
            step = "waiting for the Jobs tab in the left sidebar (is the wheel's JupyterLab extension loaded?)"
            page.locator(JOBS_TAB).wait_for(state="visible")
            step = "clicking the Jobs tab"
            page.locator(JOBS_TAB).click()
            sidebar = page.locator(".jsl-sidebar")
            step = "waiting for the Jobs panel"
            sidebar.wait_for(state="visible")
            sidebar.locator(".jsl-sidebar-title", has_text="Jobs").wait_for(state="visible")
            # the panel filled from the API: its summary is set, and every job the API listed has its row
            step = "waiting for the panel's list (the panel's first answer from the API)"
            page.wait_for_function(
                "() => /running/.test(document.querySelector('.jsl-sidebar .jsl-sidebar-summary').textContent)"
            )
            for handle in handles:
                step = f"waiting for the row of {handle}"
                sidebar.locator(f'.jsl-row[data-handle="{handle}"]').wait_for(state="visible")
            errors = sidebar.locator(".jsl-notice.jsl-error").all_inner_texts()
            if errors:
                step = "reading the panel's notices"
                raise AssertionError(f"the panel shows an error: {' | '.join(errors)}")
            page.screenshot(path=str(SCREENSHOT))
            summary = sidebar.locator(".jsl-sidebar-summary").inner_text()
            print(f"JupyterLab: the Jobs sidebar ({summary}) shows the {len(handles)} local_cwd job(s); {SCREENSHOT}")
        except (PlaywrightError, AssertionError) as e:
            try:
                page.screenshot(path=str(SCREENSHOT))
                shot = f" (screenshot: {SCREENSHOT})"
            except PlaywrightError:
                shot = ""
            context.close()
            fail(f"the Jobs sidebar check failed while {step}{shot}: {str(e).splitlines()[0]}", server_log)
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the lab server's base URL, http://127.0.0.1:PORT")
    parser.add_argument("--token", required=True, help="the server's token (--IdentityProvider.token)")
    parser.add_argument("--server-log", required=True, type=Path, help="the server's log, shown on failure")
    parser.add_argument("--pid", type=int, help="the server's pid: stop waiting when it has exited")
    args = parser.parse_args()
    url = args.url.rstrip("/")
    wait_for_server(url, args.token, args.pid, args.server_log)
    handles = check_api(url, args.token, args.server_log)
    if not handles:
        fail("the API listed no local_cwd job; wheel_smoke.sh runs two before this check", args.server_log)
    check_sidebar(url, args.token, handles, args.server_log)


if __name__ == "__main__":
    main()
