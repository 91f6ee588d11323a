"""A real JupyterLab server and a real headless Chromium for the browser tests.

``lab_server`` (session): JupyterLab from this venv on 127.0.0.1 at a free port, with a random token, a
temp root dir holding copies of ``notebooks/``, the venv's Python as the ``python3`` kernel (a kernelspec in
a temp ``JUPYTER_PATH``), isolated config/runtime/settings/workspace dirs, and its log written to
``artifacts/e2e/jupyterlab-server.log``. ``notebook7_server`` (session): the same, with Notebook 7 (the
``notebook`` package) as the front end, on a server of its own (log: ``artifacts/e2e/notebook-server.log``).

jupyter_sched's JupyterLab side is the development venv's own, as a contributor's ``jupyter lab`` has it
(tests/test_packaging.py checks it is there): the server extension enabled by the editable install's
``etc/jupyter/jupyter_server_config.d/jupyter_sched.json`` (the file a wheel installs), the JupyterLab
extension built into ``jupyter_sched/labextension`` and linked as the venv's
``share/jupyter/labextensions/jupyter-sched`` (both by ``scripts/setup/labextension.sh``). Neither is in the
temp dirs: the venv's paths come after them. A missing build or link skips locally and fails under CI=true.

``browser_context`` (session): ``/usr/bin/chromium`` (Debian's; Playwright cannot download browsers here)
launched headless by Playwright with a fresh user-data-dir. Missing browser or Playwright: skip locally,
FAIL under CI=true (``missing_engine``). ``bash scripts/setup/browser.sh`` installs both.

``lab`` (function): a new page and a :class:`Lab` helper that opens notebooks and runs cells the way the
UI does (commands, never awaited: ``notebook:run-all-cells`` resolves only when every cell is done).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from tests.conftest import missing_engine

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
JOB_MIME = "application/vnd.jupyter-sched.job+json"
"""What a job's output also carries: which job it shows (see jupyter_sched/notebook/displays/record.py)."""
E2E_ARTIFACTS = ARTIFACTS / "e2e"

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

# What a healthy server log never contains while our panes stream. The rate-limit *warning text* goes to the
# browser (as stderr in the cell); the server logs "iopub messages resumed" when it stops dropping.
SERVER_LOG_PROBLEMS = [
    "iopub_msg_rate_limit",
    "iopub_data_rate_limit",
    "IOPub message rate exceeded",
    "IOPub data rate exceeded",
    "iopub messages resumed",
    "WebSocketClosedError",
    "Traceback (most recent call last)",
]
PAGE_PROBLEMS = [
    "IOPub message rate exceeded",
    "IOPub data rate exceeded",
    "Error displaying widget",
    "Model not found",
    "model not found",
]


# -- the server --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


