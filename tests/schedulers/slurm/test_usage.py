"""Usage on Slurm, on the real cluster of scripts/setup/slurm.sh (``jobacct_gather/linux`` polling every
second, ``--mem`` enforced by ``OverMemoryKill``): live ``sstat`` samples of a replica holding 200 MB
and spinning a core, its ``sacct`` peak after the end, a replica over its ``--mem`` named out of memory;
plus the parsers, and the refusal (naming the setting) of a cluster that gathers nothing."""

from __future__ import annotations

import os
import re
import sys
import time
from typing import Iterator, List

import pytest

from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers.slurm import usage as slurm_usage
from jupyter_sched.schedulers.slurm.usage import (
    SlurmUsage,
    check_gathering,
    kills_over_memory,
    parse_duration,
    parse_size,
    step_id,
    tres_value,
)
from jupyter_sched.specs import AppDef, AppState, Role, random_id, resource
from jupyter_sched.specs.status.usage import UsageSample
from tests.conftest import SlurmCluster

from ..helpers import wait_until
from ..usage_programs import MB, hog_code

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def srunner(slurm_cluster: SlurmCluster) -> Iterator[Runner]:
    with get_runner(f"t-{random_id()}") as r:
        yield r


def hog_app(mem_mb: int, name: str = "hog") -> AppDef:
    return AppDef(
        name,
        [
            Role(
                "main",
                "",
                entrypoint=sys.executable,
                args=["-c", hog_code(200)],
                resource=resource(cpu=1, gpu=0, memMB=mem_mb),
            )
        ],
    )


def test_parsers_read_slurm_formats() -> None:
    assert [parse_size(t) for t in ("123456K", "1.50G", "4000M", "4000Mn", "2048", "", "garbage")] == [
        123456 * 1024,
        int(1.5 * (1 << 30)),
        4000 << 20,
        4000 << 20,
        2048,
        None,
        None,
    ]
    assert [parse_duration(t) for t in ("00:03.250", "01:02:03", "2-00:00:01", "", "x")] == [
        3.25,
        3723.0,
        172801.0,
        None,
        None,
    ]
    assert step_id("42", 1, het=True) == "42+1.0" and step_id("42", 0, het=False) == "42.0"
    tres = "cpu=00:00:03,energy=0,fs/disk=1686327,mem=218200K,pages=0,vmem=221388K"
    assert (tres_value(tres, "mem"), tres_value(tres, "cpu"), tres_value(tres, "gpu")) == ("218200K", "00:00:03", "")


def test_a_replica_using_200mb_and_a_core_is_measured_live_and_after_the_end(srunner: Runner) -> None:
    assert kills_over_memory(max_age=0), "this test describes the cluster of scripts/setup/slurm.sh"
    handle = srunner.run(hog_app(1024), "slurm")
    seen: List[UsageSample] = []

    def big_and_busy() -> bool:  # sstat: Slurm polls the step's processes once a second
        time.sleep(0.5)
        seen.extend(srunner.usage(handle))
        return (
            any(s.rss_bytes >= 180 * MB for s in seen)
            and any(s.cpu_seconds > 0 and s.cpu_percent > 0 for s in seen)
            and seen[-1].mem_limit_bytes is not None
        )  # the limit: once the database has the job

    try:
        wait_until(big_and_busy, 240, "an sstat sample with >= 180 MB, some CPU and the limit")
        live = seen[-1]
        assert (live.role, live.replica, live.running, live.mem_limit_bytes) == ("main", 0, True, 1024 * MB)
        assert live.peak_rss_bytes >= live.rss_bytes >= 180 * MB
    finally:
        srunner.cancel(handle)
    assert srunner.wait(handle, wait_interval=1, timeout=120).state == AppState.CANCELLED

    def final() -> bool:  # sacct: the step's MaxRSS/TotalCPU once the database has it
        time.sleep(0.5)
        return [s.running for s in srunner.usage(handle)] == [False]

    wait_until(final, 60, "the step's final sacct record")
    [end] = srunner.usage(handle)
    assert end.peak_rss_bytes >= 180 * MB and end.cpu_seconds > 0 and end.mem_limit_bytes == 1024 * MB
    assert end.wall_seconds > 0 and end.rss_bytes == 0

    def described() -> bool:  # describe reads the same accounting row: its totals, as the other backends
        status = srunner.status(handle)
        return status is not None and status.roles[0].replicas[0].usage is not None

    wait_until(described, 60, "describe's totals from the step's accounting row")
    status = srunner.status(handle)
    assert status is not None
    totals = status.roles[0].replicas[0].usage
    assert totals is not None and totals.peak_rss_bytes == end.peak_rss_bytes
    assert totals.cpu_seconds == end.cpu_seconds and totals.mem_limit_bytes == 1024 * MB
    assert re.search(r"main\[0\]:CANCELLED .*\(peak \d+(\.\d)? MiB of 1 GiB, cpu \d+\.\d\d s, wall", status.format())


