"""The slurm backend against a real Slurm cluster (``sudo bash scripts/setup/slurm.sh`` starts one here).

Every test uses the ``slurm_cluster`` fixture: it skips without a cluster and fails under ``CI=true``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path
from typing import Iterator, List

import pytest

from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers.slurm_scheduler import SlurmScheduler
from jupyter_sched.specs import (
    AppDef,
    AppState,
    InvalidAppError,
    InvalidRunConfigException,
    Role,
    UnknownAppException,
    macros,
    parse_app_handle,
    random_id,
    resource,
)
from tests.conftest import SlurmCluster

PY = sys.executable


@pytest.fixture
def srunner(slurm_cluster: SlurmCluster) -> Iterator[Runner]:
    """A runner on a session of its own, so that ``list`` sees only this test's jobs."""
    with get_runner(f"t-{random_id()}") as r:
        yield r


def app_id(handle: str) -> str:
    return parse_app_handle(handle).app_id


def lines(runner: Runner, handle: str, role: str, k: int = 0, **kwargs) -> List[str]:  # type: ignore[no-untyped-def]
    return list(runner.log_lines(handle, role, k, **kwargs))


TRAINER = textwrap.dedent(
    """
    import os, sys, time
    sys.stderr.write(f"warn {sys.argv[2]}\\n"); sys.stderr.flush(); time.sleep(0.3)
    print("args", sys.argv[1:])
    print("env", os.environ["JUPYTER_SCHED_JOB_ID"], os.environ["TORCHX_RANK0_HOST"], os.environ["RUN_TAG"])
    print("cwd", os.getcwd())
    sys.stdout.write("step 1/2\\rstep 2/2\\r\\ndone\\npartial")
    """
)