@dataclass
class LabServer:
    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    proc: subprocess.Popen  # type: ignore[type-arg]
    sched_log_dir: Path
    front_end: str = "jupyterlab"

    def notebook_url(self, notebook: str) -> str:
        """Where a person opens ``notebook``: JupyterLab in a fresh layout; Notebook 7 on a page of its own."""
        if self.front_end == "notebook":
            return self.url(f"notebooks/{notebook}?token={self.token}")
        return self.url(f"lab/tree/{notebook}?reset&token={self.token}")

    def url(self, path: str = "") -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def api(self, method: str, path: str, timeout: float = 10.0) -> Any:
        req = urllib.request.Request(
            self.url(path), method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_problems(self) -> List[str]:
        """Lines of the server log that show dropped output, dead websockets or tracebacks."""
        return [
            line
            for line in self.log_text().splitlines()
            if any(p.lower() in line.lower() for p in SERVER_LOG_PROBLEMS)
        ]

    def write_notebook(self, name: str, sources: List[str]) -> str:
        """Writes a notebook of code cells (the ``python3`` kernel) into the root dir; returns its path there."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
        nbformat.write(nb, str(self.root_dir / name))
        return name

    def saved_outputs(self, name: str) -> List[Any]:
        """Every output the notebook ``name`` holds on disk (what its last save kept), cell by cell."""
        cells = json.loads((self.root_dir / name).read_text())["cells"]
        return [o for cell in cells for o in cell.get("outputs", [])]

    def saved_job_outputs(self, name: str) -> List[Any]:
        """The saved outputs that say which job they show (:data:`JOB_MIME`)."""
        return [o for o in self.saved_outputs(name) if JOB_MIME in o.get("data", {})]

    def shutdown_kernels(self) -> None:
        try:
            for kernel in self.api("GET", "api/kernels"):
                self.api("DELETE", f"api/kernels/{kernel['id']}", timeout=30)
        except (OSError, ValueError):
            pass


def _kernelspec(jupyter_path: Path) -> None:
    """The venv's interpreter as the ``python3`` kernel: what the tutorial notebooks name."""
    _write_json(
        jupyter_path / "kernels" / "python3" / "kernel.json",
        {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (jupyter_sched)",
            "language": "python",
            "metadata": {"debugger": False},
        },
    )


def _lab_settings(settings_dir: Path) -> None:
    """User settings: every cell attached to the DOM (so tests can find it), no news or update checks."""
    _write_json(
        settings_dir / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings",
        {"windowingMode": "none"},
    )
    _write_json(
        settings_dir / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        {"fetchNews": "false", "checkForUpdates": False},
    )


VENV_LABEXTENSION = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyter-sched"
VENV_SERVER_CONFIG = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "jupyter_sched.json"


def _jupyter_sched_extensions() -> None:
    """Both extensions are where this venv's Jupyter finds them, or the tests skip (fail under CI=true)."""
    if not (VENV_LABEXTENSION / "package.json").is_file():
        missing_engine(
            "the JupyterLab extension build",
            f"no {VENV_LABEXTENSION} (bash scripts/setup/labextension.sh builds it and links it there)",
        )
    if not VENV_SERVER_CONFIG.is_file():
        missing_engine("the server extension", f"no {VENV_SERVER_CONFIG} (bash scripts/setup/python.sh)")


@contextlib.contextmanager
def serve(tmp_path_factory: pytest.TempPathFactory, front_end: str) -> Iterator[LabServer]:
    """A Jupyter server with one front end, ``jupyterlab`` or ``notebook`` (Notebook 7), set up as the
    module docstring says; its log is ``artifacts/e2e/<front_end>-server.log``."""
    module, app = {"jupyterlab": ("jupyterlab", "LabApp"), "notebook": ("notebook", "JupyterNotebookApp")}[front_end]
    try:
        importlib.import_module(module)
    except ImportError as e:
        missing_engine(front_end, f"{e} (bash scripts/setup/browser.sh installs it)")
    base = tmp_path_factory.mktemp(front_end)
    root = base / "root"
    # What a person gets: the notebooks and what they use, not the test support (sources, nbval files).
    shutil.copytree(
        NOTEBOOKS,
        root,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "src", "conftest.py", "sanitize.cfg"),
    )
    dirs = {name: base / name for name in ("config", "runtime", "data", "jupyter_path", "ipython",
                                           "settings", "workspaces", "sched_state", "config_path")}  # fmt: skip
    for d in dirs.values():
        d.mkdir()
    _kernelspec(dirs["jupyter_path"])
    _jupyter_sched_extensions()
    _lab_settings(dirs["settings"])
    E2E_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = E2E_ARTIFACTS / f"{front_end}-server.log"

    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_PATH=str(dirs["jupyter_path"]),
        JUPYTER_CONFIG_PATH=str(dirs["config_path"]),
        IPYTHONDIR=str(dirs["ipython"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        JUPYTER_SCHED_LOG_DIR=str(dirs["sched_state"]),
        PYTHONUNBUFFERED="1",
    )
    env.pop("JUPYTER_SCHED_NONINTERACTIVE", None)
    port = free_port()
    token = secrets.token_hex(16)
    cmd = [
        sys.executable, "-m", module,
        "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        f"--{app}.expose_app_in_browser=True",
        f"--{app}.workspaces_dir={dirs['workspaces']}",
        f"--{app}.user_settings_dir={dirs['settings']}",
        "--ServerApp.log_level=INFO",
    ]  # fmt: skip
    if front_end == "jupyterlab":  # Notebook 7 has neither: news and update checks are off in the settings
        cmd += ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log_path, proc, dirs["sched_state"], front_end)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{front_end} exited with {proc.returncode}:\n{server.log_text()[-3000:]}")
            try:
                server.api("GET", "api/status", timeout=2)
                break
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    pytest.fail(f"{front_end} did not answer in 60 s:\n{server.log_text()[-3000:]}")
                time.sleep(0.2)
        yield server
    finally:
        if proc.poll() is None:
            server.shutdown_kernels()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    with serve(tmp_path_factory, "jupyterlab") as server:
        yield server


