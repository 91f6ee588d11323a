from __future__ import annotations

from typing import Callable, Dict, List, Tuple

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
