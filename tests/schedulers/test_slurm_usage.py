"""Usage on Slurm: the parsers of sstat/sacct output, and on the real cluster (which gathers no
accounting data: ``JobAcctGatherType=jobacct_gather/none``) a refusal that names the setting, not zeros
passed off as measurements."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Iterator

import pytest

from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers.slurm_usage import parse_duration, parse_size, step_id
from jupyter_sched.specs import AppDef, AppState, Role, parse_app_handle, random_id, resource
from tests.conftest import SlurmCluster


@pytest.fixture
def srunner(slurm_cluster: SlurmCluster) -> Iterator[Runner]:
    with get_runner(f"t-{random_id()}") as r:
        yield r


def test_parsers_read_slurm_formats() -> None:
    assert [parse_size(t) for t in ("123456K", "1.50G", "4000M", "4000Mn", "2048", "", "garbage")] == [
        123456 * 1024, int(1.5 * (1 << 30)), 4000 << 20, 4000 << 20, 2048, None, None,
    ]
    assert [parse_duration(t) for t in ("00:03.250", "01:02:03", "2-00:00:01", "", "x")] == [
        3.25, 3723.0, 172801.0, None, None,
    ]
    assert step_id("42", 1, het=True) == "42+1.0" and step_id("42", 0, het=False) == "42.0"


def test_a_cluster_that_gathers_nothing_is_refused_with_the_setting(srunner: Runner) -> None:
    gather = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True).stdout
    assert "jobacct_gather/none" in gather, "this test describes the shared test cluster as set up here"
    app = AppDef("u", [Role("main", "", entrypoint=sys.executable, args=["-c", "import time; time.sleep(30)"],
                            resource=resource(cpu=1, gpu=0, memMB=256))])
    handle = srunner.run(app, "slurm")
    try:
        with pytest.raises(ValueError, match=r"JobAcctGatherType=jobacct_gather/linux"):
            srunner.usage(handle)
        status = srunner.status(handle)
        assert status is not None and all(r.msg == "" for rs in status.roles for r in rs.replicas)
    finally:
        srunner.cancel(handle)
    assert srunner.wait(handle, wait_interval=1, timeout=120).state == AppState.CANCELLED
    assert parse_app_handle(handle).scheduler_backend == "slurm"


def test_a_step_ended_out_of_memory_is_named_with_limit_and_peak(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """This cluster does not enforce --mem, so an OUT_OF_MEMORY step cannot be produced here: a stand-in
    ``sacct`` on PATH prints the rows a cluster that enforces it records (``--parsable2`` format)."""
    from jupyter_sched.schedulers.slurm_usage import oom_text

    sacct = tmp_path / "sacct"
    sacct.write_text(
        "#!/bin/sh\n"
        "echo '77+0|OUT_OF_MEMORY||00:00:01|64M|00:00:02'\n"
        "echo '77+0.batch|OUT_OF_MEMORY|1200K|00:00:00||00:00:02'\n"
        "echo '77+0.0|OUT_OF_MEMORY|65433K|00:00:01.250||00:00:02'\n"
    )
    sacct.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert oom_text("77", 0, het=True) == "killed: out of memory (limit 64 MiB, peak 63.9 MiB)"
