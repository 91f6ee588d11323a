"""Function jobs on local_docker, for real: containers of jupyter-sched/python:local (which carries
cloudpickle and labels its versions) read the pickled call from the bind-mounted job directory."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError, IncompatibleImageError
from jupyter_sched.functions.calls.images import check_compatible, image_versions, local_versions

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


def test_retry_failed_relaunches_only_the_failed_containers_also_from_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runs fail until JSCHED_RETRY_GATE is in the host's environment, which copy_env copies into each
    container at launch: a retry launches new containers, with the environment of the retrying process."""
    monkeypatch.delenv("JSCHED_RETRY_GATE", raising=False)

    def train(lr: float) -> dict:
        if lr > 1 and os.environ.get("JSCHED_RETRY_GATE") != "open":
            raise RuntimeError("the data bucket is not reachable")
        return {"loss": 1 / lr}

    sweep = jupyter_sched.sweep(train, {"lr": [0.5, 2.0, 4.0]}, scheduler="local_docker", image=IMAGE,
                                cfg={"copy_env": ["JSCHED_RETRY_GATE"]}, max_concurrent=3)  # fmt: skip
    sweep.wait(timeout=300)
    assert [r.state for r in sweep.runs] == ["SUCCEEDED", "FAILED", "FAILED"]
    first = [r.job.handle for r in sweep.runs]
    sweep.retry_failed()  # the gate is still closed: new containers, the same failure
    sweep.wait(timeout=300)
    assert [r.state for r in sweep.runs] == ["SUCCEEDED", "FAILED", "FAILED"]
    assert [r.job.handle == h for r, h in zip(sweep.runs, first)] == [True, False, False]
    assert all(r.job.handle.startswith("local_docker://") for r in sweep.runs)
    code = (
        "import jupyter_sched\n"
        f"s = jupyter_sched.load_sweep({sweep.name!r})\n"
        "s.retry_failed()\n"
        "print([v['loss'] for v in s.results(timeout=300)])\n"
        "print([r.job.handle.split(':')[0] for r in s.runs], [r.attempts for r in s.runs])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "JSCHED_RETRY_GATE": "open"})  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[2.0, 0.5, 0.25]", "['local_docker', 'local_docker', 'local_docker'] [1, 3, 3]"]


def test_rerun_here_raises_a_containers_error_in_this_process() -> None:
    def load(rows: list, column: str) -> float:
        table = {"loss": [r * 2 for r in rows]}
        return sum(table[column])

    err = jupyter_sched.submit(load, [1, 2], "los", scheduler="local_docker", image=IMAGE).exception(timeout=180)
    assert isinstance(err, FunctionError) and err.exc_type == "KeyError" and "in load" in err.remote_traceback
    with pytest.raises(KeyError) as info:
        err.rerun_here()
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_name == "load" and tb.tb_frame.f_code.co_filename == __file__
    assert tb.tb_frame.f_locals["rows"] == [1, 2] and tb.tb_frame.f_locals["column"] == "los"
