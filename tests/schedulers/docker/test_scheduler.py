"""The docker backend on a real Docker engine: submit, describe, list, cancel, retries, mounts, rollback.

Every test runs on its own session; the ``docker_sched`` fixture force-removes the session's containers
afterwards, and the tests that make volumes, images or registry tags remove them too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.api import DescribeAppResponse
from jupyter_sched.schedulers.docker_scheduler import (
    RANK0_ENV,
    DockerNotAvailableError,
    DockerScheduler,
    DockerSubmitError,
)
from jupyter_sched.specs import (
    AppDef,
    AppState,
    BindMount,
    Resource,
    Role,
    UnknownAppException,
    macros,
    parse_mounts,
    random_id,
    resource,
)
from tests.conftest import IN_CI

from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    PYTHON,
    delete_from_registry,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    registry_fixture,
    remove_session,
    session_name_fixture,
    volumes_fixture,
)

pytestmark = pytest.mark.timeout(120)


def sh(script: str, name: str = "app", num_replicas: int = 1, image: str = BUSYBOX, **kwargs: Any) -> AppDef:
    return AppDef(
        name, [Role("main", image, entrypoint="sh", args=["-c", script], num_replicas=num_replicas, **kwargs)]
    )


def wait_done(sched: DockerScheduler, app_id: str, timeout: float = 60) -> DescribeAppResponse:
    deadline = time.monotonic() + timeout
    while True:
        desc = sched.describe(app_id)
        assert desc is not None
        if desc.state.is_terminal:
            return desc
        if time.monotonic() > deadline:
            raise AssertionError(f"{app_id} still {desc.state} after {timeout}s")
        sched.wait_for_change(app_id, 1.0)


def logs(sched: DockerScheduler, app_id: str, role: str = "main", k: int = 0, **kwargs: Any) -> str:
    return "".join(sched.log_iter(app_id, role, k, **kwargs))


def session_containers(session: str) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=jupyter_sched.session={session}"], capture_output=True, text=True
    )
    return out.stdout.split()


def replica_states(desc: DescribeAppResponse) -> list[tuple[str, int, AppState, Optional[int]]]:
    return [(r.role, r.id, r.state, r.exit_code) for rs in desc.roles_statuses for r in rs.replicas]


# -- basics ---------------------------------------------------------------------------------------------------


def test_submit_describe_list_and_logs_from_any_process(docker_sched: DockerScheduler, session_name: str) -> None:
    app_id = docker_sched.submit(
        sh('echo "hello from $JUPYTER_SCHED_ROLE_NAME/$JUPYTER_SCHED_REPLICA_ID"; exit 0', num_replicas=2), {}
    )
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.SUCCEEDED and desc.num_restarts == 0
    assert replica_states(desc) == [("main", 0, AppState.SUCCEEDED, 0), ("main", 1, AppState.SUCCEEDED, 0)]
    rep = desc.roles_statuses[0].replicas[1]
    assert rep.hostname == f"{app_id}-main-1"
    assert rep.started is not None and rep.finished is not None and rep.finished >= rep.started
    assert desc.roles[0].name == "main" and desc.roles[0].image == BUSYBOX and desc.roles[0].num_replicas == 2

    other = DockerScheduler(session_name)  # a fresh scheduler knows nothing but what the engine says
    try:
        assert other.describe(app_id).state == AppState.SUCCEEDED  # type: ignore[union-attr]
        assert [(a.app_id, a.state, a.name) for a in other.list()] == [(app_id, AppState.SUCCEEDED, "app")]
        assert logs(other, app_id, k=1) == "hello from main/1\n"
    finally:
        other.close()
    assert all(a.app_id != app_id for a in DockerScheduler("some-other-session").list())


def test_unknown_app(docker_sched: DockerScheduler) -> None:
    assert docker_sched.describe("nope-bcdfghjklmnpq") is None  # TorchX said SUCCEEDED
    assert not docker_sched.exists("nope-bcdfghjklmnpq")
    docker_sched.cancel("nope-bcdfghjklmnpq")  # a no-op
    with pytest.raises(UnknownAppException):
        docker_sched.log_iter("nope-bcdfghjklmnpq", "main")
    assert docker_sched.list() == []
    assert docker_sched.cleanup("nope-bcdfghjklmnpq") == 0


def test_list_shows_each_app_once(docker_sched: DockerScheduler) -> None:
    mixed = docker_sched.submit(
        sh("case $JUPYTER_SCHED_REPLICA_ID in 0) exit 0;; 1) exit 3;; *) sleep 30;; esac", num_replicas=3),
        {"cancel_grace": 0},
    )
    done = docker_sched.submit(sh("true", name="other"), {})
    wait_done(docker_sched, done)
    deadline = time.monotonic() + 20
    while [r.state for rs in docker_sched.describe(mixed).roles_statuses for r in rs.replicas][:2] != [  # type: ignore[union-attr]
        AppState.SUCCEEDED,
        AppState.FAILED,
    ]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    listed = docker_sched.list()
    assert [(a.app_id, a.state) for a in listed] == sorted([(mixed, AppState.RUNNING), (done, AppState.SUCCEEDED)])
    assert {a.name for a in listed} == {"app", "other"}


def test_runner_handles_and_wait(docker_engine: None, docker_images: None, docker_network_cleanup: None) -> None:
    session = f"test-{random_id()}"
    try:
        with get_runner(session) as runner:
            handle = runner.run(sh("sleep 1; echo done"), "local_docker", cfg={"env": {"A": "1"}})
            assert handle.startswith(f"local_docker://{session}/app-")
            status = runner.wait(handle, wait_interval=5)  # how promptly: benchmarks/bench_docker.py
            assert status is not None and status.state == AppState.SUCCEEDED
            assert status.roles[0].replicas[0].finished is not None
            assert list(runner.log_lines(handle, "main")) == ["done\n"]
            assert [a.app_handle for a in runner.list("local_docker")] == [handle]
            desc = runner.describe(handle)
            assert desc is not None and desc.roles[0].entrypoint == "sh"
    finally:
        remove_session(session)


def test_no_engine_says_how_to_start_one(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    sched = DockerScheduler("x")
    sched.submit_dryrun(sh("true"), {})  # a dry run needs no engine
    with pytest.raises(DockerNotAvailableError) as err:
        sched.list()
    text = str(err.value)
    assert "no-engine.sock" in text and "docker info" in text and "systemctl start docker" in text
    assert "scripts/setup/docker.sh" in text
    from jupyter_sched.schedulers.docker_scheduler import has_docker

    assert has_docker() is False


# -- replicas, networking, env, mounts, resources ------------------------------------------------------------------


def test_replicas_reach_rank0_by_name(docker_sched: DockerScheduler) -> None:
    rank0_host = f"$${{{macros.rank0_env}}}"  # -> ${TORCHX_RANK0_HOST}, expanded by the shell
    script = (
        'if [ "$JUPYTER_SCHED_REPLICA_ID" = 0 ]; then nc -l -p 9000; '
        "else for i in $(seq 50); do "
        f"echo hi from $JUPYTER_SCHED_REPLICA_ID | nc {rank0_host} 9000 && exit 0; sleep 0.1; done; exit 1; fi"
    )
    app_id = docker_sched.submit(sh(script, num_replicas=2), {})
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.SUCCEEDED, desc
    assert logs(docker_sched, app_id, k=0) == "hi from 1\n"
    env = docker_sched.submit(sh(f"echo {rank0_host}; hostname", num_replicas=2), {})
    wait_done(docker_sched, env)
    assert logs(docker_sched, env, k=1) == f"{env}-main-0\n{env}-main-1\n"


def test_env_precedence_inside_the_container(docker_sched: DockerScheduler, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSCHED_TEST_A", "copy")
    monkeypatch.setenv("JSCHED_TEST_B", "copy")
    monkeypatch.setenv("JSCHED_TEST_C", "copy")
    app = sh(
        "env | grep -E '^(JSCHED_TEST_|TORCHX_RANK0)' | sort", env={"JSCHED_TEST_C": "role", RANK0_ENV: "role"}
    )
    cfg = {"copy_env": ["JSCHED_TEST_*"], "env": {"JSCHED_TEST_B": "cfg", "JSCHED_TEST_C": "cfg"}}
    app_id = docker_sched.submit(app, cfg)
    wait_done(docker_sched, app_id)
    assert logs(docker_sched, app_id) == (
        f"JSCHED_TEST_A=copy\nJSCHED_TEST_B=cfg\nJSCHED_TEST_C=role\n{RANK0_ENV}={app_id}-main-0\n"
    )


def test_the_container_gets_our_variables_beside_torchx_environment(docker_sched: DockerScheduler) -> None:
    # the request's environment is TorchX's; PYTHONUNBUFFERED and JUPYTER_SCHED_* are added at create
    script = "env | grep -E '^(PYTHONUNBUFFERED|JUPYTER_SCHED_|TORCHX_)' | sort"
    info = docker_sched.submit_dryrun(sh(script), {})
    assert set(info.request.containers[0].kwargs["environment"]) == {RANK0_ENV}
    app_id = docker_sched.schedule(info)
    assert wait_done(docker_sched, app_id).state == AppState.SUCCEEDED
    assert logs(docker_sched, app_id) == (
        f"JUPYTER_SCHED_APP_ID={app_id}\nJUPYTER_SCHED_IMAGE={BUSYBOX}\n"
        f"JUPYTER_SCHED_METRICS_DIR=/jupyter_sched/metrics\nJUPYTER_SCHED_METRICS_OWNER={os.getuid()}:{os.getgid()}\n"
        "JUPYTER_SCHED_REPLICA_ID=0\n"
        f"JUPYTER_SCHED_ROLE_NAME=main\nPYTHONUNBUFFERED=1\n{RANK0_ENV}={app_id}-main-0\n"
    )
    # a role's own PYTHONUNBUFFERED wins over our default
    app_id = docker_sched.submit(sh("echo $PYTHONUNBUFFERED", env={"PYTHONUNBUFFERED": "0"}), {})
    wait_done(docker_sched, app_id)
    assert logs(docker_sched, app_id) == "0\n"


def test_bind_volume_and_device_mounts(docker_sched: DockerScheduler, tmp_path, volumes: list) -> None:  # type: ignore[no-untyped-def]
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    rw.chmod(0o777)
    (ro / "in.txt").write_text("from host\n")
    vol = f"jsched-test-{random_id()}"
    volumes.append(vol)
    mounts = parse_mounts(
        [f"type=bind,src={ro},dst=/in,readonly", f"type=bind,src={rw},dst=/out", f"type=volume,src={vol},dst=/vol",
         "type=device,src=/dev/null,dst=/dev/mynull,perm=rw"]
    )  # fmt: skip
    script = (
        "cat /in/in.txt; (echo x > /in/new) 2>/dev/null && echo ro-writable || echo ro-refused; "
        "echo written > /out/out.txt; echo kept > /vol/v.txt; echo y > /dev/mynull && echo device-ok"
    )
    app_id = docker_sched.submit(sh(script, mounts=mounts), {})
    assert wait_done(docker_sched, app_id).state == AppState.SUCCEEDED
    assert logs(docker_sched, app_id) == "from host\nro-refused\ndevice-ok\n"
    assert (rw / "out.txt").read_text() == "written\n"
    again = docker_sched.submit(
        sh("cat /vol/v.txt", mounts=parse_mounts([f"type=volume,src={vol},dst=/vol,readonly"])), {}
    )
    wait_done(docker_sched, again)
    assert logs(docker_sched, again) == "kept\n"


def test_missing_bind_source_fails_before_anything_starts(
    docker_sched: DockerScheduler, session_name: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    app = AppDef(
        "m",
        [
            Role("ok", BUSYBOX, entrypoint="true"),
            Role("bad", BUSYBOX, entrypoint="true", mounts=parse_mounts([f"type=bind,src={tmp_path}/nope,dst=/x"])),
        ],
    )
    with pytest.raises(DockerSubmitError, match=r"replica bad\[0\].*bind mount source .*/nope.*does not exist"):
        docker_sched.submit(app, {})
    assert session_containers(session_name) == []


def test_resources_are_enforced(docker_sched: DockerScheduler) -> None:
    script = (
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; "
        "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d' ' -f1 /sys/fs/cgroup/cpu.max; "
        "df -k /dev/shm | tail -1 | awk '{print $2}'"
    )
    app_id = docker_sched.submit(sh(script, resource=resource(cpu=1, gpu=0, memMB=64)), {})
    wait_done(docker_sched, app_id)
    mem, quota, shm_kb = logs(docker_sched, app_id).split()
    assert int(mem) == 64 * 1024 * 1024
    assert int(quota) == 100000  # 1 CPU per 100 ms period
    assert int(shm_kb) == 64 * 1024


def test_gpu_request_on_a_host_without_gpus_is_rolled_back(docker_sched: DockerScheduler, session_name: str) -> None:
    info = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"], capture_output=True, text=True).stdout
    if "nvidia" in info:  # a GPU host: the failure this test needs cannot happen there
        assert not IN_CI, "CI's engine (scripts/setup/docker.sh) has no nvidia runtime; this one does"
        pytest.skip("this engine has the nvidia runtime")
    app = AppDef(
        "g",
        [
            Role("cpu", BUSYBOX, entrypoint="sleep", args=["30"]),
            Role("gpu", BUSYBOX, entrypoint="true", resource=resource(cpu=1, gpu=1, memMB=64)),
        ],
    )
    with pytest.raises(DockerSubmitError, match=r"replica gpu\[0\].*(device driver|gpu)") as err:
        docker_sched.submit(app, {})
    assert "removed" in str(err.value)
    assert session_containers(session_name) == []


# -- retries -----------------------------------------------------------------------------------------------------


def test_max_retries_restart_the_failed_replica(docker_sched: DockerScheduler) -> None:
    app = sh('echo "try"; [ "$JUPYTER_SCHED_REPLICA_ID" = 1 ] && exit 0; exit 3', num_replicas=2, max_retries=2)
    app_id = docker_sched.submit(app, {})
    followed = list(docker_sched.log_iter(app_id, "main", 0, should_tail=True))  # follows across restarts
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.FAILED
    r0, r1 = desc.roles_statuses[0].replicas
    assert (r0.state, r0.exit_code, r0.num_restarts) == (AppState.FAILED, 3, 2)
    assert (r1.state, r1.exit_code, r1.num_restarts) == (AppState.SUCCEEDED, 0, 0)
    assert desc.num_restarts == 2
    assert "main[0] exited with code 3" in desc.msg
    assert followed == ["try\n"] * 3
    assert logs(docker_sched, app_id) == "try\n" * 3
    assert desc.roles[0].max_retries == 2


# -- cancel ------------------------------------------------------------------------------------------------------


def test_cancel_replicas_that_ignore_sigterm(docker_sched: DockerScheduler, session_name: str) -> None:
    app = sh('trap "" TERM; echo up; sleep 100', num_replicas=3)
    app_id = docker_sched.submit(app, {"cancel_grace": 1})
    assert list(docker_sched.log_iter(app_id, "main", 2, should_tail=False)) in ([], ["up\n"])
    docker_sched.cancel(app_id)
    desc = docker_sched.describe(app_id)
    # cancel returned while the replicas, which ignore SIGTERM, are still running: it did not block
    assert desc is not None and desc.state == AppState.RUNNING
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.CANCELLED and desc.msg.startswith("cancelled at")
    assert all(state == AppState.CANCELLED and code == 137 for _, _, state, code in replica_states(desc))
    # exit 137: SIGTERM was ignored and the grace period ended in SIGKILL (bench_docker.py times it)
    other = DockerScheduler(session_name)  # any process sees the cancel
    try:
        assert other.describe(app_id).state == AppState.CANCELLED  # type: ignore[union-attr]
        assert [(a.app_id, a.state) for a in other.list()] == [(app_id, AppState.CANCELLED)]
        other.cancel(app_id)  # idempotent
    finally:
        other.close()
    assert docker_sched.describe(app_id).state == AppState.CANCELLED  # type: ignore[union-attr]


def test_list_shows_only_this_users_apps_of_the_session(docker_sched: DockerScheduler, session_name: str) -> None:
    """A Docker engine is shared by its users, and ``default`` is everyone's session name: another user's app
    (submitted by a process whose login name differs) is not in this user's ``list``, though its handle
    still describes it."""
    import os

    mine = docker_sched.submit(sh("true", name="mine"), {})
    code = (
        "from jupyter_sched.schedulers.docker_scheduler import DockerScheduler as D;"
        f" from jupyter_sched.specs import AppDef, Role; print(D({session_name!r}).submit(AppDef('theirs',"
        f" [Role('main', {BUSYBOX!r}, entrypoint='true')]), {{}}))"
    )
    env = {**os.environ, "USER": "someone-else", "LOGNAME": "someone-else"}
    theirs = subprocess.run(
        [sys.executable, "-c", code], check=True, timeout=60, env=env, capture_output=True, text=True
    ).stdout.strip()
    wait_done(docker_sched, mine)
    assert [a.app_id for a in docker_sched.list()] == [mine]
    assert wait_done(docker_sched, theirs).state == AppState.SUCCEEDED


def test_cancel_from_a_process_that_exits_at_once(docker_sched: DockerScheduler, session_name: str) -> None:
    app_id = docker_sched.submit(sh('trap "" TERM; sleep 100', num_replicas=3), {"cancel_grace": 1})
    code = (
        "from jupyter_sched.schedulers.docker_scheduler import DockerScheduler as D;"
        f" D({session_name!r}).cancel({app_id!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    desc = wait_done(docker_sched, app_id, timeout=10)
    assert [s for _, _, s, _ in replica_states(desc)] == [AppState.CANCELLED] * 3


def test_cancel_keeps_what_already_finished(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(
        sh('[ "$JUPYTER_SCHED_REPLICA_ID" = 0 ] && exit 0; sleep 100', num_replicas=2), {"cancel_grace": 0}
    )
    deadline = time.monotonic() + 20
    while docker_sched.describe(app_id).roles_statuses[0].replicas[0].state != AppState.SUCCEEDED:  # type: ignore[union-attr]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    docker_sched.cancel(app_id)
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.CANCELLED
    assert [s for _, _, s, _ in replica_states(desc)] == [AppState.SUCCEEDED, AppState.CANCELLED]


def test_cancel_of_a_finished_app_changes_nothing(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(sh("exit 4"), {})
    assert wait_done(docker_sched, app_id).state == AppState.FAILED
    docker_sched.cancel(app_id)
    assert docker_sched.describe(app_id).state == AppState.FAILED  # type: ignore[union-attr]
    assert len(docker_sched._rows(app_id)) == 1  # no cancel record


def test_cancel_sees_a_graceful_exit(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(
        sh("trap 'echo bye; exit 0' TERM; echo up; while true; do sleep 0.1; done"), {"cancel_grace": 5}
    )
    assert next(iter(docker_sched.log_iter(app_id, "main", should_tail=True))) == "up\n"
    docker_sched.cancel(app_id)
    desc = wait_done(docker_sched, app_id, timeout=4)  # well within the grace: SIGTERM was enough
    assert desc.state == AppState.CANCELLED
    assert replica_states(desc) == [("main", 0, AppState.SUCCEEDED, 0)]
    assert logs(docker_sched, app_id) == "up\nbye\n"


# -- all or nothing ------------------------------------------------------------------------------------------------


def test_a_replica_that_cannot_start_rolls_back_the_app(docker_sched: DockerScheduler, session_name: str) -> None:
    app = AppDef(
        "rb",
        [
            Role("ok", BUSYBOX, entrypoint="sleep", args=["30"], num_replicas=2),
            Role("broken", BUSYBOX, entrypoint="no-such-program"),
        ],
    )
    with pytest.raises(DockerSubmitError) as err:
        docker_sched.submit(app, {})
    text = str(err.value)
    assert (
        "replica broken[0]" in text
        and "no-such-program" in text
        and "the 3 container(s) already created were removed" in text
    )
    assert session_containers(session_name) == []


def test_missing_image(docker_sched: DockerScheduler, session_name: str) -> None:
    app = AppDef(
        "mi", [Role("ok", BUSYBOX, entrypoint="true"), Role("bad", "jupyter-sched/no-such-image:x", entrypoint="true")]
    )
    with pytest.raises(
        DockerSubmitError,
        match=r"role bad cannot run: image 'jupyter-sched/no-such-image:x' is not on this Docker engine and pull=never",
    ):
        docker_sched.submit(app, {"pull": "never"})
    with pytest.raises(DockerSubmitError, match=r"role ok cannot run: cannot pull image 'jupyter-sched/busybox:local'"):
        docker_sched.submit(app, {"pull": "always"})  # a local-only image cannot be pulled
    assert session_containers(session_name) == []


def test_pull_policy_with_a_registry(docker_sched: DockerScheduler, registry: str) -> None:
    repo, tag = f"{registry}/jsched-test/pull", random_id()  # one repository name: a registry never forgets them
    image = f"{repo}:{tag}"
    subprocess.run(["docker", "tag", BUSYBOX, image], check=True)
    try:
        subprocess.run(["docker", "push", image], check=True, capture_output=True)
        subprocess.run(["docker", "rmi", image], check=True, capture_output=True)
        app = sh("echo pulled", image=image)
        with pytest.raises(DockerSubmitError, match="not on this Docker engine and pull=never"):
            docker_sched.submit(app, {"pull": "never"})
        app_id = docker_sched.submit(app, {"pull": "missing", "quiet": True})  # absent: pulled once
        wait_done(docker_sched, app_id)
        assert logs(docker_sched, app_id) == "pulled\n"
        since = f"{time.time():.6f}"
        events = subprocess.Popen(
            ["docker", "events", "--filter", "type=image", "--filter", "event=pull", "--format", "{{.ID}}",
             "--since", since, "--until", str(int(time.time()) + 3)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        docker_sched.submit(app, {"pull": "missing"})  # present: no pull
        docker_sched.submit(app, {"pull": "always", "quiet": True})  # always: pulled again
        pulls = events.communicate(timeout=10)[0].split()
        assert pulls == [image]
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
        delete_from_registry(repo, tag)


# -- clean-up -------------------------------------------------------------------------------------------------------


def test_cleanup_removes_the_app(docker_sched: DockerScheduler, session_name: str) -> None:
    running = docker_sched.submit(sh("sleep 100"), {"cancel_grace": 0})
    finished = docker_sched.submit(sh("true", num_replicas=2), {})
    wait_done(docker_sched, finished)
    with pytest.raises(RuntimeError, match="still has 1 replica"):
        docker_sched.cleanup(running)
    assert docker_sched.cleanup(finished) == 2
    assert docker_sched.describe(finished) is None
    assert docker_sched.prune() == []  # the running app is left alone
    docker_sched.cancel(running)
    wait_done(docker_sched, running)
    assert docker_sched.prune() == [running]
    assert session_containers(session_name) == []
    assert json.loads(json.dumps([a.app_id for a in docker_sched.list()])) == []


def test_a_replica_whose_container_was_removed_is_named_not_lost(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(sh("echo hi", num_replicas=2), {})
    wait_done(docker_sched, app_id)
    subprocess.run(["docker", "rm", "-f", f"{app_id}-main-1"], check=True, capture_output=True)
    desc = docker_sched.describe(app_id)
    assert desc is not None and desc.state == AppState.FAILED
    replicas = desc.roles_statuses[0].replicas
    assert [(r.id, r.state) for r in replicas] == [(0, AppState.SUCCEEDED), (1, AppState.UNKNOWN)]
    assert "container was removed" in replicas[1].structured_error_msg and "logs are gone" in desc.msg
    assert desc.roles[0].num_replicas == 2
    with pytest.raises(LookupError, match=r"main\[1\]: its container was removed .* logs are gone"):
        docker_sched.log_iter(app_id, "main", 1)
    assert list(docker_sched.log_iter(app_id, "main", 0)) == ["hi\n"]


def test_resource_devices_become_container_devices(docker_sched: DockerScheduler) -> None:
    # as TorchX maps resource.devices to device mounts; a device file names itself ({"/dev/fuse": 1})
    res = Resource(cpu=1, gpu=0, memMB=256, devices={"/dev/fuse": 1, "vpc.amazonaws.com/efa": 0, "no.such/dev": 2})
    app = AppDef("dev", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", "ls -l /dev/fuse"], resource=res)])
    info = docker_sched.submit_dryrun(app, {})
    (container,) = info.request.containers
    assert container.kwargs["devices"] == ["/dev/fuse:/dev/fuse:rwm"]
    (warning,) = info.request.warnings()
    assert "'no.such/dev' is not known to local_docker" in warning
    assert app.roles[0].mounts == []  # the caller's role is not changed
    app_id = docker_sched.schedule(info)
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.SUCCEEDED, desc
    (line,) = docker_sched.log_iter(app_id, "main", 0)
    assert line.startswith("c") and "10, 229" in line and line.endswith("/dev/fuse\n")  # the host's char device


def test_a_script_that_is_only_here_is_warned_about_at_dry_run(
    docker_sched: DockerScheduler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('hi')\n")
    app = AppDef("train", [Role("python", PYTHON, entrypoint="python3", args=["train.py", "--lr", "0.1"])])
    (warning,) = docker_sched.submit_dryrun(app, {}).request.warnings()
    assert "train.py is a file in" in warning and "add --workspace ." in warning
    mounted = AppDef(
        "train",
        [Role("python", PYTHON, entrypoint="python3", args=["train.py"], mounts=[BindMount(str(tmp_path), "/w")])],
    )
    assert docker_sched.submit_dryrun(mounted, {}).request.warnings() == []
    workspace = AppDef(
        "train", [Role("python", "jupyter-sched/workspace:abc", entrypoint="python3", args=["train.py"])]
    )
    assert docker_sched.submit_dryrun(workspace, {}).request.warnings() == []
    inline = AppDef("t", [Role("python", PYTHON, entrypoint="python3", args=["-c", "1"])])
    assert docker_sched.submit_dryrun(inline, {}).request.warnings() == []
