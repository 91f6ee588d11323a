"""A real Jupyter server with jupyter_sched's extension, enabled by the file the wheel installs.

``jobs_server`` (module): ``python -m jupyter_server`` from this venv on 127.0.0.1 at a free port with a
random token; its config path holds ``jupyter_server_config.d/jupyter_sched.json`` copied from
``jupyter-config/server-config/`` (so the shipped file is what enables the extension); its own
``JUPYTER_SCHED_LOG_DIR``, which the ``cli`` fixture's commands share. Its log:
``artifacts/server/jupyter-server.log``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVER_CONFIG = REPO / "jupyter-config" / "server-config" / "jupyter_sched.json"
ARTIFACTS = REPO / "artifacts" / "server"
SCRIPT = str(Path(sys.executable).parent / "jupyter-sched")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server_args(argv=[...], env={...}): a test's own server's arguments")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def quote(handle: str) -> str:
    """A handle as one URL path segment (what the JupyterLab extension sends: encodeURIComponent)."""
    return urllib.parse.quote(handle, safe="")


@dataclass
class Reply:
    status: int
    body: bytes
    headers: Dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class JobsServer:
    base_url: str
    token: str
    root_dir: Path
    log_dir: Path
    log_path: Path
    proc: subprocess.Popen  # type: ignore[type-arg]

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def request(self, method: str, path: str, token: bool = True, headers: Optional[Dict[str, str]] = None,
                timeout: float = 30.0) -> Reply:  # fmt: skip
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = f"token {self.token}"
        data = b"" if method == "POST" else None
        req = urllib.request.Request(self.url(path), method=method, headers=hdrs, data=data)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return Reply(resp.status, resp.read(), dict(resp.headers))
        except urllib.error.HTTPError as e:
            return Reply(e.code, e.read(), dict(e.headers))

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        reply = self.request(method, "jupyter-sched/api/" + path, **kwargs)
        assert reply.status == 200, f"{method} {path}: {reply.status} {reply.body[:500]!r}"
        return reply.json()

    def events(self, path: str, timeout: float = 60.0) -> List[Tuple[str, Any]]:
        """Reads a server-sent-event stream until the server ends it: ``(event, data)`` pairs."""
        req = urllib.request.Request(self.url("jupyter-sched/api/" + path),
                                     headers={"Authorization": f"token {self.token}"})  # fmt: skip
        out: List[Tuple[str, Any]] = []
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            event, data = "", []
            for raw in resp:
                line = raw.decode().rstrip("\n")
                if not line:
                    if data:
                        out.append((event, json.loads("\n".join(data))))
                    event, data = "", []
                elif line.startswith("event: "):
                    event = line[len("event: "):]
                elif line.startswith("data: "):
                    data.append(line[len("data: "):])
        return out

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_for(self, predicate: Any, what: str, timeout: float = 60.0, **query: str) -> Any:
        """Polls ``GET jobs`` until ``predicate(body)`` returns something truthy; returns it."""
        deadline = time.monotonic() + timeout
        body = None
        while time.monotonic() < deadline:
            body = self.api("GET", "jobs?" + urllib.parse.urlencode({"limit": "500", **query}))
            got = predicate(body)
            if got:
                return got
            time.sleep(0.2)
        raise AssertionError(f"{what}: not seen within {timeout} s; last listing: {json.dumps(body)[:2000]}")


def start_server(base: Path, extra_env: Optional[Dict[str, str]] = None, argv: Optional[List[str]] = None,
                 module: str = "jupyter_server", log_name: str = "jupyter-server.log") -> JobsServer:  # fmt: skip
    """Starts a Jupyter server (``module``: jupyter_server, or jupyterlab) with the shipped config file."""
    dirs = {n: base / n for n in ("config", "config_path", "runtime", "data", "root", "sched_state")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    (dirs["config_path"] / "jupyter_server_config.d").mkdir(exist_ok=True)
    shutil.copy(SERVER_CONFIG, dirs["config_path"] / "jupyter_server_config.d" / SERVER_CONFIG.name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / log_name
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]), JUPYTER_CONFIG_PATH=str(dirs["config_path"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]), JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_SCHED_LOG_DIR=str(dirs["sched_state"]), PYTHONUNBUFFERED="1", **(extra_env or {}),
    )  # fmt: skip
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable, "-m", module, "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", "--ServerApp.password=", f"--ServerApp.root_dir={dirs['root']}",
        *(argv or []),
    ]  # fmt: skip
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, cwd=dirs["root"], env=env, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT)  # fmt: skip
    log.close()
    server = JobsServer(f"http://127.0.0.1:{port}", token, dirs["root"], dirs["sched_state"], log_path, proc)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{server.log_text()[-3000:]}")
        try:
            if server.request("GET", "api/status", timeout=2).status == 200:
                return server
        except OSError:  # not listening yet
            pass
        if time.monotonic() > deadline:
            stop_server(server)
            raise RuntimeError(f"the server did not answer in 60 s:\n{server.log_text()[-3000:]}")
        time.sleep(0.2)


def stop_server(server: JobsServer) -> None:
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(15)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


@pytest.fixture(scope="module")
def jobs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JobsServer]:
    server = start_server(tmp_path_factory.mktemp("jobs_server"))
    yield server
    stop_server(server)


@dataclass
class Cli:
    """``jupyter-sched`` run against the server's log dir (what a user's terminal beside the server does)."""

    env: Dict[str, str]
    cwd: Path
    procs: List[subprocess.Popen]  # type: ignore[type-arg]

    def __call__(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        return subprocess.run([SCRIPT, *args], env=self.env, cwd=self.cwd, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip

    def background(self, *args: str) -> subprocess.Popen:  # type: ignore[type-arg]
        """``jupyter-sched run`` on a local backend stays in the foreground (its replicas are its children):
        started here and left running; stopped at the end of the test."""
        proc = subprocess.Popen([SCRIPT, *args], env=self.env, cwd=self.cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
        self.procs.append(proc)
        return proc


@pytest.fixture
def cli(jobs_server: JobsServer, tmp_path: Path) -> Iterator[Cli]:
    env = dict(os.environ, JUPYTER_SCHED_LOG_DIR=str(jobs_server.log_dir), NO_COLOR="1")
    c = Cli(env, tmp_path, [])
    yield c
    for proc in c.procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