def test_multi_role_app_succeeds_with_each_replicas_state_and_logs(srunner: Runner, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    app = AppDef(
        "multi",
        [
            Role(
                "trainer",
                "unused",
                entrypoint=PY,
                args=["-c", TRAINER, macros.app_id, macros.replica_id, macros.rank0_env],
                env={"RUN_TAG": f"run-{macros.app_id}-{macros.replica_id}"},
                num_replicas=2,
                resource=resource(cpu=1, memMB=128),
            ),
            Role(
                "reader",
                "unused",
                entrypoint="sh",
                args=["-c", "echo start; sleep 1; printf 'tick\\r'; sleep 0.5; echo; echo end >&2; echo end"],
                resource=resource(cpu=1, memMB=128),
            ),
        ],
    )
    handle = srunner.run(app, "slurm")
    job = app_id(handle)
    assert job.isdigit()

    # Follow the reader from submission (through PENDING) to its end; note when its first line came.
    got, first_at = [], None
    for item in srunner.log_lines(handle, "reader", 0, should_tail=True, streams="stdout"):
        got.append(item)
        if first_at is None:
            first_at = time.time()
    assert got == ["start\n", "tick\r", "\n", "end\n"]

    status = srunner.wait(handle, timeout=120)
    assert status is not None and status.state == AppState.SUCCEEDED, status
    replicas = {(rs.role, r.id): r for rs in status.roles for r in rs.replicas}
    assert sorted(replicas) == [("reader", 0), ("trainer", 0), ("trainer", 1)]
    for r in replicas.values():
        assert r.state == AppState.SUCCEEDED and r.exit_code == 0, r
        assert r.started is not None and r.finished is not None and r.started <= r.finished
    assert len({r.hostname for r in replicas.values()}) == 3  # one node per replica

    rank0_node = replicas[("trainer", 0)].hostname
    out = subprocess.run(["scontrol", "show", "node", rank0_node], capture_output=True, text=True, check=True).stdout
    rank0_addr = out.split("NodeAddr=")[1].split()[0]
    for k in (0, 1):
        assert lines(srunner, handle, "trainer", k, streams="stdout") == [
            f"args ['{job}', '{k}', 'TORCHX_RANK0_HOST']\n",
            f"env {handle} {rank0_addr} run-{job}-{k}\n",
            f"cwd {tmp_path}\n",
            "step 1/2\r",
            "step 2/2\r\n",
            "done\n",
            "partial",
        ]
        assert lines(srunner, handle, "trainer", k, streams="stderr") == [f"warn {k}\n"]
        combined = lines(srunner, handle, "trainer", k)
        assert combined[0] == f"warn {k}\n" and combined[1:] == lines(srunner, handle, "trainer", k, streams="stdout")
        assert lines(srunner, handle, "trainer", k, regex="^(done|partial)") == ["done\n", "partial"]
    assert lines(srunner, handle, "reader", 0, streams="stderr") == ["end\n"]

    # since/until select by the time each chunk was written ("start", then "tick" a second later).
    assert first_at is not None
    mid = datetime.fromtimestamp(first_at + 0.5)
    assert lines(srunner, handle, "reader", 0, streams="stdout", until=mid) == ["start\n"]
    assert lines(srunner, handle, "reader", 0, streams="stdout", since=mid) == ["tick\r", "\n", "end\n"]

    with pytest.raises(ValueError, match="streams"):
        lines(srunner, handle, "reader", 0, streams="both")
    with pytest.raises(ValueError, match="no role 'writer'"):
        lines(srunner, handle, "writer", 0)
    with pytest.raises(ValueError, match="replicas 0..1, not 2"):
        lines(srunner, handle, "trainer", 2)

    desc = srunner.describe(handle)
    assert desc is not None and [r.name for r in desc.roles] == ["trainer", "reader"]
    sched = SlurmScheduler(srunner.session_name)
    fresh = sched.describe(job)  # a new scheduler (as in another process) reads it all from Slurm
    assert fresh is not None and [r.name for r in fresh.roles] == ["trainer", "reader"]
    assert [str(r.state) for rs in fresh.roles_statuses for r in rs.replicas] == ["SUCCEEDED"] * 3
    assert fresh.ui_url and os.path.isdir(fresh.ui_url[len("file://") :])


def test_failing_replica_is_retried_then_the_app_fails(srunner: Runner, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)  # the replicas' shared working directory
    # Replica 1 fails once replica 0 is up (a file says so), in each attempt.
    script = textwrap.dedent(
        """
        attempt=${SLURM_RESTART_COUNT:-0}
        echo "attempt $attempt"
        if [ "$0" = 0 ]; then touch "up-$attempt"; exec sleep 60; fi
        for i in $(seq 600); do [ -e "up-$attempt" ] && break; sleep 0.05; done
        exit 3
        """
    )
    app = AppDef(
        "retry",
        [
            Role(
                "main", "unused", entrypoint="sh", args=["-c", script, macros.replica_id], num_replicas=2, max_retries=1
            )
        ],
    )
    handle = srunner.run(app, "slurm")
    status = srunner.wait(handle, timeout=150)
    assert status is not None and status.state == AppState.FAILED, status
    assert status.num_restarts == 1 and "requeued 1" in status.msg
    r0, r1 = status.roles[0].replicas
    assert r1.state == AppState.FAILED and r1.exit_code == 3
    # kill_on_bad_exit: Slurm stopped the healthy replica when its peer failed
    assert r0.state == AppState.CANCELLED and r0.exit_code is not None and r0.exit_code < 0
    assert r0.num_restarts == r1.num_restarts == 1
    # both attempts are in the logs (a retry appends)
    assert lines(srunner, handle, "main", 1) == ["attempt 0\n", "attempt 1\n"]
    assert lines(srunner, handle, "main", 0) == ["attempt 0\n", "attempt 1\n"]


def test_cancel_returns_at_once_and_the_app_ends_cancelled(srunner: Runner) -> None:
    app = AppDef(
        "sleepy", [Role("main", "unused", entrypoint="sh", args=["-c", "echo ready; exec sleep 120"], num_replicas=2)]
    )
    handle = srunner.run(app, "slurm")
    deadline = time.monotonic() + 60
    while not all(lines(srunner, handle, "main", k) == ["ready\n"] for k in (0, 1)):
        assert time.monotonic() < deadline, srunner.status(handle)
        time.sleep(0.1)
    running = srunner.status(handle)
    assert running is not None and running.state == AppState.RUNNING
    assert [r.state for r in running.roles[0].replicas] == [AppState.RUNNING, AppState.RUNNING]

    srunner.cancel(handle)
    status = srunner.wait(handle, timeout=60)
    assert status is not None and status.state == AppState.CANCELLED, status
    assert [r.state for r in status.roles[0].replicas] == [AppState.CANCELLED, AppState.CANCELLED]
    assert lines(srunner, handle, "main", 1) == ["ready\n"]
    srunner.cancel(handle)  # idempotent
    sched = SlurmScheduler(srunner.session_name)
    sched.cancel(app_id(handle))


def test_list_sees_apps_submitted_by_another_process(slurm_cluster: SlurmCluster) -> None:
    session = f"other-{random_id()}"
    code = textwrap.dedent(
        f"""
        from jupyter_sched.runner import get_runner
        from jupyter_sched.specs import AppDef, Role
        app = AppDef("remote", [Role("main", "unused", entrypoint="sh", args=["-c", "echo from afar"])])
        with get_runner({session!r}) as r:
            print(r.run(app, "slurm"))
        """
    )
    proc = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip().splitlines()[-1]
    with get_runner(session) as runner:
        listed = {a.app_handle: a for a in runner.list("slurm")}
        assert handle in listed and listed[handle].name == "remote"
        status = runner.wait(handle, timeout=120)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert lines(runner, handle, "main") == ["from afar\n"]
        assert [a.state for a in runner.list("slurm") if a.app_handle == handle] == [AppState.SUCCEEDED]
    with get_runner(f"elsewhere-{random_id()}") as runner:
        assert runner.list("slurm") == []


def test_unknown_job_ids(srunner: Runner) -> None:
    sched = SlurmScheduler(srunner.session_name)
    for unknown in ("99999999", "abc", "", "12+1"):
        assert sched.describe(unknown) is None
        assert not sched.exists(unknown)
        sched.cancel(unknown)  # nothing to do, no error
    assert srunner.status("slurm://x/99999999") is None
    with pytest.raises(UnknownAppException):
        srunner.log_lines("slurm://x/99999999", "main")

    # The id of a het job's second component is not an app id.
    app = AppDef("pair", [Role("main", "unused", entrypoint="true", num_replicas=2)])
    handle = srunner.run(app, "slurm")
    job = app_id(handle)
    second = str(int(job) + 1)
    shown = subprocess.run(["scontrol", "-o", "show", "job", second], capture_output=True, text=True).stdout
    assert f"HetJobId={job} " in shown and "HetJobOffset=1" in shown
    assert sched.describe(second) is None
    status = srunner.wait(handle, timeout=120)
    assert status is not None and status.state == AppState.SUCCEEDED


def test_dryrun_renders_and_apps_that_cannot_fit_are_refused(srunner: Runner, slurm_cluster: SlurmCluster) -> None:
    fits = AppDef("fits", [Role("main", "unused", entrypoint="true", num_replicas=slurm_cluster.nodes)])
    info = srunner.dryrun(fits, "slurm", {"time": "5"})
    assert info.request.capacity.startswith(f"fits partition '{slurm_cluster.partition}'")
    assert repr(info).count("#SBATCH hetjob") == slurm_cluster.nodes - 1
    assert not os.path.exists(info.request.app_dir)

    too_many = AppDef("too-many", [Role("main", "unused", entrypoint="true", num_replicas=slurm_cluster.nodes + 1)])
    too_big = AppDef(
        "too-big", [Role("main", "unused", entrypoint="true", resource=resource(cpu=slurm_cluster.cpus + 1))]
    )
    too_fat = AppDef(
        "too-fat", [Role("main", "unused", entrypoint="true", resource=resource(cpu=1, memMB=slurm_cluster.memMB + 1))]
    )
    # the bound is the cluster's size, per role and for the roles together, before any request is built
    huge = AppDef("huge", [Role("main", "unused", entrypoint="true", num_replicas=10**20)])
    two_roles = AppDef(
        "two-roles",
        [Role(r, "unused", entrypoint="true", num_replicas=slurm_cluster.nodes // 2 + 1) for r in ("a", "b")],
    )
    cases = [
        (too_many, {}, "roles[0].num_replicas", f"more than slurm runs ({slurm_cluster.nodes})"),
        (huge, {}, "roles[0].num_replicas", f"asks for {10**20} replicas"),
        (two_roles, {}, "roles", f"the roles together ask for {2 * (slurm_cluster.nodes // 2 + 1)} replicas"),
        (too_big, {}, "roles[0].resource.cpu", f"has {slurm_cluster.cpus}"),
        (too_fat, {}, "roles[0].resource.memMB", f"has {slurm_cluster.memMB} MB"),
        (fits, {"partition": "no-such-partition"}, "cfg.partition", "does not exist"),
    ]
    for app, cfg, field, words in cases:
        for attempt in (srunner.dryrun, srunner.run):
            with pytest.raises(InvalidAppError) as err:
                attempt(app, "slurm", cfg)
            assert err.value.field == field and words in str(err.value), str(err.value)
    names = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%j"], capture_output=True, text=True).stdout.split()
    assert not [n for n in names if n.split(":")[0] in ("too-many", "too-big", "too-fat")]
    assert srunner.list("slurm") == []


@pytest.fixture
def short_partition(slurm_cluster: SlurmCluster) -> Iterator[str]:
    """A partition over the same nodes with a 5-minute MaxTime, made for this test and removed after it."""
    name = f"short{random_id()[:6]}"
    made = subprocess.run(
        ["scontrol", "create", f"PartitionName={name}", "Nodes=ALL", "MaxTime=5", "Default=NO", "State=UP"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode == 0, f"scontrol create partition failed: {made.stderr}"
    try:
        yield name
    finally:
        subprocess.run(["scontrol", "delete", f"PartitionName={name}"], capture_output=True)


def test_a_time_limit_over_the_partitions_maxtime_is_refused(srunner: Runner, short_partition: str) -> None:
    app = AppDef("too-long", [Role("main", "unused", entrypoint="true")])
    assert srunner.dryrun(app, "slurm", {"partition": short_partition, "time": "5"}).request.capacity.startswith("fits")
    for attempt in (srunner.dryrun, srunner.run):
        with pytest.raises(InvalidAppError) as err:
            attempt(app, "slurm", {"partition": short_partition, "time": "0-01:00"})
        message = str(err.value)
        assert err.value.field == "cfg.time" and "(60 min) is more than" in message and "at most 5" in message
    assert srunner.list("slurm") == []


# -- found by using the backend for real ----------------------------------------------------------------------------


def test_a_replica_that_cannot_start_says_why_in_the_status(
    srunner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wrapper itself never ran, so the replica's logs are empty: the reason (from Slurm, in srun.log)
    # used to be nowhere a user looks.
    monkeypatch.chdir(tmp_path)
    app = AppDef("nopy", [Role("main", "unused", entrypoint="true", num_replicas=2)])
    handle = srunner.run(app, "slurm", {"python": "/no/such/python3"})
    status = srunner.wait(handle, timeout=120)
    assert status is not None and status.state == AppState.FAILED, status
    assert "main[0]" in status.msg and "/no/such/python3" in status.msg, status.msg
    assert lines(srunner, handle, "main", 0) == []


def test_a_replica_killed_by_sigkill_reports_the_signal(
    srunner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = "import os; print('up', flush=True); os.kill(os.getpid(), 9)"  # as the OOM killer would
    app = AppDef("oom", [Role("main", "unused", entrypoint=PY, args=["-c", code])])
    handle = srunner.run(app, "slurm")
    status = srunner.wait(handle, timeout=120)
    assert status is not None and status.state == AppState.FAILED, status
    (replica,) = status.roles[0].replicas
    assert replica.exit_code == -9, replica
    assert lines(srunner, handle, "main", 0) == ["up\n"]


def test_the_dry_run_script_runs_when_submitted_by_hand(
    srunner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Follow the script's own instructions: paste it into a file elsewhere, run the hint, submit.
    monkeypatch.chdir(tmp_path)
    app = AppDef(
        "byhand",
        [Role("main", "unused", entrypoint="sh", args=["-c", "echo hi $0", macros.replica_id], num_replicas=2)],
    )
    req = srunner.dryrun(app, "slurm").request
    pasted = tmp_path / "pasted.sbatch"
    pasted.write_text(req.script)
    (hint,) = [line for line in req.script.splitlines() if "THIS_FILE" in line]
    command = hint.lstrip("# ").replace("THIS_FILE", str(pasted))
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + 120
        while True:
            state = subprocess.run(
                ["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], capture_output=True, text=True
            ).stdout
            if state.split() and all(s in ("COMPLETED", "FAILED", "CANCELLED") for s in state.split()):
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
        assert set(state.split()) == {"COMPLETED"}, open(os.path.join(req.app_dir, "batch.out")).read()
        for k in (0, 1):
            with open(os.path.join(req.app_dir, "main", str(k), "stdout.log")) as f:
                assert f.read() == f"hi {k}\n"
    finally:
        subprocess.run(["scancel", job])


def test_bad_run_options_are_refused_naming_the_option(
    srunner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = AppDef("opts", [Role("main", "unused", entrypoint="true")])
    # sbatch itself refuses this one: the error says which run option it came from
    with pytest.raises(Exception) as err:
        srunner.run(app, "slurm", {"sbatch_opts": {"no-such-flag": "1"}})
    assert "sbatch refused" in str(err.value) and "'no-such-flag' in the run option sbatch_opts" in str(err.value)
    # refused before sbatch: a missing cwd (srun would run the replica in /tmp), a bad mail type
    for cfg, key in (({"cwd": str(tmp_path / "gone")}, "cwd"), ({"mail_type": "sometimes"}, "mail_type")):
        with pytest.raises(InvalidRunConfigException) as bad:
            srunner.run(app, "slurm", cfg)
        assert bad.value.cfg_key == key and f"run option {key}=" in str(bad.value)
    assert srunner.list("slurm") == []


def test_a_cancelled_app_does_not_keep_the_reason_it_was_waiting_for(srunner: Runner) -> None:
    app = AppDef("later", [Role("main", "unused", entrypoint="true")])
    handle = srunner.run(app, "slurm", {"sbatch_opts": {"begin": "now+600"}})
    try:
        deadline = time.monotonic() + 60
        while "BeginTime" not in (getattr(srunner.status(handle), "msg", "") or ""):
            assert time.monotonic() < deadline, srunner.status(handle)
            time.sleep(0.2)
    finally:
        srunner.cancel(handle)
    status = srunner.wait(handle, timeout=60)
    assert status is not None and status.state == AppState.CANCELLED
    assert status.msg == "CANCELLED", status.msg


def test_a_progress_frame_reaches_a_follow_while_the_step_runs(srunner: Runner) -> None:
    # printf '\r10%' then a pause: no line end, yet the follow yields "10%" before the sleep ends (the
    # replica wrapper writes each chunk as it is read; the reader yields unterminated text once quiet)
    app = AppDef("frame", [Role("main", "unused", entrypoint="sh", args=["-c", "printf '\\r10%%'; exec sleep 30"])])
    handle = srunner.run(app, "slurm")
    it = iter(srunner.log_lines(handle, "main", 0, should_tail=True))
    assert next(it) == "\r"
    assert next(it) == "10%"
    status = srunner.status(handle)
    assert status is not None and status.state == AppState.RUNNING, status
    srunner.cancel(handle)
    assert list(it) == []
    assert lines(srunner, handle, "main") == ["\r", "10%"]


def test_job_files_are_private_to_their_owner(srunner: Runner) -> None:
    # job.sbatch holds the replicas' env (-e HF_TOKEN=...), the logs hold what jobs print: 0600 in 0700
    role = Role("main", "unused", entrypoint="sh", args=["-c", "echo $HF_TOKEN"], env={"HF_TOKEN": "hf_secret"})
    app = AppDef("private", [role])
    handle = srunner.run(app, "slurm")
    status = srunner.wait(handle, timeout=60)
    assert status is not None and status.state == AppState.SUCCEEDED, status
    sched = SlurmScheduler(srunner.session_name)
    ui_url = sched.describe(app_id(handle)).ui_url  # type: ignore[union-attr]
    assert ui_url and ui_url.startswith("file://")
    app_dir = ui_url[len("file://") :]
    assert "hf_secret" in open(os.path.join(app_dir, "job.sbatch")).read()
    modes = {}
    for root, dirs, files in os.walk(app_dir):
        for name in dirs + files:
            path = os.path.join(root, name)
            modes[os.path.relpath(path, app_dir)] = os.stat(path).st_mode & 0o777
    modes["."] = os.stat(app_dir).st_mode & 0o777
    assert modes["job.sbatch"] == 0o600 and modes["."] == 0o700
    assert modes["main/0/stdout.log"] == 0o600 and modes["main/0"] == 0o700
    assert {p: m for p, m in modes.items() if m & 0o077} == {}  # nothing readable by others
    assert os.stat(os.path.dirname(app_dir)).st_mode & 0o777 == 0o700, "the session's directory, made here"


def test_a_fresh_job_dir_root_is_made_private(srunner: Runner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fresh = os.path.join(str(tmp_path), "shared", "jobs")
    old = os.umask(0o022)
    try:
        handle = srunner.run(AppDef("fresh", [Role("main", "unused", entrypoint="true")]), "slurm", {"job_dir": fresh})
    finally:
        os.umask(old)
    modes = {p: os.stat(p).st_mode & 0o777 for p in (os.path.dirname(fresh), fresh)}  # the app's parents
    assert modes == {os.path.dirname(fresh): 0o700, fresh: 0o700}
    status = srunner.wait(handle, timeout=60)
    assert status is not None and status.state == AppState.SUCCEEDED, status
    index = os.path.join(os.environ["JUPYTER_SCHED_SLURM_DIR"], srunner.session_name)  # the session's job records
    assert os.stat(index).st_mode & 0o777 == 0o700
