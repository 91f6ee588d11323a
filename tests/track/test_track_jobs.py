"""Metrics logged with ``jupyter_sched.track`` inside real jobs, read back with ``job.metrics()``: a function
job on local_cwd (also from a fresh process given the handle), a script on Slurm, and a script in a docker
container, whose image does not have jupyter_sched, so it prints the marked stderr lines any program can."""

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
from jupyter_sched.specs import AppDef, AppState, Resource, Role, random_id

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


SHELL_SCRIPT = r"""
for i in 0 1 2; do
  echo "epoch $i"
  r="{\"v\":1,\"w\":\"sh\",\"seq\":$i,\"t\":$(date +%s),\"step\":$i,\"metrics\":{\"loss\":0.$((9 - i))}}"
  echo "@@jupyter_sched:metrics $r" >&2
done
"""


@pytest.mark.usefixtures("docker_engine")
def test_a_container_without_the_package_prints_marked_lines_that_parse() -> None:
    """The test image has no jupyter_sched and no metrics directory is mounted, so the records come as the
    documented stderr lines (here from a shell, as any program may print them); what the container printed
    parses into the records, and the other lines are not records."""
    from jupyter_sched.frontend.job import Job

    with get_runner(f"t-{random_id()}") as runner:
        role = Role("sh", "jupyter-sched/python:local", entrypoint="sh", args=["-c", SHELL_SCRIPT])
        handle = runner.run(AppDef("marked", [role]), "local_docker")
        job = Job(handle, runner)
        status = job.wait(timeout=180)
        assert status is not None and status.state == AppState.SUCCEEDED, list(job.logs())
        assert job.metrics.directory is None, "docker keeps no metrics directory"
        lines = list(runner.log_lines(handle, "sh", 0, streams="stderr"))
        records = [parse_marked_line(line) for line in lines]
        assert [(r.step, r.metrics) for r in records if r is not None] == [
            (0, {"loss": 0.9}), (1, {"loss": 0.8}), (2, {"loss": 0.7})
        ]  # fmt: skip
        out = list(runner.log_lines(handle, "sh", 0, streams="stdout"))
        assert [parse_marked_line(line) for line in out] == [None] * 3 and out[0].rstrip() == "epoch 0"