def test_a_replica_over_its_mem_is_killed_and_named_out_of_memory(srunner: Runner) -> None:
    handle = srunner.run(hog_app(64, "oom"), "slurm")
    status = srunner.wait(handle, wait_interval=1, timeout=240)
    assert status is not None and status.state == AppState.FAILED, status
    [rep] = status.roles[0].replicas
    assert rep.state == AppState.FAILED and rep.exit_code == -9, rep
    match = re.fullmatch(r"killed: out of memory \(limit 64 MiB, peak (\d+(?:\.\d)?) MiB\)", rep.msg)
    assert match and float(match.group(1)) > 64, rep.msg  # OverMemoryKill acts on a polled RSS above it
    assert rep.structured_error_msg == rep.msg and f"main[0]: {rep.msg}" in status.msg, status
    [end] = srunner.usage(handle)
    assert not end.running and end.mem_limit_bytes == 64 * MB and end.peak_rss_bytes > 64 * MB


def test_a_replica_within_its_mem_is_not_called_out_of_memory(srunner: Runner) -> None:
    """A replica killed by SIGKILL below its memory is not an out-of-memory kill."""
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    app = AppDef(
        "kill",
        [Role("main", "", entrypoint=sys.executable, args=["-c", code], resource=resource(cpu=1, gpu=0, memMB=256))],
    )
    handle = srunner.run(app, "slurm")
    status = srunner.wait(handle, wait_interval=1, timeout=240)
    assert status is not None and status.state == AppState.FAILED
    [rep] = status.roles[0].replicas
    assert rep.exit_code == -9 and "out of memory" not in rep.msg, rep


def _stand_in(tmp_path, monkeypatch, name: str, text: str) -> None:  # type: ignore[no-untyped-def]
    tool = tmp_path / name
    tool.write_text("#!/bin/sh\ncat <<'EOF'\n" + text + "EOF\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")


def test_a_cluster_that_gathers_nothing_is_refused_with_the_setting(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Our cluster gathers usage, so one that does not is a stand-in ``scontrol`` printing such a config."""
    _stand_in(
        tmp_path,
        monkeypatch,
        "scontrol",
        "JobAcctGatherFrequency  = 30\nJobAcctGatherType       = jobacct_gather/none\n"
        "JobAcctGatherParams     = (null)\n",
    )
    with pytest.raises(ValueError, match=r"jobacct_gather/none.*JobAcctGatherType=jobacct_gather/linux"):
        check_gathering(max_age=0)
    with pytest.raises(ValueError, match=r"jobacct_gather/none"):
        SlurmUsage().samples("77", [("main", 0, 0, True, None, None)], het=False)
    assert not kills_over_memory(max_age=0)
    slurm_usage._settings.clear()  # noqa: SLF001 - the next test asks the real cluster again


def test_a_step_ended_out_of_memory_by_cgroup_is_named_with_limit_and_peak(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """OUT_OF_MEMORY is what ``task/cgroup`` enforcement records; this cluster has no memory cgroup, so a
    stand-in ``sacct`` prints such rows (``--parsable2``, our fields)."""
    _stand_in(
        tmp_path,
        monkeypatch,
        "sacct",
        "77+0|OUT_OF_MEMORY||00:00:01|64M|00:00:02|0:125|billing=1,cpu=1,mem=64M,node=1\n"
        "77+0.batch|OUT_OF_MEMORY|1200K|00:00:00||00:00:02|0:125|cpu=1,mem=64M,node=1\n"
        "77+0.0|OUT_OF_MEMORY|65433K|00:00:01.250||00:00:02|0:125|cpu=1,mem=64M,node=1\n",
    )
    assert SlurmUsage().oom_text("77", 0, het=True) == "killed: out of memory (limit 64 MiB, peak 63.9 MiB)"