@pytest.fixture(scope="session")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """Notebook 7 (the ``notebook`` package) instead of JupyterLab, on a server of its own."""
    with serve(tmp_path_factory, "notebook") as server:
        yield server


# -- the browser -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing_engine("Chromium", f"no executable at {CHROMIUM} (bash scripts/setup/browser.sh installs it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        missing_engine("Playwright", f"{e} (bash scripts/setup/browser.sh installs it)")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser_context(chromium_executable: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        try:
            context = pw.chromium.launch_persistent_context(
                str(profile),
                executable_path=chromium_executable,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 1000},
            )
        except Exception as e:  # noqa: BLE001 - any launch failure means "no usable browser"
            missing_engine("Chromium", f"Playwright could not launch {chromium_executable}: {e}")
        context.set_default_timeout(30_000)
        yield context
        context.close()


# -- the page helper ---------------------------------------------------------------------------------------

JS_PANEL = "window.jupyterapp && window.jupyterapp.shell.currentWidget"


@dataclass
class Lab:
    """One browser page on the lab server, with the few UI actions the tests need."""

    page: Any
    server: LabServer
    console_errors: List[str] = field(default_factory=list)
    run_all_seconds: float = 0.0

    def open(self, notebook: str, timeout: float = 60_000) -> None:
        """Opens ``notebook`` (relative to the root dir) in a fresh layout and waits for an idle kernel."""
        self.page.goto(self.server.notebook_url(notebook))
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=timeout)
        self.page.wait_for_function(
            """(path) => {
                const w = window.jupyterapp.shell.currentWidget;
                if (!w || !w.context || w.context.path !== path || !w.content || !w.content.isVisible) return false;
                const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                return !!k && k.status === 'idle' && w.content.widgets.length > 0;
            }""",
            arg=notebook,
            timeout=timeout,
        )

    def command(self, name: str, args: Optional[Dict[str, Any]] = None) -> None:
        """Runs a JupyterLab command without awaiting its promise (run-all resolves only at the end)."""
        self.page.evaluate(
            "([name, args]) => { window.jupyterapp.commands.execute(name, args || {}); }", [name, args]
        )

    def cell_count(self) -> int:
        return int(self.page.evaluate(f"() => {JS_PANEL}.content.widgets.length"))

    def cell(self, index: int) -> Any:
        """A locator for cell ``index`` (every cell is in the DOM: windowingMode is 'none')."""
        self.page.evaluate(
            f"(i) => {{ {JS_PANEL}.content.widgets[i].node.setAttribute('data-e2e-cell', String(i)); }}", index
        )
        return self.page.locator(f".jp-Notebook .jp-Cell[data-e2e-cell='{index}']")

    def run_all(self) -> None:
        """Clears every output and execution count (so stored ones cannot pass for fresh ones), then
        starts running all cells."""
        self.page.evaluate(
            """async () => {
                await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
                window.jupyterapp.commands.execute('notebook:run-all-cells');
            }"""
        )

    def wait_all_done(self, timeout: float = 180_000) -> None:
        """Every code cell executed (has a count) and the kernel is idle again."""
        self.page.wait_for_function(
            f"""() => {{
                const w = {JS_PANEL};
                const k = w.sessionContext.session && w.sessionContext.session.kernel;
                if (!k || k.status !== 'idle') return false;
                return w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount !== null);
            }}""",
            timeout=timeout,
            polling=250,
        )

    def append_and_run(self, source: str) -> int:
        """Adds a code cell at the end, runs it (not awaited), and returns its index."""
        index = self.page.evaluate(
            f"""(source) => {{
                const nb = {JS_PANEL}.content;
                const n = nb.model.sharedModel.cells.length;
                nb.model.sharedModel.insertCell(n, {{cell_type: 'code', source: source}});
                nb.activeCellIndex = n;
                nb.deselectAll();
                window.jupyterapp.commands.execute('notebook:run-cell');
                return n;
            }}""",
            source,
        )
        return int(index)

    def wait_executed(self, index: int, timeout: float = 60_000) -> None:
        self.page.wait_for_function(
            f"(i) => {JS_PANEL}.content.widgets[i].model.executionCount !== null",
            arg=index,
            timeout=timeout,
            polling=50,
        )

    def restart_kernel(self, timeout: float = 60_000) -> None:
        """Restarts the kernel the way a person does: Kernel menu, "Restart Kernel…", then "Restart" in the
        confirmation dialog. Returns once the kernel went through 'restarting' and is idle again."""
        self.page.evaluate(
            f"""() => {{
                const k = {JS_PANEL}.sessionContext.session.kernel;
                window.__e2eKernelStates = [];
                k.statusChanged.connect((_, s) => {{
                    if (window.__e2eKernelStates) window.__e2eKernelStates.push(s);
                }});
            }}"""
        )
        self.page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Kernel$")).click()
        self.page.locator(".lm-Menu-item", has_text=re.compile(r"^Restart Kernel…")).first.click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.locator("button.jp-mod-accept", has_text="Restart").click()
        dialog.wait_for(state="detached")
        self.page.wait_for_function(
            f"""() => {{
                const k = {JS_PANEL}.sessionContext.session.kernel;
                return (window.__e2eKernelStates || []).includes('restarting') && !!k && k.status === 'idle';
            }}""",
            timeout=timeout,
            polling=100,
        )

    def output_text(self, index: int) -> str:
        return str(self.cell(index).locator(".jp-OutputArea").inner_text())

    def cell_index_containing(self, needle: str) -> int:
        """The first code cell whose source contains ``needle`` (to find a tutorial cell by its content)."""
        index = self.page.evaluate(
            f"""(needle) => {JS_PANEL}.content.widgets.findIndex(
                c => c.model.type === 'code' && c.model.sharedModel.getSource().includes(needle))""",
            needle,
        )
        if index < 0:
            raise AssertionError(f"no code cell contains {needle!r}")
        return int(index)

    def page_problems(self) -> List[str]:
        """Rate-limit or widget errors visible anywhere on the page, and widget errors in the console."""
        text = self.page.inner_text("body")
        seen = [p for p in PAGE_PROBLEMS if p in text]
        seen += [e for e in self.console_errors if re.search(r"widget|comm|model", e, re.IGNORECASE)]
        return seen

    def screenshot(self, locator: Any, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=str(path))
        return path

    def set_theme(self, dark: bool) -> None:
        """Switches JupyterLab's theme (its own command, as the Settings menu does) and waits until applied."""
        name = "JupyterLab Dark" if dark else "JupyterLab Light"
        self.page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", name)
        self.page.wait_for_function(
            "(dark) => document.body.dataset.jpThemeLight === (dark ? 'false' : 'true')", arg=dark, timeout=30_000
        )
        self.page.wait_for_timeout(500)  # the theme's stylesheet is applied after the attribute changes

    def screenshot_themes(self, locator: Any, name: str) -> List[Path]:
        """``name-light.png`` and ``name-dark.png``: the same output in both themes (back to light after)."""
        shots = []
        for dark in (False, True):
            self.set_theme(dark)
            shots.append(self.screenshot(locator, f"{name}-{'dark' if dark else 'light'}"))
        self.set_theme(False)
        return shots


def make_lab(context: Any, server: LabServer) -> Lab:
    page = context.new_page()
    lab = Lab(page, server)
    page.on("console", lambda msg: lab.console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda err: lab.console_errors.append(f"pageerror: {err}"))
    return lab


@contextlib.contextmanager
def page_on(context: Any, server: LabServer, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """A :class:`Lab` on a new page of ``server``; a failed test leaves ``FAILED-<test>.png``."""
    helper = make_lab(context, server)
    yield helper
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        helper.page.screenshot(path=str(SCREENSHOTS / f"FAILED-{request.node.name}.png"), full_page=True)
    helper.page.close()


@pytest.fixture
def lab(browser_context: Any, lab_server: LabServer, request: pytest.FixtureRequest) -> Iterator[Lab]:
    with page_on(browser_context, lab_server, request) as helper:
        yield helper


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:  # type: ignore[type-arg]
    """Keeps each phase's report on the item so fixtures can screenshot failures."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
