"""Function jobs on the real Slurm cluster: the pickled call and the results go through the shared
job directory (under the scheduler's job_dir root), and the replicas run this interpreter."""

from __future__ import annotations

import os

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError


def test_a_closure_returns_its_value_and_two_replicas_their_ranks(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    base = 100

    def on_node(step: int) -> tuple:
        return base + step + int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), os.environ.get("SLURM_JOB_ID", "")

    job = jupyter_sched.submit(on_node, 1, scheduler="slurm", num_replicas=2)
    assert job.job_dir.startswith(slurm_cluster.job_root), "the call goes through the shared job directory"
    (v0, world, slurm_id), (v1, _, _) = job.results(timeout=240)
    assert (v0, v1, world) == (101, 102, 2)
    assert slurm_id, "it ran as a Slurm job"


def test_an_exception_on_a_node_shows_its_remote_traceback(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    def broken() -> None:
        raise ZeroDivisionError("node says no")

    with pytest.raises(FunctionError) as info:
        jupyter_sched.submit(broken, scheduler="slurm").result(timeout=240)
    assert "node says no" in info.value.remote_traceback and "in broken" in info.value.remote_traceback


def test_a_sweep_on_slurm_keeps_to_max_concurrent_and_grid_order(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    sweep = jupyter_sched.sweep(lambda k: k * 3, {"k": [1, 2, 3, 4, 5]}, scheduler="slurm", max_concurrent=2)
    assert sweep.results(timeout=300) == [3, 6, 9, 12, 15]
    spans = []
    for run in sweep.runs:
        reps = [r for role in run.job.fetch_status().roles for r in role.replicas]
        spans.append((min(r.started for r in reps), max(r.finished for r in reps)))
    assert max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans) <= 2, spans


def test_a_fresh_job_dir_holds_only_private_files(slurm_cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The Slurm job_dir root and session directory it creates, the app's directory and the function's
    call and results are all the owner's alone: 0700 directories, 0600 files."""
    from tests.functions.test_submit_local import modes_under

    job_dir = os.path.join(slurm_cluster.job_root, f"fresh-{tmp_path.name}", "jobs")
    old = os.umask(0o022)
    try:
        job = jupyter_sched.submit(lambda secret: secret[::-1], "s3cr3t", scheduler="slurm", cfg={"job_dir": job_dir})
        assert job.result(timeout=240) == "t3rc3s"
    finally:
        os.umask(old)
    assert job.job_dir.startswith(job_dir + os.sep)
    modes = modes_under(job_dir)
    names = {os.path.basename(p) for p in modes}
    assert {"call.pkl", "result-0.pkl", "meta.json", "bootstrap.py", "job.sbatch", "stdout.log"} <= names, names
    wrong = {p: oct(m) for p, m in modes.items() if m != (0o700 if os.path.isdir(p) else 0o600)}
    assert not wrong, wrong
