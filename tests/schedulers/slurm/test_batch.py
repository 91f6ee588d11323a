"""The slurm backend without a cluster: batch-script rendering, the capacity check, the replica wrapper and
the parsers of Slurm's output. (The tests against a real cluster are in test_cluster.py.)"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import threading

import pytest

from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm.batch import build_request, check_fit, shell_word
from jupyter_sched.schedulers.slurm.cli import Node, Partition, time_minutes
from jupyter_sched.schedulers.slurm.logs import SlurmLogIterator
from jupyter_sched.schedulers.slurm_scheduler import SlurmScheduler, create_scheduler
from jupyter_sched.specs import AppDef, AppState, InvalidAppError, InvalidRunConfigException, Role, macros, resource
from tests.schedulers.helpers import wait_until

WRAPPER = os.path.join(os.path.dirname(slurm_cli.__file__), "slurm_replica.py")


def two_role_app() -> AppDef:
    return AppDef(
        "train",
        [
            Role(
                "trainer",
                "unused",
                entrypoint="python",
                args=["-c", "print(1)", "--id", f"job-{macros.app_id}", macros.replica_id, macros.rank0_env],
                env={"LR": "0.1,0.2 x", "RUN": f"{macros.app_id}/{macros.replica_id}"},
                num_replicas=2,
                max_retries=2,
                resource=resource(cpu=2, gpu=1, memMB=1024),
            ),
            Role("reader", "unused", entrypoint="sh", args=["-c", "echo $0"], resource=resource(cpu=1, memMB=512)),
        ],
    )


def render(app: AppDef, **cfg):  # type: ignore[no-untyped-def]
    sched = SlurmScheduler("sess", job_root="/jobs/root")
    resolved = sched.run_opts().resolve(cfg)
    return build_request(app, resolved, "sess", "/jobs/root/sess/train-x", "/srv/job-cwd")


def components(script: str) -> list:
    """The #SBATCH options of each het-job component, joined by spaces."""
    opts = [line[len("#SBATCH ") :] for line in script.splitlines() if line.startswith("#SBATCH ")]
    return " ".join(opts).split(" hetjob ")


def test_script_maps_each_replica_to_a_het_component_with_its_resources() -> None:
    req = render(two_role_app(), partition="batch", time="10", qos="hi", account="acct", constraint="intel")
    script = req.script
    comps = components(script)
    assert len(comps) == 3
    for line in comps[:2]:
        assert "--cpus-per-task=2 --mem=1024 --gres=gpu:1" in line
    assert "--cpus-per-task=1 --mem=512" in comps[2] and "gres" not in comps[2]
    for i, line in enumerate(comps):
        for opt in (
            "--nodes=1",
            "--ntasks=1",
            "--partition=batch",
            "--time=10",
            "--qos=hi",
            "--account=acct",
            "--constraint=intel",
        ):
            assert opt in line, (i, opt, line)
    assert "--job-name=train:trainer:0" in comps[0] and "--job-name=train:trainer:1" in comps[1]
    assert "--job-name=train:reader:0" in comps[2]
    # whole-job options only once, on the first component
    for opt in ("--chdir=/jobs/root/sess/train-x", "--output=/jobs/root/sess/train-x/batch.out", "--requeue"):
        assert opt in comps[0] and opt not in comps[1]
    srun = script[script.index("srun ") : script.index("rc=$?")]
    assert srun.count("--het-group=") == 3 and srun.count(" : ") == 2
    assert srun.count("--chdir=/srv/job-cwd") == 3 and srun.count("--kill-on-bad-exit=1") == 3
    assert 'scontrol requeue "$SLURM_JOB_ID"' in script and "-lt 2 ]" in script


