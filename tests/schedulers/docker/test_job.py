"""The docker backend's request, rendering and state rules: pure code, no engine needed."""

from __future__ import annotations

import json
import os
import shlex
import struct
import subprocess
import sys

import pytest

from jupyter_sched.schedulers.common.ignore import compile_patterns, is_ignored
from jupyter_sched.schedulers.docker.labels import LABEL_APP_ID, LABEL_REPLICA_ID, LABEL_ROLE_NAME, LABEL_SESSION
from jupyter_sched.schedulers.docker.logs.frames import Cursor
from jupyter_sched.schedulers.docker.logs.log_source import docker_time
from jupyter_sched.schedulers.docker.record.state import app_state, exit_code_of_status, parse_time, replica_state
from jupyter_sched.schedulers.docker.request.build import container_names
from jupyter_sched.schedulers.docker.request.job import METRICS_MOUNT, DockerContainer, DockerJob
from jupyter_sched.schedulers.docker_scheduler import RANK0_ENV, DockerScheduler, create_scheduler
from jupyter_sched.specs import (
    AppDef,
    AppState,
    InvalidRunConfigException,
    Role,
    macros,
    parse_mounts,
    resource,
)

BUSYBOX = "jupyter-sched/busybox:local"


def dryrun(app: AppDef, cfg=None, session: str = "s"):  # type: ignore[no-untyped-def]
    return DockerScheduler(session).submit_dryrun(app, cfg or {})


def two_roles() -> AppDef:
    return AppDef(
        "train",
        [
            Role(
                "trainer",
                BUSYBOX,
                entrypoint="sh",
                args=["-c", f"echo $${{{macros.rank0_env}}} {macros.replica_id}"],
                num_replicas=2,
            ),
            Role("ps", BUSYBOX, entrypoint="sleep", args=["1"]),
        ],
    )


