"""Fixtures and helpers for the docker backend tests (imported by the tests of this directory).

A scheduler per test on its own session, and clean-up of every container, network, volume, image and
registry tag the tests create: the engine is shared with the developer.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import urllib.request
from typing import Iterator, List, Optional

import pytest

from jupyter_sched.specs import random_id

BUSYBOX = "jupyter-sched/busybox:local"
PYTHON = "jupyter-sched/python:local"
REGISTRY = "127.0.0.1:5000"

# Fixtures are defined as ``<name>_fixture`` with ``name=<name>``: a test module imports the ``_fixture``
# objects and its test functions take ``<name>`` parameters without shadowing an import.
__all__ = [
    "BUSYBOX", "PYTHON", "REGISTRY", "EngineProxy", "delete_from_registry", "docker_images_fixture",
    "docker_network_cleanup_fixture", "docker_sched_fixture", "engine_proxy_fixture", "registry_fixture",
    "remove_session", "session_name_fixture", "volumes_fixture",
]  # fmt: skip


def _docker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True)


def _missing(message: str) -> None:
    from tests.conftest import missing_engine

    missing_engine("a docker test dependency", message)


@pytest.fixture(scope="session", name="docker_network_cleanup")
def docker_network_cleanup_fixture(docker_engine: None) -> Iterator[None]:
    """Removes the shared ``jupyter_sched`` network at the end if the tests created it."""
    had = bool(_docker("network", "ls", "-q", "--filter", "name=^jupyter_sched$").stdout.strip())
    yield
    if not had:
        for net_id in _docker("network", "ls", "-q", "--filter", "name=^jupyter_sched$").stdout.split():
            _docker("network", "rm", net_id)


@pytest.fixture(scope="session", name="docker_images")
def docker_images_fixture(docker_engine: None) -> None:
    missing = [img for img in (BUSYBOX, PYTHON) if _docker("image", "inspect", img).returncode != 0]
    if missing:
        _missing(f"test images {', '.join(missing)} are missing: run `bash scripts/setup/images.sh`")


@pytest.fixture(scope="session", name="registry")
def registry_fixture(docker_engine: None) -> str:
    """The local registry (``bash scripts/setup/registry.sh``)."""
    try:
        urllib.request.urlopen(f"http://{REGISTRY}/v2/", timeout=2)
    except OSError as e:
        _missing(f"no registry on {REGISTRY} ({e}): run `bash scripts/setup/registry.sh`")
    return REGISTRY


@pytest.fixture(name="session_name")
def session_name_fixture() -> str:
    return f"test-{random_id()}"


@pytest.fixture(name="docker_sched")
def docker_sched_fixture(
    docker_engine: None, docker_images: None, docker_network_cleanup: None, session_name: str
) -> Iterator:
    from jupyter_sched.schedulers.docker_scheduler import DockerScheduler

    sched = DockerScheduler(session_name)
    yield sched
    remove_session(session_name)
    sched.close()


def remove_session(session_name: str) -> None:
    """Force-removes every container of a test session (replicas and cancel records)."""
    ids = _docker("ps", "-aq", "--filter", f"label=jupyter_sched.session={session_name}").stdout.split()
    if ids:
        _docker("rm", "-f", "-v", *ids)


@pytest.fixture(name="volumes")
def volumes_fixture(session_name: str) -> Iterator[List[str]]:
    """Names of docker volumes to remove after the test (after the session's containers that use them)."""
    names: List[str] = []
    yield names
    remove_session(session_name)
    for name in names:
        _docker("volume", "rm", "-f", name)


def delete_from_registry(repo: str, tag: str) -> None:
    """Deletes ``repo:tag``'s manifest from the local registry (the repository name itself stays listed)."""
    name = repo.split("/", 1)[1]
    head = urllib.request.Request(
        f"http://{REGISTRY}/v2/{name}/manifests/{tag}",
        method="HEAD",
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    )
    try:
        digest = urllib.request.urlopen(head, timeout=5).headers["Docker-Content-Digest"]
        delete = urllib.request.Request(f"http://{REGISTRY}/v2/{name}/manifests/{digest}", method="DELETE")
        urllib.request.urlopen(delete, timeout=5)
    except OSError:
        pass


ENGINE_SOCKET = "/var/run/docker.sock"


class EngineProxy:
    """A unix socket that forwards every connection to the engine's socket, so a test can really lose
    the engine: ``drop()`` cuts the open connections (as an engine restart or a network blip does) and
    keeps accepting new ones; ``close()`` makes the engine vanish (the socket file is gone).

    ``url`` is for ``docker.DockerClient(base_url=...)`` or ``DOCKER_HOST``.
    """

    def __init__(self, path: str, target: str = ENGINE_SOCKET) -> None:
        self.path = path
        self.url = f"unix://{path}"
        self._target = target
        self._lock = threading.Lock()
        self._conns: List[socket.socket] = []
        self._server: Optional[socket.socket] = socket.socket(socket.AF_UNIX)
        self._server.bind(path)
        self._server.listen(16)
        threading.Thread(target=self._accept, args=(self._server,), daemon=True, name="engine-proxy").start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self._target)
            with self._lock:
                self._conns += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def drop(self) -> None:
        """Cuts every open connection; new ones still reach the engine."""
        with self._lock:
            conns, self._conns = self._conns, []
        for sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        """No engine any more at ``url``: stops accepting, cuts the connections, removes the socket file."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self.drop()
        if os.path.exists(self.path):
            os.unlink(self.path)


@pytest.fixture(name="engine_proxy")
def engine_proxy_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineProxy]:
    """An :class:`EngineProxy` in a short temporary path (unix socket paths are limited to ~100 bytes)."""
    proxy = EngineProxy(os.path.join(str(tmp_path_factory.mktemp("engine")), "p.sock"))
    yield proxy
    proxy.close()