def test_macros_expand_at_run_time_and_values_are_quoted() -> None:
    req = render(two_role_app())
    t0, t1, reader = req.replicas
    assert (t0.role, t0.replica_id, t0.offset) == ("trainer", 0, 0)
    assert (t1.role, t1.replica_id, t1.offset) == ("trainer", 1, 1)
    assert (reader.role, reader.replica_id, reader.offset) == ("reader", 0, 2)
    cmd = " ".join(t1.command)
    assert 'job-"$SLURM_JOB_ID"' in cmd.replace("'job-'", "job-")
    assert cmd.endswith(" 1 TORCHX_RANK0_HOST")
    assert "-e 'LR=0.1,0.2 x'" in cmd
    assert '-e RUN="$SLURM_JOB_ID"/1' in cmd
    assert t1.to_json()["env"]["RUN"] == "${SLURM_JOB_ID}/1"
    assert "export TORCHX_RANK0_HOST=" in req.script
    # The words really expand as intended under bash.
    word = shell_word("a'b \x00app_id\x00 $HOME")
    out = subprocess.run(
        ["bash", "-c", f"printf %s {word}"], env={"SLURM_JOB_ID": "42"}, capture_output=True, text=True
    )
    assert out.stdout == "a'b 42 $HOME"


def test_rendered_script_is_valid_bash() -> None:
    script = render(two_role_app()).script
    proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_single_replica_is_a_plain_job_without_retries() -> None:
    app = AppDef("one", [Role("main", "unused", entrypoint="true")])
    req = render(
        app,
        mail_user="me@x",
        mail_type="END,FAIL",
        comment="hello world",
        sbatch_opts={"reservation": "r1", "exclusive": ""},
    )
    script = req.script
    assert "hetjob" not in script and "--het-group" not in script
    (line,) = components(script)
    assert "--no-requeue" in line and "--mail-user=me@x" in line and "--mail-type=END,FAIL" in line
    assert "--comment='hello world'" in line and "--reservation=r1" in line and "--exclusive" in line
    assert "--cpus-per-task" not in line and "--mem" not in line  # no resource: the partition's defaults
    assert "scontrol requeue" not in script


def test_request_to_json_and_repr_show_the_script() -> None:
    req = render(two_role_app())
    data = json.loads(json.dumps(req.to_json()))
    assert data["script"] == req.script
    assert [r["role"] for r in data["replicas"]] == ["trainer", "trainer", "reader"]
    assert data["replicas"][2]["logs"]["stderr"] == "/jobs/root/sess/train-x/reader/0/stderr.log"
    assert data["submit"] == "sbatch --parsable /jobs/root/sess/train-x/job.sbatch"
    text = repr(req)
    assert "#SBATCH hetjob" in text and "sbatch --parsable" in text and "capacity: not checked" in text


def test_dryrun_leaves_the_appdef_alone_and_bad_options_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = two_role_app()
    app.roles[0].resource = resource(cpu=1, memMB=100)  # fits the test cluster too, when there is one
    before = repr(app)
    sched = create_scheduler("sess", job_root=str(tmp_path), log_dir="ignored")
    info = sched.submit_dryrun(app, {"time": "1:00:00", "job_dir": str(tmp_path / "jobs")})
    assert repr(app) == before
    assert info.request.app_dir.startswith(str(tmp_path / "jobs") + "/train-")
    assert not os.path.exists(info.request.app_dir)  # a dry run writes nothing
    assert "#SBATCH" in repr(info)
    with pytest.raises(InvalidRunConfigException, match="time"):
        sched.submit_dryrun(app, {"time": "one hour"})
    with pytest.raises(InvalidRunConfigException, match="partitoin.*Did you mean 'partition'"):
        sched.submit_dryrun(app, {"partitoin": "x"})


# -- capacity ------------------------------------------------------------------------------------------------------


def cluster(nodes: int = 4, cpus: int = 2, mem: int = 4000, gpus: int = 0, features=frozenset()) -> dict:  # type: ignore[no-untyped-def]
    part = Partition("debug", True, [Node(f"n{i}", cpus, mem, gpus, frozenset(features)) for i in range(nodes)])
    return {"debug": part}


def app_of(*roles: tuple) -> AppDef:  # (name, replicas, cpu, mem, gpu)
    return AppDef(
        "a",
        [
            Role(n, "x", entrypoint="true", num_replicas=r, resource=resource(cpu=c, memMB=m, gpu=g))
            for n, r, c, m, g in roles
        ],
    )


