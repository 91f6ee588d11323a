"""A local replica's environment: the request's ``env`` holds exactly what TorchX's request holds, our own
variables ride in ``launch_env``, and the process started from it sees both (with today's precedence)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from jupyter_sched.notebook.displays.dryrun_repr import dryrun_html, dryrun_json, dryrun_text
from jupyter_sched.schedulers.local.request.popen import ReplicaParam
from jupyter_sched.schedulers.local_scheduler import ENV_CUDA_VISIBLE_DEVICES, LocalScheduler, create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, Resource, Role
from jupyter_sched.specs.request.dryrun import LAUNCH_ENV_HEADING

from ..helpers import PY, wait_until

OURS = ("JUPYTER_SCHED_APP_ID", "JUPYTER_SCHED_ROLE_NAME", "JUPYTER_SCHED_REPLICA_ID", "JUPYTER_SCHED_METRICS_DIR")
SHOW_ENV = (
    "import json, os, sys; json.dump({k: os.environ.get(k) for k in sys.argv[1:]}, sys.stdout)"
)


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


def seen_env(sched: LocalScheduler, app: AppDef, log_dir: str, names: list, **cfg) -> dict:  # type: ignore[type-arg]
    """Runs ``app`` (whose roles print the variables ``names`` as JSON) and returns replica 0's view."""
    app.roles[0].args = ["-c", SHOW_ENV, *names]
    app_id = sched.submit(app, {"log_dir": log_dir, **cfg})
    wait_until(lambda: sched.describe(app_id).state.is_terminal, 30, f"{app_id} to finish")
    assert sched.describe(app_id).state == AppState.SUCCEEDED
    return json.loads("".join(sched.log_iter(app_id, app.roles[0].name, 0)))


def test_request_env_is_exactly_torchx_set(sched: LocalScheduler, log_dir: str) -> None:
    app = AppDef("t", [Role("w", "x", entrypoint=PY, env={"A": "1", "TORCHX_RANK0_HOST": "mine"}, num_replicas=2)])
    request = sched.submit_dryrun(app, {"log_dir": log_dir}).request
    for k, param in enumerate(request.role_params["w"]):
        replica_dir = request.role_log_dirs["w"][k]
        assert param.env == {
            "A": "1",
            "TORCHX_RANK0_HOST": "localhost",
            "TORCHELASTIC_ERROR_FILE": os.path.join(replica_dir, "error.json"),
            "PET_LOG_DIR": os.path.join(request.log_dir, "torchelastic", "w"),
        }
        assert set(param.launch_env) == {"PATH", "PYTHONUNBUFFERED", *OURS}
        assert param.launch_env["JUPYTER_SCHED_REPLICA_ID"] == str(k)
    assert app.roles[0].env == {"A": "1", "TORCHX_RANK0_HOST": "mine"}  # the caller's role is untouched


def test_cuda_visible_devices_stays_in_the_request_env(  # type: ignore[no-untyped-def]
    sched: LocalScheduler, log_dir: str, tmp_path, monkeypatch
) -> None:
    """With ``auto_set_cuda_visible_devices`` (through a stand-in ``nvidia-smi -L`` listing 4 GPUs) the
    assigned devices are part of the request's env, as in TorchX."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nfor i in 0 1 2 3; do echo \"GPU $i: stand-in (UUID: GPU-$i)\"; done\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    app = AppDef("t", [Role("w", "x", entrypoint=PY, num_replicas=2, resource=Resource(cpu=1, gpu=2, memMB=64))])
    request = sched.submit_dryrun(app, {"log_dir": log_dir, "auto_set_cuda_visible_devices": True}).request
    params = request.role_params["w"]
    assert [p.env["CUDA_VISIBLE_DEVICES"] for p in params] == ["0,1", "2,3"]
    assert ENV_CUDA_VISIBLE_DEVICES == "CUDA_VISIBLE_DEVICES"  # TorchX's public name for it
    assert set(params[1].env) == {"TORCHX_RANK0_HOST", "TORCHELASTIC_ERROR_FILE", "PET_LOG_DIR", "CUDA_VISIBLE_DEVICES"}


def test_a_replica_sees_the_request_env_and_our_additions(sched: LocalScheduler, log_dir: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OWNER_ONLY", "kept")
    app = AppDef("seen", [Role("w", "x", entrypoint=PY, env={"MINE": "m"})])
    names = ["PATH", "PYTHONUNBUFFERED", "TORCHX_RANK0_HOST", "MINE", "OWNER_ONLY", *OURS]
    env = seen_env(sched, app, log_dir, names)
    assert env["PATH"].split(os.pathsep)[-1] == os.getcwd()  # the composed PATH (cwd appended)
    assert env["PYTHONUNBUFFERED"] == "x" and env["TORCHX_RANK0_HOST"] == "localhost"
    assert (env["MINE"], env["OWNER_ONLY"]) == ("m", "kept")
    assert env["JUPYTER_SCHED_ROLE_NAME"] == "w" and env["JUPYTER_SCHED_REPLICA_ID"] == "0"
    assert env["JUPYTER_SCHED_APP_ID"].startswith("seen")


def test_precedence_between_role_env_and_our_additions(sched: LocalScheduler, log_dir: str) -> None:
    """The role's PYTHONUNBUFFERED wins over our default; its PATH is part of the composed one; our
    JUPYTER_SCHED_* and the rank-0 host win over the role's."""
    role_env = {"PYTHONUNBUFFERED": "0", "PATH": "/opt/role-bin", "JUPYTER_SCHED_REPLICA_ID": "7",
                "TORCHX_RANK0_HOST": "elsewhere"}  # fmt: skip
    app = AppDef("prec", [Role("w", "x", entrypoint=PY, env=role_env)])
    param = sched.submit_dryrun(app, {"log_dir": log_dir}).request.role_params["w"][0]
    assert param.env["PYTHONUNBUFFERED"] == "0" and "PYTHONUNBUFFERED" not in param.launch_env
    env = seen_env(sched, app, log_dir, ["PYTHONUNBUFFERED", "PATH", "JUPYTER_SCHED_REPLICA_ID", "TORCHX_RANK0_HOST"])
    assert env["PYTHONUNBUFFERED"] == "0"
    assert env["PATH"].split(os.pathsep)[0] == "/opt/role-bin" and env["PATH"] != "/opt/role-bin"
    assert (env["JUPYTER_SCHED_REPLICA_ID"], env["TORCHX_RANK0_HOST"]) == ("0", "localhost")


