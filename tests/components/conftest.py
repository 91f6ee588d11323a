from __future__ import annotations

import contextlib
import subprocess
from typing import Callable, ContextManager, Dict, Iterator, List, Tuple

import pytest

from jupyter_sched.runner import Runner
from jupyter_sched.specs import AppStatus

Logs = Dict[Tuple[str, int], str]
RunLocal = Callable[..., Tuple[str, AppStatus, Logs]]


@pytest.fixture
def run_local(runner: Runner, log_dir: str) -> RunLocal:
    """Runs a component on local_cwd for real and returns (handle, final status, {(role, k): log text})."""

    def run(
        component: str, args: List[str], stream: str = "combined"
    ) -> Tuple[str, AppStatus, Logs]:
        handle = runner.run_component(component, args, "local_cwd", cfg={"log_dir": log_dir})
        status = runner.wait(handle)
        assert status is not None
        logs = {
            (role.role, rep.id): "".join(
                runner.log_lines(handle, role.role, rep.id, streams=stream)
            )  # type: ignore[arg-type]
            for role in status.roles
            for rep in role.replicas
        }
        return handle, status, logs

    return run


@contextlib.contextmanager
def _session_runner(image: str, how_to_build: str) -> Iterator[Runner]:
    """A runner on a session of its own, after checking the test image ``image`` exists (a missing image
    skips locally, fails under CI); every container of that session is removed afterwards."""
    from jupyter_sched.runner import get_runner
    from jupyter_sched.specs import random_id
    from tests.conftest import missing_engine

    if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0:
        missing_engine(f"test image {image}", f"missing: run {how_to_build}")
    session = f"test-{random_id()}"
    try:
        with get_runner(session) as runner:
            yield runner
    finally:
        label = f"label=jupyter_sched.session={session}"
        ids = subprocess.run(["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True).stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True)


@pytest.fixture
def docker_session_runner(docker_engine: None) -> Callable[[str, str], ContextManager[Runner]]:
    """``with docker_session_runner(IMAGE, HOW_TO_BUILD) as runner``: see :func:`_session_runner`."""
    return _session_runner