def test_fit_accepts_what_the_partition_holds() -> None:
    summary = check_fit(app_of(("t", 3, 2, 4000, 0), ("r", 1, 1, 10, 0)), cluster(), None, None)
    assert "fits partition 'debug'" in summary and "4 replica(s) on 4 node(s)" in summary


@pytest.mark.parametrize(
    "app, field, words",
    [
        (app_of(("t", 5, 1, 10, 0)), "roles", ["5 replicas", "4 node(s)", "at most 4"]),
        (app_of(("t", 1, 8, 10, 0)), "roles[0].resource.cpu", ["8 CPUs", "has 2"]),
        (app_of(("t", 1, 1, 9000, 0)), "roles[0].resource.memMB", ["9000 MB", "4000 MB"]),
        (app_of(("t", 1, 1, 10, 1)), "roles[0].resource.gpu", ["no node", "GPUs"]),
    ],
)
def test_fit_refuses_what_no_node_can_hold(app: AppDef, field: str, words: list) -> None:
    with pytest.raises(InvalidAppError) as err:
        check_fit(app, cluster(), None, None)
    assert err.value.field == field
    for word in words:
        assert word in str(err.value)


def test_fit_uses_distinct_nodes_of_the_right_size() -> None:
    part = Partition("p", True, [Node("big", 8, 8000, 0), Node("small1", 1, 1000, 0), Node("small2", 1, 1000, 0)])
    # two big replicas need two big nodes: only one exists, though three nodes do
    with pytest.raises(InvalidAppError, match="at most 1 can be placed"):
        check_fit(app_of(("t", 2, 4, 10, 0)), {"p": part}, None, None)
    assert "fits" in check_fit(app_of(("t", 1, 4, 10, 0), ("r", 2, 1, 10, 0)), {"p": part}, "p", None)


def test_fit_checks_partition_and_simple_constraints() -> None:
    with pytest.raises(InvalidAppError, match="partition 'gpu' does not exist.*debug"):
        check_fit(app_of(("t", 1, 1, 10, 0)), cluster(), "gpu", None)
    with pytest.raises(InvalidAppError, match="features 'ib'"):
        check_fit(app_of(("t", 1, 1, 10, 0)), cluster(features={"intel"}), None, "ib")
    assert "fits" in check_fit(app_of(("t", 1, 1, 10, 0)), cluster(features={"intel"}), None, "ib|intel")
    assert "fits" in check_fit(app_of(("t", 1, 1, 10, 1)), cluster(gpus=2), None, None)


@pytest.mark.parametrize(
    "text, minutes",
    [("30", 30), ("5:30", 6), ("2:00:00", 120), ("1-0", 1440), ("1-2:30", 1590), ("1-00:00:01", 1441),
     ("infinite", None), ("UNLIMITED", None), ("", None)],
)  # fmt: skip
def test_slurm_time_limits_in_minutes(text: str, minutes: object) -> None:
    assert time_minutes(text) == minutes


def test_fit_refuses_a_time_limit_over_the_partitions_maxtime() -> None:
    part = Partition("short", True, [Node("n0", 2, 4000, 0)], max_minutes=60)
    with pytest.raises(InvalidAppError) as err:
        check_fit(app_of(("t", 1, 1, 10, 0)), {"short": part}, None, None, "2:00:00")
    assert err.value.field == "cfg.time"
    assert "120 min" in str(err.value) and "at most 60" in str(err.value)
    assert "fits" in check_fit(app_of(("t", 1, 1, 10, 0)), {"short": part}, None, None, "60")
    assert "fits" in check_fit(app_of(("t", 1, 1, 10, 0)), {"short": part}, None, None, None)
    unlimited = Partition("long", True, [Node("n0", 2, 4000, 0)])
    assert "fits" in check_fit(app_of(("t", 1, 1, 10, 0)), {"long": unlimited}, None, None, "30-0")


# -- the replica wrapper -------------------------------------------------------------------------------------------


