"""Metrics logged with ``jupyter_sched.track`` inside real jobs, read back with ``job.metrics()``: a function
job on local_cwd (also from a fresh process given the handle), a script on Slurm, a script in a docker
container writing into its mounted metrics directory, and a shell in a container printing the marked stderr
lines any program can."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import pytest

import jupyter_sched
from jupyter_sched.logs.metric_lines import parse_marked_line
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, AppState, BindMount, Resource, Role, random_id

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def train(steps: int) -> str:
    from jupyter_sched import track

    track.define_metric("loss", goal="min")
    for i in range(steps):
        track.log({"loss": 1.0 / (i + 1), "train/acc": i / steps})
    track.summary["best_loss"] = 1.0 / steps
    return track.current().job_id or ""


def test_a_function_job_logs_100_steps_of_two_keys_and_job_metrics_has_them() -> None:
    job = jupyter_sched.submit(train, 100)
    assert job.result(timeout=120) == job.handle, "the replica knows its job by the handle"
    frame = job.metrics()
    assert list(frame.columns) == ["step", "t", "key", "value", "role", "replica"]
    assert len(frame) == 200 and set(frame["key"]) == {"loss", "train/acc"}
    loss = frame[frame["key"] == "loss"].sort_values("step")
    assert list(loss["step"]) == list(range(100))
    assert loss["value"].iloc[-1] == pytest.approx(0.01)
    wide = job.metrics(wide=True)
    assert len(wide) == 100 and {"loss", "train/acc"} <= set(wide.columns)
    summary = job.metrics.summary.set_index("key")
    assert summary.loc["loss", "min"] == pytest.approx(0.01) and summary.loc["loss", "min_step"] == 99
    assert summary.loc["loss", "goal"] == "min" and summary.loc["train/acc", "count"] == 100
    assert list(job.metrics.values.values()) == [{"best_loss": pytest.approx(0.01)}]


def test_a_new_process_reads_the_metrics_of_an_ended_job_by_its_handle() -> None:
    job = jupyter_sched.submit(train, 100)
    job.result(timeout=120)
    code = textwrap.dedent(
        f"""
        from jupyter_sched.frontend.job import Job
        from jupyter_sched.runner import get_runner
        job = Job({job.handle!r}, get_runner("default"))
        frame = job.metrics()
        print(len(frame), sorted(set(frame["key"])), float(job.metrics.summary.set_index("key").loc["loss", "last"]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "200 ['loss', 'train/acc'] 0.01"


SCRIPT = """
import math, sys
from jupyter_sched import track
for i in range(20):
    track.log({"loss": 2.0 - i * 0.1, "odd": math.nan if i == 3 else i})
print("done", track.current().role, track.current().replica)
"""


def test_a_script_on_slurm_logs_through_the_shared_job_dir(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    from jupyter_sched.frontend.job import Job

    with get_runner(f"t-{random_id()}") as runner:
        role = Role("trainer", "unused", entrypoint=sys.executable, args=["-c", SCRIPT], num_replicas=2,
                    resource=Resource(cpu=1, gpu=0, memMB=128))  # fmt: skip
        handle = runner.run(AppDef("metrics", [role]), "slurm")
        job = Job(handle, runner)
        status = job.wait(timeout=240)
        assert status is not None and status.state == AppState.SUCCEEDED, list(job.logs())
        directory = job.metrics.directory
        assert directory is not None and directory.startswith(slurm_cluster.job_root)
        frame = job.metrics()
        assert len(frame) == 80 and set(frame["role"]) == {"trainer"} and set(frame["replica"]) == {0, 1}
        odd = frame[(frame["key"] == "odd") & (frame["replica"] == 1)].set_index("step")["value"]
        assert math.isnan(odd[3]) and odd[4] == 4.0
        with open(os.path.join(directory, "trainer.1.jsonl")) as f:
            stored = f.read()
        assert '"odd":"NaN"' in stored, "NaN is kept as the string of strict JSON"
        assert "done trainer 1" in "\n".join(job.logs())


@pytest.mark.usefixtures("docker_engine")
def test_a_container_logs_into_the_mounted_metrics_directory_and_hands_its_files_to_their_reader() -> None:
    """jupyter_sched.track in a container (the test image lacks the package: the source is mounted) writes
    into the app's metrics directory on this machine, bind-mounted; the container runs as root and hands
    its files over to the submitting user (here a made-up one, so the hand-over shows: we run as root)."""
    from jupyter_sched.frontend.job import Job

    src = BindMount(os.path.join(REPO, "jupyter_sched"), "/src/jupyter_sched", read_only=True)
    with get_runner(f"t-{random_id()}") as runner:
        role = Role("trainer", "jupyter-sched/python:local", entrypoint="python3", args=["-c", SCRIPT],
                    env={"PYTHONPATH": "/src"}, mounts=[src])  # fmt: skip
        info = runner.dryrun(AppDef("docker-metrics", [role]), "local_docker")
        info.request.containers[0].kwargs["labels"]["jupyter_sched.metrics-owner"] = "4321:4322"
        handle = runner.schedule(info)
        job = Job(handle, runner)
        status = job.wait(timeout=180)
        assert status is not None and status.state == AppState.SUCCEEDED, list(job.logs())
        directory = job.metrics.directory
        assert directory is not None and os.path.isdir(directory)
        frame = job.metrics()
        assert len(frame) == 40 and set(frame["role"]) == {"trainer"} and set(frame["replica"]) == {0}
        assert job.metrics.summary.set_index("key").loc["loss", "last"] == pytest.approx(0.1)
        for name in ("trainer.0.jsonl", "trainer.0.summary.json"):
            st = os.stat(os.path.join(directory, name))
            assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (4321, 4322, 0o600), name
        logs = "\n".join(job.logs())
        assert "done trainer 0" in logs and "@@jupyter_sched:metrics" not in logs


SHELL_SCRIPT = r"""
for i in 0 1 2; do
  echo "epoch $i"
  r="{\"v\":1,\"w\":\"sh\",\"seq\":$i,\"t\":$(date +%s),\"step\":$i,\"metrics\":{\"loss\":0.$((9 - i))}}"
  echo "@@jupyter_sched:metrics $r" >&2
done
"""


@pytest.mark.usefixtures("docker_engine")
def test_a_container_without_the_package_prints_marked_lines_that_parse() -> None:
    """A program that does not write the files (here a shell) prints the records as the documented stderr
    lines; what the container printed parses into the records, and the other lines are not records. A
    reader of the logs (``job.logs()``, as the panes, ``log`` and the server) does not show them and stores
    their records in the app's metrics directory, where ``job.metrics()`` has them."""
    from jupyter_sched.frontend.job import Job

    with get_runner(f"t-{random_id()}") as runner:
        role = Role("sh", "jupyter-sched/python:local", entrypoint="sh", args=["-c", SHELL_SCRIPT])
        handle = runner.run(AppDef("marked", [role]), "local_docker")
        job = Job(handle, runner)
        status = job.wait(timeout=180)
        assert status is not None and status.state == AppState.SUCCEEDED, list(job.logs())
        lines = list(runner.log_lines(handle, "sh", 0, streams="stderr"))
        records = [parse_marked_line(line) for line in lines]
        assert [(r.step, r.metrics) for r in records if r is not None] == [
            (0, {"loss": 0.9}), (1, {"loss": 0.8}), (2, {"loss": 0.7})
        ]  # fmt: skip
        out = list(runner.log_lines(handle, "sh", 0, streams="stdout"))
        assert [parse_marked_line(line) for line in out] == [None] * 3 and out[0].rstrip() == "epoch 0"
        assert job.metrics().empty, "nothing read the log yet"
        assert [line.split("|", 1)[1].strip() for line in job.logs()] == ["epoch 0", "epoch 1", "epoch 2"]
        frame = job.metrics()
        assert list(zip(frame["step"], frame["value"], strict=True)) == [(0, 0.9), (1, 0.8), (2, 0.7)]
        job.logs()
        assert len(job.metrics()) == 3, "read again, stored once"
