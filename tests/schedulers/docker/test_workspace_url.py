"""Workspaces given as fsspec URLs on the docker backend: a ``memory://`` directory built into the image and
run (real builds and containers), and the URLs that cannot be read refused before anything starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import fsspec
import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.common.workspace_source import LocalWorkspace, open_workspace
from jupyter_sched.schedulers.docker.workspace import LOCAL_WORKSPACE_REPO
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role, random_id

from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    PYTHON,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    session_name_fixture,
)
from .test_scheduler import wait_done
from .test_workspace import image_exists, output

pytestmark = pytest.mark.timeout(120)


def images_labelled(workspace: str) -> list:
    out = subprocess.run(["docker", "images", "-q", "--filter", f"label=jupyter_sched.workspace={workspace}"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.split()


def session_containers(session_name: str) -> list:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=jupyter_sched.session={session_name}"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return out.stdout.split()


@pytest.fixture
def memory_ws() -> Iterator[str]:
    """A ``memory://`` workspace: a script, a data directory and a ``.dockerignore`` that drops some of it."""
    url = f"memory://jsched-ws-{random_id()}/"
    files = {
        "main.py": "import os\nprint('hello from', os.getcwd(), sorted(os.listdir('.')), sorted(os.listdir('data')))\n",
        "secret.txt": "s3cr3t\n",
        "data/keep.txt": "keep\n",
        "data/drop.txt": "drop\n",
        "build/out.bin": "x",
        ".dockerignore": "# comment\nsecret.txt\nbuild\ndata/*\n!data/keep.txt\n",
    }
    for name, text in files.items():
        with fsspec.open(url + name, "wt") as f:
            f.write(text)
    yield url
    fs = fsspec.filesystem("memory")
    fs.rm(url[len("memory://") :], recursive=True)
    for image in images_labelled(url):
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def test_a_memory_workspace_is_built_into_the_image_and_runs(docker_sched: DockerScheduler, memory_ws: str) -> None:
    app = AppDef("ws", [Role("main", PYTHON, entrypoint="python3", args=["main.py"])])
    app_id = docker_sched.submit(app, {"quiet": True}, workspace=memory_ws)
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.SUCCEEDED, desc
    assert output(docker_sched, app_id) == "hello from /workspace ['data', 'main.py'] ['keep.txt']\n"
    image = desc.roles[0].image
    assert image.startswith(LOCAL_WORKSPACE_REPO + ":")
    labels = json.loads(subprocess.run(["docker", "image", "inspect", "-f", "{{json .Config.Labels}}", image],
                                       capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert labels["jupyter_sched.workspace"] == memory_ws and labels["jupyter_sched.base-image"] == PYTHON
    docker_sched.cleanup(app_id)
    assert not image_exists(image)


def test_a_custom_dockerfile_in_a_memory_workspace_gets_the_url(docker_sched: DockerScheduler, memory_ws: str) -> None:
    with fsspec.open(memory_ws + "Dockerfile.jupyter_sched", "wt") as f:
        f.write("ARG IMAGE\nFROM $IMAGE\nARG WORKSPACE\nENV BUILT_FROM=$WORKSPACE\nCOPY . /opt/app\nWORKDIR /opt/app\n")
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", 'echo "$BUILT_FROM"; ls -A'])])
    app_id = docker_sched.submit(app, {"quiet": True}, workspace=memory_ws)
    assert wait_done(docker_sched, app_id).state == AppState.SUCCEEDED
    assert output(docker_sched, app_id) == f"{memory_ws}\ndata\nmain.py\n"
    docker_sched.cleanup(app_id)


def test_a_missing_memory_path_fails_before_anything_starts(docker_sched: DockerScheduler, session_name: str) -> None:
    url = f"memory://jsched-missing-{random_id()}/"
    app = AppDef("ws", [Role("main", BUSYBOX, entrypoint="true")])
    with pytest.raises(ValueError, match=r"workspace='memory://jsched-missing-.*' does not exist .*create it"):
        docker_sched.submit(app, {"quiet": True}, workspace=url)
    assert session_containers(session_name) == [] and images_labelled(url) == []


def test_the_dry_run_shows_the_workspace_url(docker_images: None, memory_ws: str) -> None:
    with get_runner(f"test-{random_id()}") as runner:
        app = AppDef("ws", [Role("main", PYTHON, entrypoint="python3", args=["main.py"])])
        info = runner.dryrun(app, "local_docker", cfg={"quiet": True}, workspace=memory_ws)
        image = info.request.containers[0].image
        assert f"workspace: {image} was built from {memory_ws}" in repr(info)
        view = info.view()
        assert view is not None and ("workspace", f"{image} was built from workspace {memory_ws}") in view.notes
        assert view.warnings == []  # a workspace image holds its scripts: no warning about them
        assert app.roles[0].image == PYTHON and not app.roles[0].metadata  # the caller's AppDef is untouched


def test_a_file_url_is_a_local_directory(tmp_path: Path) -> None:
    source = open_workspace(f"file://{tmp_path}")
    assert isinstance(source, LocalWorkspace) and source.url == str(tmp_path)
    with pytest.raises(ValueError, match="is not a directory on this machine"):
        open_workspace(f"file://{tmp_path}/missing")


def test_urls_that_cannot_be_read_say_the_fix() -> None:
    with pytest.raises(ValueError, match=r"workspace='s3://jsched-b/dir': the s3 filesystem is not available.*s3fs"):
        open_workspace("s3://jsched-b/dir")
    with pytest.raises(ValueError, match=r"workspace='nosuchfs://x/': fsspec cannot open this URL"):
        open_workspace("nosuchfs://x/")
    url = f"memory://jsched-file-{random_id()}"
    with fsspec.open(url, "wt") as f:
        f.write("x")
    with pytest.raises(ValueError, match=r"is a file, not a directory"):
        open_workspace(url)


def test_without_fsspec_a_url_asks_for_it() -> None:
    # a real interpreter in which fsspec cannot be imported: a plain path still works, a URL names the fix
    code = (
        "import sys; sys.modules['fsspec'] = None\n"
        "from jupyter_sched.schedulers.common.workspace_source import open_workspace\n"
        "open_workspace('.')\n"
        "try:\n    open_workspace('memory://x/')\nexcept ValueError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "workspace='memory://x/' is a URL, and reading one needs fsspec: pip install fsspec" in out