def run_wrapper(rep_dir: str, *command: str, env_opts=()) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, WRAPPER, rep_dir, *env_opts, "--", *command], capture_output=True, text=True, timeout=60
    )


def test_wrapper_writes_three_logs_with_time_indexes_and_appends(tmp_path) -> None:  # type: ignore[no-untyped-def]
    d = str(tmp_path / "r")
    code = (
        "import os,sys; sys.stdout.write(os.environ['X']+'\\n'); sys.stdout.flush();"
        " sys.stderr.write('e\\n'); sys.exit(3)"
    )
    proc = run_wrapper(d, sys.executable, "-c", code, env_opts=["-e", "X=a=b, c"])
    assert proc.returncode == 3, proc.stderr
    assert open(f"{d}/stdout.log").read() == "a=b, c\n"
    assert open(f"{d}/stderr.log").read() == "e\n"
    assert sorted(open(f"{d}/combined.log").read().splitlines()) == ["a=b, c", "e"]
    rec = struct.Struct("<Qd")
    data = open(f"{d}/combined.idx", "rb").read()
    ends = [end for end, _ in rec.iter_unpack(data)]
    assert ends[-1] == os.path.getsize(f"{d}/combined.log")
    run_wrapper(d, "sh", "-c", "echo again")
    assert open(f"{d}/stdout.log").read() == "a=b, c\nagain\n"  # a retry appends


def test_wrapper_reports_a_signal_death_and_a_missing_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proc = run_wrapper(str(tmp_path / "a"), "sh", "-c", "kill -TERM $$")
    assert proc.returncode == -signal.SIGTERM
    proc = run_wrapper(str(tmp_path / "b"), "no-such-command-xyz")
    assert proc.returncode == 127
    assert "cannot start 'no-such-command-xyz'" in open(tmp_path / "b" / "stderr.log").read()


def test_log_iterator_follows_a_replica_until_it_finishes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    d = str(tmp_path / "r")
    code = "import sys,time; sys.stdout.write('a\\n50%\\r'); sys.stdout.flush(); time.sleep(0.5); sys.stdout.write('b')"
    proc = subprocess.Popen([sys.executable, WRAPPER, d, "--", sys.executable, "-c", code])
    try:
        wait_until(lambda: os.path.exists(f"{d}/stdout.log"), what="the wrapper's log file")
        items = list(SlurmLogIterator(f"{d}/stdout.log", lambda: proc.poll() is not None, should_tail=True))
    finally:
        proc.wait()
    assert items == ["a\n", "50%\r", "b"]
    assert list(SlurmLogIterator(f"{d}/stdout.log", lambda: True, regex="^b")) == ["b"]


def test_log_iterator_close_ends_a_follow(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "stdout.log"
    path.write_text("line\n")
    it = SlurmLogIterator(str(path), lambda: False, should_tail=True)
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(it))
    reader.start()
    wait_until(lambda: bool(got), what="the first line")
    it.close()
    reader.join(timeout=10)
    assert not reader.is_alive() and got == ["line\n"]


# -- parsers -------------------------------------------------------------------------------------------------------


def test_parsers_of_slurm_output() -> None:
    rec = slurm_cli.parse_scontrol_line(
        "JobId=7 HetJobId=6 HetJobOffset=1 JobName=a:b:0 Reason=Some reason here WorkDir=/a b"
    )
    assert rec["HetJobOffset"] == "1" and rec["Reason"] == "Some reason here" and rec["WorkDir"] == "/a b"
    assert slurm_cli.parse_exit_code("3:0") == 3 and slurm_cli.parse_exit_code("0:15") == -15
    assert slurm_cli.parse_exit_code("") is None
    assert slurm_cli.split_job_id("12+1.0") == slurm_cli.JobIdParts("12", 1, "0")
    assert slurm_cli.split_job_id("12.batch") == slurm_cli.JobIdParts("12", None, "batch")
    assert slurm_cli.parse_gpus("gpu:2") == 2 and slurm_cli.parse_gpus("gpu:a100:4(S:0-1),gpu:v100:1") == 5
    assert slurm_cli.parse_gpus("(null)") == 0
    assert slurm_cli.map_state("CANCELLED by 0") is AppState.CANCELLED
    assert slurm_cli.map_state("TIMEOUT") is AppState.FAILED and slurm_cli.map_state("REQUEUED") is AppState.PENDING
    assert slurm_cli.map_state("NEW_STATE_X") is AppState.UNKNOWN
    assert slurm_cli.parse_time("Unknown") is None and slurm_cli.parse_time("2024-01-02T03:04:05") is not None