def test_importing_the_backend_does_not_import_docker() -> None:
    code = (
        "import sys, jupyter_sched, jupyter_sched.schedulers.docker_scheduler as d;"
        "d.DockerScheduler('x').submit_dryrun(d.AppDef('a', [d.Role('r', 'img', entrypoint='true')]), {});"
        "print('docker' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_registry_and_factory() -> None:
    from jupyter_sched.schedulers import get_scheduler_factories

    sched = get_scheduler_factories()["local_docker"]("sess", cache_size=3)  # unknown kwargs are ignored
    assert isinstance(sched, DockerScheduler) and sched.session_name == "sess"
    assert isinstance(create_scheduler("x"), DockerScheduler)


def test_one_container_per_replica_named_labelled_with_rank0() -> None:
    info = dryrun(two_roles(), session="sess")
    job = info.request
    assert isinstance(job, DockerJob)
    assert [(c.role, c.replica_id) for c in job.containers] == [("trainer", 0), ("trainer", 1), ("ps", 0)]
    rank0 = job.containers[0].name
    assert rank0 == f"{job.app_id}-trainer-0"
    for c in job.containers:
        assert c.kwargs["hostname"] == c.name and c.network == "torchx"
        assert c.labels[LABEL_APP_ID] == job.app_id and c.labels[LABEL_SESSION] == "sess"
        assert c.labels[LABEL_ROLE_NAME] == c.role and c.labels[LABEL_REPLICA_ID] == str(c.replica_id)
        assert c.env[RANK0_ENV] == rank0
    # macros: rank0_env is the *name* of the variable, replica_id the replica's index
    assert job.containers[1].command == ["sh", "-c", "echo ${" + RANK0_ENV + "} 1"]


def test_dryrun_does_not_modify_the_app() -> None:
    app = two_roles()
    before = repr(app)
    dryrun(app, {"env": {"X": "1"}})
    assert repr(app) == before


def test_names_are_valid_hostnames() -> None:
    app_id = "a" * 80 + "-bcdfghjklmnpq"
    roles = [Role("r" * 50, "i", entrypoint="x", num_replicas=12), Role("r" * 49 + "x", "i", entrypoint="x")]
    names = container_names(app_id, roles)
    assert len(set(names.values())) == len(names)
    assert all(len(n) <= 63 and n[0].isalnum() for n in names.values())
    assert container_names("_x-bcd", [Role("r", "i")])[(0, 0)] == "x-bcd-r-0"


def test_env_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSCHED_T_A", "from-copy")
    monkeypatch.setenv("JSCHED_T_B", "from-copy")
    monkeypatch.setenv("JSCHED_T_C", "from-copy")
    monkeypatch.setenv("OTHER_T", "no")
    app = AppDef("e", [Role("r", BUSYBOX, entrypoint="env", env={"JSCHED_T_C": "from-role", RANK0_ENV: "from-role"})])
    cfg = (
        DockerScheduler("s").run_opts().cfg_from_str("copy_env=JSCHED_T_*,env=JSCHED_T_B:from-cfg;JSCHED_T_C:from-cfg")
    )
    env = dryrun(app, cfg).request.containers[0].env
    assert env["JSCHED_T_A"] == "from-copy"
    assert env["JSCHED_T_B"] == "from-cfg"
    assert env["JSCHED_T_C"] == "from-role"
    assert env[RANK0_ENV].endswith("-r-0")  # the scheduler's own variables win
    assert "OTHER_T" not in env


def test_request_environment_is_exactly_torchx_set_and_ours_is_kept_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSCHED_T_COPY", "c")
    role_env = {"ROLE_V": "r", "PYTHONUNBUFFERED": "0", "JUPYTER_SCHED_APP_ID": "mine"}
    app = AppDef("e", [Role("r", BUSYBOX, entrypoint="true", env=role_env, num_replicas=2)])
    job = dryrun(app, {"copy_env": ["JSCHED_T_*"], "env": {"CFG_V": "g"}}).request
    c = job.containers[1]
    rank0 = f"{job.app_id}-r-0"
    assert RANK0_ENV == "TORCHX_RANK0_HOST" and RANK0_ENV not in c.default_env
    assert c.kwargs["environment"] == {"JSCHED_T_COPY": "c", "CFG_V": "g", **role_env, RANK0_ENV: rank0}
    assert c.default_env == {"PYTHONUNBUFFERED": "1"}
    ours = {"JUPYTER_SCHED_APP_ID": job.app_id, "JUPYTER_SCHED_ROLE_NAME": "r", "JUPYTER_SCHED_REPLICA_ID": "1",
            "JUPYTER_SCHED_IMAGE": BUSYBOX, "JUPYTER_SCHED_METRICS_DIR": METRICS_MOUNT,
            "JUPYTER_SCHED_METRICS_OWNER": f"{os.getuid()}:{os.getgid()}"}  # fmt: skip
    assert c.scheduler_env == ours
    # what the container gets: the role's PYTHONUNBUFFERED wins over our default, our variables win over it
    want = {"JSCHED_T_COPY": "c", "CFG_V": "g", "ROLE_V": "r", "PYTHONUNBUFFERED": "0", RANK0_ENV: rank0, **ours}
    assert c.env == want and c.create_kwargs()["environment"] == want
    assert c.added_env() == ours
    assert c.kwargs["environment"]["JUPYTER_SCHED_APP_ID"] == "mine"  # creating does not change the request
    plain = dryrun(AppDef("p", [Role("r", BUSYBOX, entrypoint="true")])).request.containers[0]
    assert plain.env["PYTHONUNBUFFERED"] == "1" and "PYTHONUNBUFFERED" not in plain.kwargs["environment"]


def test_dry_run_shows_both_parts_of_the_environment() -> None:
    app = AppDef("e", [Role("r", BUSYBOX, entrypoint="true", env={"ROLE_V": "r"})])
    info = dryrun(app)
    c = info.request.containers[0]
    lines = repr(info).splitlines()
    # the readable repr: the request's own env, under the rule by which creating the container adds to it
    assert lines[1].startswith("  # env: kwargs['environment'], as TorchX sets it. Creating a container adds")
    assert "PYTHONUNBUFFERED=1 unless env" in lines[1] and "JUPYTER_SCHED_APP_ID" in lines[2]
    env_row = next(i for i, line in enumerate(lines) if line.startswith("    env:  "))
    assert [line.split()[-1] for line in lines[env_row : env_row + 2]] == ["ROLE_V=r", f"{RANK0_ENV}={c.name}"]
    assert not any("PYTHONUNBUFFERED=1" in line or "JUPYTER_SCHED_APP_ID=" in line for line in lines[3:])
    # every other rendering shows each value: the docker run line, the neutral view, the JSON
    assert c.added_env() == {"PYTHONUNBUFFERED": "1", **c.scheduler_env}
    argv = shlex.split(c.docker_run_command())
    assert [b for a, b in zip(argv, argv[1:], strict=False) if a == "--env"] == [f"{k}={v}" for k, v in c.env.items()]
    view = info.request.dryrun_view()
    # the neutral view, as the local backend's: the request's env, then what creating the container adds
    assert view.replicas[0].env == c.kwargs["environment"] and view.replicas[0].launch_env == c.added_env()
    assert {**view.replicas[0].env, **view.replicas[0].launch_env} == c.env and view.notes == []
    data = c.to_json()
    assert data["env"] == c.env and data["kwargs"]["environment"] == c.kwargs["environment"]
    assert data["default_env"] == c.default_env and data["scheduler_env"] == c.scheduler_env


def test_each_container_mounts_the_apps_metrics_directory_and_every_view_shows_it(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The metrics directory is ``<log_dir>/<session>/<app_id>/metrics``, as on the local backends; it is a
    rule of creating the container (from a label), not part of TorchX's kwargs, and every view shows it."""
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(tmp_path))
    mounts = parse_mounts([f"type=bind,src={tmp_path},dst=/data,readonly"])
    info = dryrun(AppDef("m", [Role("r", BUSYBOX, entrypoint="true", mounts=mounts, num_replicas=2)]), session="sess")
    job = info.request
    host = str(tmp_path / "sess" / job.app_id / "metrics")
    ours = {"Target": METRICS_MOUNT, "Source": host, "Type": "bind", "ReadOnly": False}
    for c in job.containers:  # both replicas share the app's directory; their files are named per replica
        assert c.labels["jupyter_sched.metrics-dir"] == host and c.scheduler_mounts == [ours]
        assert c.kwargs["mounts"] == [{"Target": "/data", "Source": str(tmp_path), "Type": "bind", "ReadOnly": True}]
        assert c.create_kwargs()["mounts"] == [*c.kwargs["mounts"], ours]
        assert c.env["JUPYTER_SCHED_METRICS_DIR"] == METRICS_MOUNT
    c = job.containers[0]
    rows = [line.split() for line in repr(c).splitlines()]
    assert ["bind", host, "->", METRICS_MOUNT, "(added", "when", "created)"] in rows
    argv = shlex.split(c.docker_run_command())
    assert ("--mount", f"type=bind,source={host},target={METRICS_MOUNT}") in zip(argv, argv[1:], strict=False)
    plan = job.dryrun_view().replicas[0]
    assert plan.mounts[-1] == f"bind {host} -> {METRICS_MOUNT} (metrics, added when created)"
    assert c.to_json()["scheduler_mounts"] == [ours]
    # a container built by hand (no metrics label) gets no mount and no variable
    bare = DockerContainer("img", ["true"], {"name": "n"})
    assert bare.scheduler_mounts == [] and "mounts" not in bare.create_kwargs()
    assert "JUPYTER_SCHED_METRICS_DIR" not in bare.env


def test_a_role_value_replaced_at_create_is_marked_in_the_dry_run() -> None:
    app = AppDef("e", [Role("r", BUSYBOX, entrypoint="true", env={"JUPYTER_SCHED_ROLE_NAME": "mine"})])
    c = dryrun(app).request.containers[0]
    assert "  env:      JUPYTER_SCHED_ROLE_NAME=mine  (replaced when created)" in repr(c).splitlines()
    assert c.env["JUPYTER_SCHED_ROLE_NAME"] == "r" and c.added_env()["JUPYTER_SCHED_ROLE_NAME"] == "r"


def test_the_repr_names_the_role_only_where_the_container_name_does_not() -> None:
    assert repr(dryrun(two_roles()).request.containers[0]).splitlines()[0].endswith("-trainer-0")
    long_role = "r" * 70  # the name is cut to 63 characters, so it no longer shows the role
    c = dryrun(AppDef("x", [Role(long_role, BUSYBOX, entrypoint="true")])).request.containers[0]
    assert repr(c).splitlines()[0] == f"container {c.name} (role {long_role}, replica 0)"


def test_run_options() -> None:
    opts = DockerScheduler("s").run_opts()
    for key in ("copy_env", "env", "privileged", "pull", "cancel_grace", "network", "image_repo", "quiet"):
        assert opts.get(key) is not None, key
    assert opts.resolve({})["pull"] == "missing"
    cfg = opts.cfg_from_str("copy_env=A_*,B_*,env=A:1,B:2,privileged=true,pull=never,image_repo=127.0.0.1:5000/x")
    assert cfg == {
        "copy_env": ["A_*", "B_*"],
        "env": {"A": "1", "B": "2"},
        "privileged": True,
        "pull": "never",
        "image_repo": "127.0.0.1:5000/x",
    }
    with pytest.raises(InvalidRunConfigException, match="pull='sometimes' must be one of never, missing, always"):
        dryrun(two_roles(), {"pull": "sometimes"})


def test_mounts_resources_retries_privileged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    mounts = parse_mounts(
        [
            f"type=bind,src={tmp_path},dst=/data,readonly",
            "type=volume,src=vol1,dst=/v",
            "type=device,src=/dev/null,perm=rw",
        ]
    )
    role = Role(
        "r", BUSYBOX, entrypoint="true", mounts=mounts, resource=resource(cpu=2, gpu=1, memMB=512), max_retries=3
    )
    c = dryrun(AppDef("m", [role]), {"privileged": True}).request.containers[0]
    assert c.kwargs["mounts"] == [
        {"Target": "/data", "Source": str(tmp_path), "Type": "bind", "ReadOnly": True},
        {"Target": "/v", "Source": "vol1", "Type": "volume", "ReadOnly": False},
    ]
    assert c.kwargs["devices"] == ["/dev/null:/dev/null:rw"]
    assert c.kwargs["nano_cpus"] == 2_000_000_000
    assert c.kwargs["mem_limit"] == c.kwargs["shm_size"] == "512m"
    assert c.kwargs["device_requests"] == [{"count": 1, "capabilities": [["compute", "utility"]]}]
    assert c.kwargs["restart_policy"] == {"Name": "on-failure", "MaximumRetryCount": 3}
    assert c.kwargs["privileged"] is True
    plain = dryrun(AppDef("p", [Role("r", BUSYBOX, entrypoint="true")])).request.containers[0]
    for key in ("mounts", "devices", "nano_cpus", "mem_limit", "device_requests", "restart_policy", "privileged"):
        assert key not in plain.kwargs


def test_repr_is_readable_without_yaml_tags(tmp_path) -> None:  # type: ignore[no-untyped-def]
    role = Role(
        "trainer", BUSYBOX, entrypoint="sh", args=["-c", "echo 'hi there'"], env={"FOO": "bar"},
        mounts=parse_mounts([f"type=bind,src={tmp_path},dst=/data,readonly"]),
        resource=resource(cpu=1, memMB=256), max_retries=2,
    )  # fmt: skip
    info = dryrun(AppDef("r", [role]))
    text = repr(info)
    assert "!!python" not in text and "&id" not in text
    assert f"DockerJob(app_id={info.request.app_id}" in text
    for needle in (
        f"image:    {BUSYBOX}",
        "command:  sh -c 'echo '\"'\"'hi there'\"'\"''",
        "FOO=bar",
        f"bind {tmp_path} -> /data (readonly)",
        "limits:   cpus=1 memory=256m shm=256m",
        "restart:  on-failure (max 2 retries)",
        "network:  torchx",
    ):
        assert needle in text, needle


def test_repr_keeps_one_row_per_value_with_control_characters() -> None:
    # a newline in an env value or an argument must not start what looks like a new row of the table
    args = ["-c", "echo a\necho b", "tab\there"]
    role = Role("r", BUSYBOX, entrypoint="sh", args=args, env={"NL": "a\nb", "CR": "x\ry"})
    text = repr(dryrun(AppDef("c", [role])).request)
    lines = text.splitlines()
    assert any(line.endswith("NL=a\\nb") for line in lines)
    assert any(line.endswith("CR=x\\ry") for line in lines)
    assert any(line.startswith("    command:  ") and line.endswith("'echo a\\necho b' 'tab\\there'") for line in lines)
    assert not any(line.strip() in ("b", "echo b'", "y") for line in lines)


def test_docker_run_command_round_trips_through_the_shell(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "a dir, with comma"
    role = Role(
        "r", BUSYBOX, entrypoint="sh", args=["-c", "echo \"$X\" 'q' $HOME"], env={"X": "a b;c"},
        mounts=parse_mounts([f"type=bind,src={tmp_path},dst=/d", "type=volume,src=v,dst=/v,readonly"]),
        resource=resource(cpu=2, gpu=2, memMB=100), max_retries=1,
    )  # fmt: skip
    role.mounts[0].src_path = str(src)
    c = dryrun(AppDef("x", [role]), {"privileged": True}).request.containers[0]
    argv = shlex.split(c.docker_run_command())
    assert argv[:3] == ["docker", "run", "--detach"]
    assert argv[-4:] == [BUSYBOX, "sh", "-c", "echo \"$X\" 'q' $HOME"]
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--env", "X=a b;c") in pairs
    assert ("--name", c.name) in pairs and ("--network", "torchx") in pairs
    assert ("--mount", f'type=bind,"source={src}",target=/d') in pairs
    assert ("--mount", "type=volume,source=v,target=/v,readonly") in pairs
    assert ("--cpus", "2") in pairs and ("--memory", "100m") in pairs and ("--shm-size", "100m") in pairs
    assert ("--gpus", 'count=2,"capabilities=compute,utility"') in pairs
    assert ("--restart", "on-failure:1") in pairs and "--privileged" in argv
    assert shlex.split(c.docker_run_command(multiline=True).replace("\\\n", " ")) == argv
    c.kwargs["cap_add"] = ["SYS_PTRACE"]
    assert c.docker_run_command().endswith('# not shown as flags: {"cap_add": ["SYS_PTRACE"]}')


def test_to_json_is_json() -> None:
    job = dryrun(two_roles()).request
    data = json.loads(json.dumps(job.to_json()))
    assert data["app_id"] == job.app_id and data["network"] == "torchx" and data["pull"] == "missing"
    first = data["containers"][0]
    assert first["role"] == "trainer" and first["image"] == BUSYBOX and first["kwargs"]["name"] == first["name"]
    assert first["docker_run"] == job.containers[0].docker_run_command()
    assert job.docker_run_command() == [c.docker_run_command() for c in job.containers]
    assert job.docker_script().startswith("docker network create torchx")


def test_peer_style_container_construction() -> None:
    c = DockerContainer("img", ["echo", "hi"], {"name": "n"})
    assert c.name == "n" and "img echo hi" in c.docker_run_command()
    # TorchX's three arguments; equal arguments compare equal and print the same
    kwargs = {"name": "n", "environment": {"A": "1"}}
    c = DockerContainer("img", ["echo"], kwargs)
    assert c == DockerContainer("img", ["echo"], dict(kwargs)) and repr(c) == repr(
        DockerContainer("img", ["echo"], kwargs)
    )
    # created like any of ours: unbuffered Python and its image, and no identity it has no labels for
    assert c.env == {"PYTHONUNBUFFERED": "1", "A": "1", "JUPYTER_SCHED_IMAGE": "img"}
    assert c.create_kwargs() == {**kwargs, "environment": c.env} and c.kwargs["environment"] == {"A": "1"}
    text = repr(DockerJob("a", [c]))
    assert "    env:      A=1" in text.splitlines() and "PYTHONUNBUFFERED=1 unless env" in text


def test_gpus_of_sdk_device_requests_are_shown() -> None:
    # TorchX (and a pre_proc hook) may hand the SDK's DeviceRequest, whose keys are the engine's (Count)
    from docker.types import DeviceRequest

    c = DockerContainer("img", ["x"], {"device_requests": [DeviceRequest(count=4, capabilities=[["gpu"]])]})
    assert "limits:   gpus=4" in repr(c) and c.to_json()["gpus"] == 4
    c.kwargs["device_requests"].append({"count": -1})
    assert "limits:   gpus=all" in repr(c) and c.to_json()["gpus"] == "all"


# -- states ---------------------------------------------------------------------------------------------------


def test_replica_states() -> None:
    assert replica_state("created", None, None) == AppState.SUBMITTED
    assert replica_state("created", None, 10.0) == AppState.CANCELLED
    assert replica_state("running", None, None) == AppState.RUNNING
    assert replica_state("running", None, 10.0) == AppState.RUNNING  # still stopping
    assert replica_state("restarting", None, None) == AppState.PENDING
    assert replica_state("exited", 0, None) == AppState.SUCCEEDED
    assert replica_state("exited", 0, 10.0, 11.0) == AppState.SUCCEEDED  # exited cleanly on SIGTERM
    assert replica_state("exited", 137, None) == AppState.FAILED
    assert replica_state("exited", 137, 10.0, 12.0) == AppState.CANCELLED
    assert replica_state("exited", 3, 10.0, 5.0) == AppState.FAILED  # had failed before the cancel
    assert replica_state("dead", None, None) == AppState.FAILED


def test_app_states() -> None:
    S, R, F, C, P = AppState.SUCCEEDED, AppState.RUNNING, AppState.FAILED, AppState.CANCELLED, AppState.PENDING
    assert app_state([], False) == AppState.UNKNOWN  # TorchX said SUCCEEDED for an unknown app
    assert app_state([F, R], False) == R
    assert app_state([S, P], False) == P
    assert app_state([S, S], False) == S
    assert app_state([S, F], False) == F
    assert app_state([S, C], True) == C


def test_engine_text_parsing() -> None:
    assert exit_code_of_status("Exited (137) 3 seconds ago") == 137
    assert exit_code_of_status("Up 2 seconds") is None
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("1970-01-01T00:00:01.5Z") == 1.5
    assert parse_time("2026-01-01T00:00:00.000000001Z") == pytest.approx(1767225600.000000001)
    from datetime import datetime, timezone

    assert docker_time(datetime(1970, 1, 1, 0, 0, 2, 250000, tzinfo=timezone.utc)) == "2.250000000"


# -- follow bookkeeping ---------------------------------------------------------------------------------------------


def _frame(ts: str, text: str, kind: int = 1) -> bytes:
    payload = f"{ts} {text}".encode()
    return struct.pack(">BxxxL", kind, len(payload)) + payload


def test_cursor_resumes_without_losing_or_repeating_frames() -> None:
    t1, t2 = "2026-01-01T00:00:01.000000000Z", "2026-01-01T00:00:02.000000000Z"
    first = _frame(t1, "a\n") + _frame(t2, "b\n") + _frame(t2, "c\n")
    cursor = Cursor(None)
    # the stream is cut in the middle of a frame: the partial frame waits for the rest
    got = list(cursor.payloads(iter([first[:5], first[5:-3]])))
    assert got == [(1, b"a\nb\n")]
    assert cursor.since == "1767225602.000000000"
    # the re-read starts at t2 (inclusive): b is skipped, c and d are new
    again = _frame(t2, "b\n") + _frame(t2, "c\n") + _frame("2026-01-01T00:00:03.5Z", "d\n")
    assert list(cursor.payloads(iter([again]))) == [(1, b"c\nd\n")]
    assert list(cursor.payloads(iter([_frame("2026-01-01T00:00:03.500000000Z", "d\n")]))) == []
    # payloads keep their stream: a run per stream, in order
    t4 = "2026-01-01T00:00:04.000000000Z"
    mixed = _frame(t4, "o1") + _frame(t4, "o2") + _frame(t4, "e\n", kind=2) + _frame(t4, "o3\n")
    assert list(Cursor(None).payloads(iter([mixed]))) == [(1, b"o1o2"), (2, b"e\n"), (1, b"o3\n")]


# -- .dockerignore -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "patterns, path, ignored",
    [
        (["*.pyc"], "a.pyc", True),
        (["*.pyc"], "sub/a.pyc", False),  # * does not cross /
        (["**/*.pyc"], "sub/deep/a.pyc", True),
        (["**/*.pyc"], "a.pyc", True),
        (["data"], "data/x/y.bin", True),  # a matching directory excludes what is under it
        (["/build"], "build/out", True),
        (["data", "!data/keep.txt"], "data/keep.txt", False),
        (["data", "!data/keep.txt"], "data/drop.txt", True),
        (["*.md", "!README.md", "README*"], "README.md", True),  # the last match wins
        (["docs/**"], "docs/a/b", True),
        (["x?z"], "xyz", True),
        (["[ab].txt"], "b.txt", True),
        (["a.txt"], "a_txt", False),  # '.' is literal
    ],
)
def test_dockerignore_rules(patterns, path, ignored) -> None:  # type: ignore[no-untyped-def]
    assert is_ignored(path, compile_patterns(patterns)) is ignored
