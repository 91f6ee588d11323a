"""Workspaces on the docker backend: a local directory built onto the role's image (real builds), pushed
to the local registry with ``image_repo``, and removed with the app."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.docker.workspace import LOCAL_WORKSPACE_REPO, WorkspaceBuildError
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role, random_id

from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    delete_from_registry,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    registry_fixture,
    remove_session,
    session_name_fixture,
)
from .test_scheduler import wait_done

pytestmark = pytest.mark.timeout(120)


def image_exists(image: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode == 0


def run_in_workspace(sched: DockerScheduler, workspace: Path, script: str, cfg=None) -> str:  # type: ignore[no-untyped-def]
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", script])])
    app_id = sched.submit(app, {"quiet": True, **(cfg or {})}, workspace=str(workspace))
    assert app.roles[0].image == BUSYBOX  # the caller's AppDef is not modified
    desc = wait_done(sched, app_id)
    assert desc.state == AppState.SUCCEEDED, desc
    return app_id


def output(sched: DockerScheduler, app_id: str) -> str:
    return "".join(sched.log_iter(app_id, "main"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "build").mkdir()
    (ws / "main.sh").write_text("echo from workspace\n")
    (ws / "secret.txt").write_text("s3cr3t\n")
    (ws / "build" / "out.bin").write_text("x")
    (ws / "data" / "keep.txt").write_text("keep\n")
    (ws / "data" / "drop.txt").write_text("drop\n")
    (ws / ".dockerignore").write_text("# comment\nsecret.txt\nbuild\ndata/*\n!data/keep.txt\n")
    return ws


def test_default_overlay_honours_dockerignore_and_is_cleaned_up(docker_sched: DockerScheduler, workspace: Path) -> None:
    app_id = run_in_workspace(docker_sched, workspace, "sh main.sh; pwd; ls -A; ls -A data")
    assert output(docker_sched, app_id) == "from workspace\n/workspace\ndata\nmain.sh\nkeep.txt\n"
    image = docker_sched.describe(app_id).roles[0].image  # type: ignore[union-attr]
    assert image.startswith(LOCAL_WORKSPACE_REPO + ":")
    labels = json.loads(subprocess.run(["docker", "image", "inspect", "-f", "{{json .Config.Labels}}", image],
                                       capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert labels["jupyter_sched.workspace"] == str(workspace) and labels["jupyter_sched.base-image"] == BUSYBOX
    docker_sched.cleanup(app_id)
    assert not image_exists(image)


def test_custom_dockerfile(docker_sched: DockerScheduler, workspace: Path) -> None:
    (workspace / "Dockerfile.jupyter_sched").write_text(
        "ARG IMAGE\nFROM $IMAGE\nARG WORKSPACE\nENV BUILT_FROM=$WORKSPACE\nCOPY . /opt/app\nWORKDIR /opt/app\n"
    )
    app_id = run_in_workspace(docker_sched, workspace, 'echo "$BUILT_FROM"; pwd; ls -A')
    assert output(docker_sched, app_id) == f"{workspace}\n/opt/app\ndata\nmain.sh\n"
    docker_sched.cleanup(app_id)


def test_push_to_image_repo(docker_sched: DockerScheduler, workspace: Path, registry: str) -> None:
    repo = f"{registry}/jsched-test/workspace"
    (workspace / "unique.txt").write_text(random_id())  # a new image id, so a new tag
    app_id = run_in_workspace(docker_sched, workspace, "cat unique.txt", {"image_repo": repo})
    image = docker_sched.describe(app_id).roles[0].image  # type: ignore[union-attr]
    tag = image.rsplit(":", 1)[1]
    try:
        assert image == f"{repo}:{tag}"
        assert output(docker_sched, app_id) == (workspace / "unique.txt").read_text()
        tags = json.load(urllib.request.urlopen(f"http://{registry}/v2/jsched-test/workspace/tags/list", timeout=5))
        assert tag in tags["tags"]
        docker_sched.cleanup(app_id)
        assert not image_exists(image)
        subprocess.run(["docker", "pull", "-q", image], check=True, capture_output=True)  # it is in the registry
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
        delete_from_registry(repo, tag)


def test_runner_dryrun_shows_the_built_image(docker_engine: None, docker_images: None, workspace: Path) -> None:
    with get_runner(f"test-{random_id()}") as runner:
        app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="sh", args=["main.sh"])])
        info = runner.dryrun(app, "local_docker", cfg={"quiet": True}, workspace=str(workspace))
        image = info.request.containers[0].image
        try:
            assert image.startswith(LOCAL_WORKSPACE_REPO + ":") and image in repr(info)
        finally:
            subprocess.run(["docker", "rmi", image], capture_output=True)


def test_build_errors_are_clear(docker_sched: DockerScheduler, workspace: Path, tmp_path: Path) -> None:
    (workspace / "Dockerfile.jupyter_sched").write_text("ARG IMAGE\nFROM $IMAGE\nRUN exit 7\n")
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="true")])
    with pytest.raises(WorkspaceBuildError, match="returned a non-zero code: 7"):
        docker_sched.submit(app, {"quiet": True}, workspace=str(workspace))
    with pytest.raises(ValueError, match="is not a directory"):
        docker_sched.submit(app, {"quiet": True}, workspace=str(tmp_path / "missing"))


def workspace_images(workspace: Path) -> list:
    out = subprocess.run(["docker", "images", "-q", "--filter", f"label=jupyter_sched.workspace={workspace}"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.split()


def test_a_failed_push_leaves_no_image_behind(docker_sched: DockerScheduler, workspace: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: no registry there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    repo = f"127.0.0.1:{port}/jsched-test/nopush"
    (workspace / "unique.txt").write_text(random_id())
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="true")])
    try:
        with pytest.raises(WorkspaceBuildError, match=f"pushing {repo}:.* failed"):
            docker_sched.submit(app, {"quiet": True, "image_repo": repo}, workspace=str(workspace))
        assert workspace_images(workspace) == []  # neither the built image nor its tag for the dead registry
    finally:
        for image in workspace_images(workspace):
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def test_a_bad_image_repo_is_refused_before_building(docker_sched: DockerScheduler, workspace: Path) -> None:
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="true")])
    try:
        for repo in ("127.0.0.1:5000/Jsched/Upper", "127.0.0.1:5000/a b", "127.0.0.1:5000/x/"):
            with pytest.raises(ValueError, match=r"image_repo=.* is not a valid image repository.*e\.g\."):
                docker_sched.submit(app, {"quiet": True, "image_repo": repo}, workspace=str(workspace))
        assert workspace_images(workspace) == []  # nothing was built
    finally:
        for image in workspace_images(workspace):
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