# -- found by using the backend for real ----------------------------------------------------------------------------


def test_wrapper_reports_a_sigkill_death_as_such(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # SIGKILL (e.g. the kernel's OOM killer) cannot get a handler: the wrapper used to crash re-raising it and
    # exit 1, so Slurm recorded a plain failure instead of the signal.
    proc = run_wrapper(str(tmp_path / "k"), "sh", "-c", "echo before; kill -KILL $$")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "Traceback" not in proc.stderr
    assert open(tmp_path / "k" / "stdout.log").read() == "before\n"


def test_wrapper_refuses_to_run_outside_the_asked_working_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # srun --chdir silently falls back to /tmp when the directory is missing on the node.
    d = tmp_path / "r"
    missing = tmp_path / "no" / "such dir"
    proc = run_wrapper(str(d), "pwd", env_opts=["-C", str(missing)])
    assert proc.returncode == 1, proc.stderr
    err = open(d / "stderr.log").read()
    assert str(missing) in err and "cwd" in err, err
    assert open(d / "combined.log").read() == err and open(d / "stdout.log").read() == ""
    proc = run_wrapper(str(tmp_path / "ok"), "pwd", env_opts=["-C", str(tmp_path)])
    assert proc.returncode == 0 and open(tmp_path / "ok" / "stdout.log").read() == f"{tmp_path}\n"


def test_replicas_chdir_themselves_into_cwd() -> None:
    req = render(two_role_app())
    for rep in req.replicas:
        cmd = " ".join(rep.command)
        assert " -C /srv/job-cwd " in cmd and cmd.index(" -C ") < cmd.index(" -- "), cmd


def test_dryrun_refuses_a_cwd_that_does_not_exist(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sched = create_scheduler("sess", job_root=str(tmp_path))
    app = AppDef("one", [Role("main", "unused", entrypoint="true")])
    with pytest.raises(InvalidRunConfigException) as err:
        sched.submit_dryrun(app, {"cwd": str(tmp_path / "missing")})
    assert "cwd" in str(err.value) and str(tmp_path / "missing") in str(err.value)
    with pytest.raises(InvalidRunConfigException, match="cwd.*not a directory"):
        (tmp_path / "file").write_text("")
        sched.submit_dryrun(app, {"cwd": str(tmp_path / "file")})


@pytest.mark.parametrize("opt", ["nodes", "--ntasks", "chdir", "output", "error", "job-name", "array", "wrap", "J"])
def test_sbatch_opts_may_not_override_the_backends_layout(opt: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # --nodes=2 per component used to slip past the capacity check (and could leave an app pending forever);
    # --output/--chdir would break the logs and the manifest.
    sched = create_scheduler("sess", job_root=str(tmp_path))
    app = AppDef("one", [Role("main", "unused", entrypoint="true")])
    with pytest.raises(InvalidRunConfigException) as err:
        sched.submit_dryrun(app, {"sbatch_opts": {opt: "2"}})
    text = str(err.value)
    assert "sbatch_opts" in text and repr(opt.lstrip("-")) in text, text


def test_sbatch_opts_for_which_a_run_option_exists_name_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sched = create_scheduler("sess", job_root=str(tmp_path))
    app = AppDef("one", [Role("main", "unused", entrypoint="true")])
    with pytest.raises(InvalidRunConfigException, match="sbatch_opts.*'partition'.*run option partition="):
        sched.submit_dryrun(app, {"sbatch_opts": {"partition": "debug"}})


def test_mail_type_is_checked_at_dry_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sched = create_scheduler("sess", job_root=str(tmp_path))
    app = AppDef("one", [Role("main", "unused", entrypoint="true")])
    with pytest.raises(InvalidRunConfigException, match="mail_type='bogus'.*END"):
        sched.submit_dryrun(app, {"mail_type": "bogus"})
    info = sched.submit_dryrun(app, {"mail_type": "end,fail,TIME_LIMIT_80"})
    assert "--mail-type=end,fail,TIME_LIMIT_80" in info.request.script


def test_dryrun_script_is_readable() -> None:
    req = render(two_role_app(), partition="batch", time="10")
    lines = req.script.splitlines()
    # one option per #SBATCH line (they used to be one line of 300+ characters per component)
    sbatch = [line for line in lines if line.startswith("#SBATCH ")]
    assert all(len(line.split()) == 2 for line in sbatch), sbatch
    assert sbatch.count("#SBATCH --partition=batch") == 3 and sbatch.count("#SBATCH hetjob") == 2
    # each env var and the command on a line of their own
    assert "\n    -e 'LR=0.1,0.2 x' \\\n" in req.script
    assert "\n    -- sh -c 'echo $0'\n" in req.script
    code = [line for line in lines if not line.startswith("#")]
    assert max(len(line) for line in code) < 200, max(code, key=len)
    # the hint for submitting it by hand copies the wrapper the script runs (a cluster test follows it)
    hint = [line for line in lines if "sbatch --parsable THIS_FILE" in line]
    assert len(hint) == 1 and f"cp {WRAPPER} /jobs/root/sess/train-x/" in hint[0], hint


def test_a_step_still_running_in_the_database_is_not_final() -> None:
    """sacct can list a step as RUNNING for a moment after the controller ended the job; describe must
    wait for it (else the final status misses that replica's exit code)."""
    from jupyter_sched.schedulers.slurm.job import ended_steps as _ended_steps

    steps = {0: {"State": "COMPLETED"}, 1: {"State": "RUNNING"}, 2: {"State": "FAILED"}, 3: {"State": "CANCELLED by 0"}}
    assert _ended_steps(steps) == {0, 2, 3}


def test_a_node_failure_placeholder_is_neither_an_end_nor_an_exit_code() -> None:
    """What this cluster's controller and database said 0.3 s after node2 of a two-replica job went down
    (``test_slurm_cluster`` takes a node down for real): the job COMPLETING, the healthy replica's step
    already NODE_FAIL ``0:0``. That replica is still being stopped; its real end (CANCELLED ``0:15``)
    comes next. Once the job has ended, a step still marked NODE_FAIL has no known exit code."""
    from jupyter_sched.schedulers.slurm.job import SlurmComponent, SlurmJob, ended_steps

    def comp(offset: int, state: str) -> SlurmComponent:
        return SlurmComponent(offset, state, "NodeDown", f"node{offset + 1}", 1000.0, None, 0, "/w", f"nd:w:{offset}")

    step = {"State": "NODE_FAIL", "ExitCode": "0:0", "Start": "2026-11-25T17:16:30", "End": "2026-11-25T17:16:33"}
    stopping = SlurmJob("80", [comp(0, "COMPLETING"), comp(1, "NODE_FAIL")], {0: step}, 0)
    assert stopping.state == AppState.RUNNING
    assert stopping.replica_state(stopping.components[0], stopping.state)[:2] == (AppState.RUNNING, None)
    assert ended_steps(stopping.steps) == set()  # describe waits for the real record of the step
    ended = SlurmJob("80", [comp(0, "NODE_FAIL"), comp(1, "NODE_FAIL")], {0: step}, 0)
    assert ended.replica_state(ended.components[0], ended.state)[:2] == (AppState.FAILED, None)
    real = {**step, "State": "CANCELLED", "ExitCode": "0:15"}
    assert ended_steps({0: real}) == {0}
    assert SlurmJob("80", ended.components, {0: real}, 0).replica_state(ended.components[0], ended.state)[:2] == (
        AppState.CANCELLED, -15,
    )  # fmt: skip
