"""Fixtures and helpers for the docker backend tests (imported by ``test_docker_*.py``).

A scheduler per test on its own session, and clean-up of every container, network, volume, image and
registry tag the tests create: the engine is shared with the developer.
"""

from __future__ import annotations

import subprocess
import urllib.request
from typing import Iterator, List

import pytest

from jupyter_sched.specs import random_id

BUSYBOX = "jupyter-sched/busybox:local"
PYTHON = "jupyter-sched/python:local"
REGISTRY = "127.0.0.1:5000"

# Fixtures are defined as ``<name>_fixture`` with ``name=<name>``: a test module imports the ``_fixture``
# objects and its test functions take ``<name>`` parameters without shadowing an import.
__all__ = [
    "BUSYBOX", "PYTHON", "REGISTRY", "delete_from_registry", "docker_images_fixture",
    "docker_network_cleanup_fixture", "docker_sched_fixture", "registry_fixture", "remove_session",
    "session_name_fixture", "volumes_fixture",
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
