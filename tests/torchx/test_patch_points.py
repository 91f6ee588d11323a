"""Module-level names that code written for TorchX patches to pin a value, and that must be the ones used.

TorchX's own users fix the random part of an app id by patching ``docker_scheduler.make_unique`` or
``local_scheduler.make_unique``; the name has to be looked up in that module, or the patch silently does
nothing.
"""

from __future__ import annotations

import os

import pytest

import jupyter_sched.schedulers.docker_scheduler as docker_scheduler
from jupyter_sched.specs import AppDef, Resource, Role

from ..schedulers.helpers import wait_until


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


def test_local_app_id_comes_from_the_modules_make_unique(monkeypatch: pytest.MonkeyPatch, log_dir: str) -> None:
    import jupyter_sched.schedulers.local_scheduler as local_scheduler

    monkeypatch.setattr(local_scheduler, "make_unique", lambda name: f"{name}-pinned7")
    sched = local_scheduler.create_cwd_scheduler("patch_points")
    try:
        app = AppDef("my app", [Role("w", "x", entrypoint="sh", args=["-c", "echo $JUPYTER_SCHED_APP_ID"])])
        app_id = sched.submit(app, {"log_dir": log_dir})
        assert app_id.endswith("-pinned7")
        assert os.path.isdir(os.path.join(log_dir, "patch_points", app_id))
        wait_until(lambda: sched.describe(app_id).state.is_terminal)
        assert list(sched.log_iter(app_id, "w", 0)) == [f"{app_id}\n"]
    finally:
        sched.close()
