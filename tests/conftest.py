"""Shared fixtures. Tests run real processes, engines and browsers; nothing here mocks them.

Every test session gets its own ``JUPYTER_SCHED_LOG_DIR`` so tests never touch the user's state dir.
``engine`` fixtures skip when an engine is missing on a developer machine, but FAIL under ``CI=true``,
where the project's setup scripts are expected to have installed and started it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterator

import pytest

from jupyter_sched.runner import Runner, get_runner

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session", autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get("JUPYTER_SCHED_LOG_DIR")
    os.environ["JUPYTER_SCHED_LOG_DIR"] = str(tmp_path_factory.mktemp("jupyter_sched_state"))
    yield
    if old is None:
        os.environ.pop("JUPYTER_SCHED_LOG_DIR", None)
    else:
        os.environ["JUPYTER_SCHED_LOG_DIR"] = old


@pytest.fixture
def log_dir(tmp_path) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "logs"
    path.mkdir()
    return str(path)


@pytest.fixture
def runner() -> Iterator[Runner]:
    with get_runner("test") as r:
        yield r


def missing_engine(what: str, why: str) -> None:
    """Skip locally, fail in CI: CI must have every engine (its setup scripts install them)."""
    message = f"{what} is not available: {why}"
    if IN_CI:
        pytest.fail(message + " (CI=true: the setup scripts should have provided it)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Requires a running Docker engine (``bash scripts/setup/docker.sh`` starts one)."""
    if shutil.which("docker") is None:
        missing_engine("Docker", "no docker client on PATH")
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True)
    if probe.returncode != 0:
        missing_engine("Docker", probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "docker info failed")
