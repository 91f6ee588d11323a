"""Function jobs on local_docker, for real: containers of jupyter-sched/python:local (which carries
cloudpickle and labels its versions) read the pickled call from the bind-mounted job directory."""

from __future__ import annotations

import os
import subprocess
import uuid
from typing import Iterator

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError, IncompatibleImageError
from jupyter_sched.functions.images import check_compatible, image_versions, local_versions

IMAGE = "jupyter-sched/python:local"
pytestmark = pytest.mark.usefixtures("docker_engine")


def test_the_test_image_is_labelled_with_versions_this_kernel_can_use() -> None:
    versions = image_versions(IMAGE)
    assert versions is not None and versions[1] != "-", "scripts/setup/images.sh adds cloudpickle and labels it"
    check_compatible(IMAGE, versions)


def test_a_closure_returns_its_value_and_two_replicas_their_ranks() -> None:
    offset = 40

    def where(extra: int) -> tuple:
        import platform

        return int(os.environ["RANK"]) + offset + extra, os.environ["MASTER_ADDR"], platform.python_version()

    job = jupyter_sched.submit(where, 2, scheduler="local_docker", image=IMAGE, num_replicas=2)
    (r0, host0, py0), (r1, host1, _) = job.results(timeout=180)
    assert (r0, r1) == (42, 43)
    assert host0 == host1 and host0.endswith("-0"), "MASTER_ADDR is rank 0's container"
    assert py0 == image_versions(IMAGE)[0], "it ran in the image, not on the host"


def test_an_exception_in_a_container_shows_its_remote_traceback() -> None:
    def broken() -> None:
        raise RuntimeError("disk full in the container")

    with pytest.raises(FunctionError) as info:
        jupyter_sched.submit(broken, scheduler="local_docker", image=IMAGE).result(timeout=180)
    assert "disk full in the container" in info.value.remote_traceback
    assert "in broken" in info.value.remote_traceback and info.value.replica.endswith("/0")


@pytest.fixture
def built() -> Iterator:
    """Builds small images over the test image for one test; removes them (and only them) afterwards."""
    tags = []

    def build(dockerfile: str) -> str:
        tag = f"jupyter-sched/fn-test-{uuid.uuid4().hex[:8]}:local"
        subprocess.run(["docker", "build", "-q", "-t", tag, "-"], input=dockerfile.encode(), check=True,
                       capture_output=True, env={**os.environ, "DOCKER_BUILDKIT": "0"})  # fmt: skip
        tags.append(tag)
        return tag

    yield build
    for tag in tags:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def test_a_python_minor_mismatch_is_refused_before_launch_naming_both_versions(built) -> None:  # type: ignore[no-untyped-def]
    here_py, _ = local_versions()
    major, minor = here_py.split(".")[:2]
    other = f"{major}.{int(minor) + 1}.0"
    tag = built(f"FROM {IMAGE}\nLABEL jupyter-sched.python={other}\n")
    with pytest.raises(IncompatibleImageError) as info:
        jupyter_sched.submit(lambda: 1, scheduler="local_docker", image=tag)
    message = str(info.value)
    assert other in message and here_py in message and "Fix:" in message


def test_an_image_without_labels_or_cloudpickle_is_probed_and_refused(built) -> None:  # type: ignore[no-untyped-def]
    tag = built(
        f"FROM {IMAGE}\nLABEL jupyter-sched.python=\"\" jupyter-sched.cloudpickle=\"\"\n"
        "RUN rm -rf /usr/lib/python3/dist-packages/cloudpickle\n"
    )
    with pytest.raises(IncompatibleImageError, match="has no cloudpickle") as info:
        jupyter_sched.submit(lambda: 1, scheduler="local_docker", image=tag)
    assert local_versions()[1] in str(info.value)
    probes = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "label=jupyter-sched.probe"], capture_output=True, text=True
    )
    assert probes.stdout.strip() == "", "the probe container was removed"


def test_a_cloudpickle_major_mismatch_names_both_versions() -> None:
    with pytest.raises(IncompatibleImageError) as info:
        check_compatible("img", (local_versions()[0], "2.2.1"), local=(local_versions()[0], "3.1.2"))
    assert "2.2.1" in str(info.value) and "3.1.2" in str(info.value) and "cloudpickle==3.*" in str(info.value)


def test_a_sweep_in_containers_keeps_to_max_concurrent_and_grid_order() -> None:
    sweep = jupyter_sched.sweep(lambda k: k + 100, {"k": [0, 1, 2, 3]}, scheduler="local_docker", image=IMAGE,
                                max_concurrent=2)  # fmt: skip
    assert sweep.results(timeout=300) == [100, 101, 102, 103]
    spans = []
    for run in sweep.runs:
        reps = [r for role in run.job.fetch_status().roles for r in role.replicas]
        spans.append((min(r.started for r in reps), max(r.finished for r in reps)))
    assert max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans) <= 2, spans


def test_no_image_is_refused_before_launch_saying_which_to_use() -> None:
    with pytest.raises(ValueError, match="image: local_docker runs each replica in a container image"):
        jupyter_sched.submit(lambda: 1, scheduler="local_docker")