@pytest.mark.parametrize(
    "prepend_cwd, owner_path, expected",
    [
        (False, "/bin:/usr/bin", "/home/bob:/bin:/usr/bin:{cwd}"),  # cwd after the inherited PATH
        (True, "/bin:/usr/bin", "{cwd}:/home/bob:/bin:/usr/bin"),
        (False, None, os.defpath + ":{cwd}"),  # an owner without PATH: the system default path
    ],
)
def test_path_a_replica_gets(  # type: ignore[no-untyped-def]
    sched: LocalScheduler, log_dir: str, tmp_path, monkeypatch, prepend_cwd, owner_path, expected
) -> None:
    monkeypatch.chdir(tmp_path)
    if owner_path is None:
        monkeypatch.delenv("PATH")
    else:
        monkeypatch.setenv("PATH", owner_path)
    app = AppDef("p", [Role("w", "x", entrypoint=PY, env={} if owner_path is None else {"PATH": "/home/bob"})])
    env = seen_env(sched, app, log_dir, ["PATH"], prepend_cwd=prepend_cwd)
    assert env["PATH"] == expected.format(cwd=tmp_path)


def test_torchx_style_replica_param_still_constructs() -> None:
    param = ReplicaParam(["echo", "hi"], {"A": "1"}, "out.log", "err.log", "combined.log", "/tmp")
    assert param.launch_env == {} and param.cwd == "/tmp"
    assert param.replica_env == {"A": "1"}
    param.launch_env["A"] = "ours"
    assert param.process_env({"A": "owner", "B": "owner"}) == {"A": "ours", "B": "owner"}


def test_every_dry_run_rendering_shows_both_parts(sched: LocalScheduler, log_dir: str, runner) -> None:  # type: ignore[no-untyped-def]
    info = sched.submit_dryrun(AppDef("d", [Role("w", "x", entrypoint=PY, env={"MINE": "m"})]), {"log_dir": log_dir})
    text = repr(info)
    head, launch = text.split(LAUNCH_ENV_HEADING)
    assert "env:  TORCHX_RANK0_HOST=localhost" in head and "env:  MINE=m" in head
    assert "JUPYTER_SCHED_APP_ID" not in head and "PATH=" not in head
    assert "JUPYTER_SCHED_REPLICA_ID=0" in launch and "PATH=" in launch and "PYTHONUNBUFFERED=x" in launch
    view = info.view()
    assert view is not None
    [plan] = view.replicas
    assert "PATH" in plan.launch_env and "PATH" not in plan.env
    shown = runner.dryrun(AppDef("d", [Role("w", "x", entrypoint=PY)]), "local_cwd", {"log_dir": log_dir})
    nb_text = dryrun_text(shown)
    assert LAUNCH_ENV_HEADING in nb_text and "JUPYTER_SCHED_ROLE_NAME=w" in nb_text.split(LAUNCH_ENV_HEADING)[1]
    assert LAUNCH_ENV_HEADING in dryrun_html(shown)
    [plan_json] = dryrun_json(shown)["view"]["replicas"]
    assert "PATH" in plan_json["launch_env"] and plan_json["env"]["TORCHX_RANK0_HOST"] == "localhost"
