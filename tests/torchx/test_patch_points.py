"""Module-level names that code written for TorchX patches to pin a value, and that must be the ones used.

TorchX's own users fix the random part of an app id by patching ``docker_scheduler.make_unique``; the
name has to be looked up where the request is built, or the patch silently does nothing.
"""

from __future__ import annotations

import pytest

import jupyter_sched.schedulers.docker_scheduler as docker_scheduler
from jupyter_sched.specs import AppDef, Resource, Role


def test_docker_app_id_comes_from_the_modules_make_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def fixed(name: str) -> str:
        seen.append(name)
        return f"{name}-pinned7"

    monkeypatch.setattr(docker_scheduler, "make_unique", fixed)
    sched = docker_scheduler.create_scheduler("patch_points")
    app = AppDef("my app", [Role("w", "busybox", entrypoint="true", num_replicas=2, resource=Resource(1, 0, 64))])
    job = sched.submit_dryrun(app, sched.run_opts().resolve({})).request
    assert len(seen) == 1 and seen[0] != "my app"  # the name is made safe before it becomes an id
    assert job.app_id == f"{seen[0]}-pinned7"
    assert all(c.kwargs["name"].startswith(job.app_id + "-") for c in job.containers)
