"""``-s torchx:ray``: TorchX's Ray scheduler through the bridge, against a real Ray head.

The head is ``scripts/setup/ray.sh``'s (127.0.0.1, with its dashboard, ``RAY_DEDUP_LOGS=0``); the tests skip
without Ray or a head, and fail so under CI=true. The dry-run tests need no head at all. Ray starts a job in
seconds, not milliseconds, so the jobs here are few and run side by side: the distributed and the function
jobs are submitted before the first test and checked last.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from tests.conftest import require_module, require_ray

require_module("torchx", "the torchx extra: pip install jupyter_sched[torchx]")
require_ray()

from jupyter_sched.runner import get_runner  # noqa: E402
from jupyter_sched.schedulers import get_scheduler_factories  # noqa: E402
from jupyter_sched.schedulers.api import Stream  # noqa: E402
from jupyter_sched.schedulers.common.workspace_source import LocalWorkspace  # noqa: E402
from jupyter_sched.schedulers.torchx_bridge import ray as ray_dirs  # noqa: E402
from jupyter_sched.schedulers.torchx_bridge.ray import STAGE_PREFIX  # noqa: E402
from jupyter_sched.specs import AppDef, AppState, Resource, Role  # noqa: E402

SECRET = "supersecret123"
DDP_SCRIPT = """\
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
total = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(total)
print(f"rank={os.environ['RANK']} world={os.environ['WORLD_SIZE']} master={os.environ['MASTER_ADDR']}"
      f" sum={total.item():g}")
dist.destroy_process_group()  # else gloo may abort the process at exit while its peer is still connected
"""


def _staged() -> List[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), STAGE_PREFIX + "*"))


def _cli_all(*commands: List[str], env: Dict[str, str] | None = None) -> List[subprocess.CompletedProcess]:
    """The commands run side by side (each imports Ray, seconds of CPU): their results, in order."""
    procs = [subprocess.Popen([sys.executable, "-m", "jupyter_sched.cli.main", *c], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for c in commands]  # fmt: skip
    out = []
    for command, proc in zip(commands, procs):
        stdout, stderr = proc.communicate(timeout=180)
        out.append(subprocess.CompletedProcess(command, proc.returncode, stdout, stderr))
    return out


def _tree(path: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _role(image: str, script: str, n: int = 1, env: Dict[str, str] | None = None) -> Role:
    return Role("main", image, entrypoint="sh", args=["-c", script], num_replicas=n,
                resource=Resource(cpu=1, gpu=0, memMB=256), env=dict(env or {}))  # fmt: skip


# -- no cluster needed --------------------------------------------------------------------------------------------
def test_a_dry_run_with_the_defaults_needs_no_cluster(tmp_path: Path) -> None:
    """A built-in component with its default image (a container image, which means nothing to Ray) dry-runs
    with no head and no RAY_ADDRESS: the job gets an empty working directory of the bridge's, gone when the
    command ends. Secrets are masked in the text and the JSON alike."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    before = set(_staged())
    args = ["run", "--dryrun", "-s", "torchx:ray", "--cfg", "dashboard_address=127.0.0.1:9", "utils.sh",
            "--env", f"HF_TOKEN={SECRET}", f"echo --password={SECRET}"]  # fmt: skip
    text, as_json = _cli_all(args, [*args[:2], "--json", *args[2:]], env=env)
    for proc in (text, as_json):
        assert proc.returncode == 0, proc.stderr
        assert SECRET not in proc.stdout + proc.stderr
        assert "HF_TOKEN" in proc.stdout and f"working_dir='{tempfile.gettempdir()}/{STAGE_PREFIX}" in proc.stdout
    assert "=== SCHEDULER REQUEST ===\nRayJob(" in text.stdout and '"scheduler": "torchx:ray"' in as_json.stdout
    assert set(_staged()) == before  # each command removed the directory it staged


def test_a_users_directory_is_copied_never_handed_to_torchx(tmp_path: Path) -> None:
    """TorchX writes its driver into the directory it is given and deletes it when it is under the
    temporary directory: the bridge gives it a copy (``.torchxignore`` applied), whether the directory
    comes as a role's image or as a workspace. The copy exists while TorchX builds the request (it finds
    ``requirements.txt`` there) and from the submit on: a dry run leaves nothing behind."""
    user = tmp_path / "mine"
    (user / "sub").mkdir(parents=True)
    (user / "keep").write_text("data\n")
    (user / "requirements.txt").write_text("\n")
    (user / "sub" / "code.py").write_text("print(1)\n")
    (user / "big.bin").write_bytes(b"x" * 1000)
    (user / ".torchxignore").write_text("*.bin\n")
    before, staged_before = _tree(user), set(_staged())
    with get_runner("ray-dry") as runner:
        for app, workspace in [(AppDef("img", [_role(str(user), "cat keep")]), None),
                               (AppDef("ws", [_role("python:3.12-slim", "cat keep")]), str(user))]:  # fmt: skip
            request = runner.dryrun(app, "torchx:ray", workspace=workspace).request.request
            staged = Path(request.working_dir)
            assert staged.parent == Path(tempfile.gettempdir()) and staged.name.startswith(STAGE_PREFIX)
            assert request.requirements == str(staged / "requirements.txt")  # TorchX read the copy
            assert not staged.exists() and set(_staged()) == staged_before
            assert app.roles[0].image in (str(user), "python:3.12-slim")  # the caller's AppDef is untouched
    copy = Path(ray_dirs.stage(LocalWorkspace(str(user))))
    try:
        assert _tree(copy) == {k: v for k, v in before.items() if k != "big.bin"}
    finally:
        ray_dirs.remove(str(copy))
    assert _tree(user) == before


def test_since_and_until_are_refused_on_ray_naming_why() -> None:
    from datetime import datetime

    sched = get_scheduler_factories()["torchx:ray"]("s")

    with pytest.raises(ValueError, match="since/until: torchx:ray's log lines carry no time"):
        sched.log_iter("127.0.0.1:9-app", "ray", 0, since=datetime.now())
    assert list(sched.log_iter("127.0.0.1:9-app", "ray", 0, streams=Stream.STDERR)) == []  # one log: stdout


def test_a_submit_without_a_cluster_names_it_and_leaves_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_sched.schedulers.torchx_bridge.text import TorchXBackendError

    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # Ray prefers it to the dashboard_address option
    before = set(_staged())
    with get_runner("ray-dry") as runner:
        with pytest.raises(TorchXBackendError) as e:
            runner.run(AppDef("nowhere", [_role("", "true")]), "torchx:ray", cfg={"dashboard_address": "127.0.0.1:9"})
    assert str(e.value).startswith("torchx:ray could not submit the app: ")
    assert "127.0.0.1:9" in str(e.value) and "ray start --head --dashboard-host 127.0.0.1" in str(e.value)
    assert set(_staged()) == before


def test_roles_naming_two_directories_are_refused(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    other = Role("other", str(two), entrypoint="true", resource=Resource(1, 0, 128))
    with get_runner("ray-dry") as runner:
        with pytest.raises(ValueError, match=r"roles\[1\]\.image=.*one working directory per job"):
            runner.dryrun(AppDef("two_dirs", [_role(str(one), "true"), other]), "torchx:ray")


# -- on the Ray head ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def early(ray_cluster: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    """Jobs started before the first test and checked by the last ones (Ray takes seconds to start one):
    a 2-replica dist.spmd job from a workspace, and a function job."""
    import jupyter_sched

    started: Dict[str, Any] = {}
    workspace = tmp_path_factory.mktemp("ddp_ws")
    (workspace / "ddp.py").write_text(DDP_SCRIPT)
    started["ddp"] = None
    if importlib.util.find_spec("torch") is not None:  # the test itself says why it skips without torch
        started["ddp"] = subprocess.Popen(
            [sys.executable, "-m", "jupyter_sched.cli.main", "run", "-s", "torchx:ray", "--workspace", str(workspace),
             "dist.spmd", "--num_replicas", "2", "--script", "ddp.py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
    scale = 10

    def train(lr: float) -> Dict[str, Any]:
        from jupyter_sched import track

        print("training at", lr)
        track.define_metric("loss", goal="min")
        for step in range(5):
            track.log({"loss": scale / (1 + lr) / (step + 1)})
        track.flush()
        return {"loss": scale / (1 + lr), "rank": os.environ.get("RANK")}

    started["fn"] = jupyter_sched.submit(train, lr=0.5, scheduler="torchx:ray")
    yield started


def test_submit_follow_live_status_and_cancel(early: Dict[str, Any], tmp_path: Path) -> None:
    """One job followed by the runner and by ``jupyter-sched log -f`` at once: each sees the line the job
    prints before the test lets the job go on (so lines arrive while it runs), every line once, nothing
    on stderr (Ray has one log), and the job ran in a copy of the user's directory, which is untouched."""
    user = tmp_path / "work"
    user.mkdir()
    (user / "keep").write_text("data-kept\n")
    before, go = _tree(user), tmp_path / "go"
    script = (f"cat keep; echo ready-sup; while [ ! -e {go} ]; do sleep 0.1; done; echo after-go; echo to-err >&2;"
              " echo cancel-me; sleep 300")
    with get_runner("ray-live") as runner:
        handle = runner.run(AppDef("live", [_role(str(user), script)]), "torchx:ray")
        assert handle.startswith("torchx:ray://ray-live/127.0.0.1:")
        cli = subprocess.Popen([sys.executable, "-m", "jupyter_sched.cli.main", "log", "-f", handle],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        cli_lines: List[str] = []
        cli_saw_ready = threading.Event()

        def read_cli() -> None:
            assert cli.stdout is not None
            for line in cli.stdout:
                cli_lines.append(line)
                if "ready-sup" in line:
                    cli_saw_ready.set()

        reader = threading.Thread(target=read_cli, daemon=True)
        reader.start()
        lines: List[str] = []
        for line in runner.log_lines(handle, "ray", 0, should_tail=True):
            lines.append(line)
            if "ready-sup" in line:
                status = runner.status(handle)
                assert status is not None and status.state == AppState.RUNNING  # seen while it runs
                assert cli_saw_ready.wait(120), "jupyter-sched log -f did not show the line while the job ran"
                go.touch()
            if "cancel-me" in line:
                runner.cancel(handle)
        assert cli.wait(120) == 1 and cli.stderr is not None  # log -f ends with the app, which did not succeed
        assert f"{handle}: CANCELLED" in cli.stderr.read()
        reader.join(30)
        status = runner.wait(handle, wait_interval=0.5, timeout=120)
        assert status is not None and status.state == AppState.CANCELLED and status.msg == "STOPPED"
        marks = ("data-kept", "ready-sup", "after-go", "to-err", "cancel-me")
        for got in (lines, cli_lines):
            seen = [line.rstrip().rsplit(" ", 1)[-1] for line in got if line.rstrip().endswith(marks)]
            assert sorted(seen) == sorted(marks), got  # each once (stdout and stderr are one log on Ray)
            assert [m for m in seen if m != "to-err"] == [m for m in marks if m != "to-err"]  # stdout in order
        assert list(runner.log_lines(handle, "ray", 0, streams=Stream.STDERR)) == []
        assert [x for x in runner.log_lines(handle, "ray", 0, regex="after-go")][0].endswith("after-go\n")
        assert _tree(user) == before  # TorchX wrote its driver into the bridge's copy, then deleted that
        unknown = handle.rsplit("-", 2)[0] + "-nosuchjob"
        assert runner.status(unknown) is None
        runner.cancel(unknown)  # an unknown app is left alone
        listed = [a.app_handle for a in runner.list("torchx:ray")]
        assert handle in listed


def test_cli_status_and_list_name_what_is_wrong(ray_cluster: str) -> None:
    unknown = f"torchx:ray://default/{ray_cluster.split('//')[-1]}-nosuchjob"
    without = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a handle names its cluster
    status, listing = _cli_all(["status", unknown], ["list", "-s", "torchx:ray"], env=without)
    assert status.returncode != 0 and f"no app {unknown}" in status.stderr, status.stderr
    assert "404" not in status.stderr and "dashboard" not in status.stderr  # (cancel: the runner's, above)
    assert listing.returncode != 0
    assert "export RAY_ADDRESS=" in listing.stderr and "--cfg dashboard_address" not in listing.stderr


def test_a_job_whose_driver_never_starts_says_why_in_rays_words(ray_cluster: str, tmp_path: Path) -> None:
    """A job that fails before any replica runs (here Ray cannot set up its runtime environment: the
    requirements name a package that does not exist) reads as Ray's message says, not TorchX's "FAILED"."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("jupyter-sched-no-such-package-0x5f==0.0.1\n")
    work = tmp_path / "work"
    work.mkdir()
    with get_runner("ray-driver") as runner:
        handle = runner.run(AppDef("nodriver", [_role(str(work), "echo never")]), "torchx:ray",
                            cfg={"requirements": str(requirements)})  # fmt: skip
        status = runner.wait(handle, wait_interval=0.5, timeout=300)
        assert status is not None and status.state == AppState.FAILED, status
        assert status.msg != "FAILED" and "jupyter-sched-no-such-package-0x5f" in status.msg, status.msg
        reason = json.loads(status.roles[0].replicas[0].structured_error_msg)["message"]
        assert reason == status.msg


@pytest.mark.torch
def test_dist_spmd_two_replicas_meet_on_ray(early: Dict[str, Any], torch_installed: None) -> None:
    proc = early["ddp"]
    assert proc is not None
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    handle = stdout.strip().splitlines()[-1]
    with get_runner("default") as runner:
        status = runner.wait(handle, wait_interval=0.5, timeout=180)
        text = "".join(runner.log_lines(handle, "ray", 0))
    assert status is not None and status.state == AppState.SUCCEEDED, f"{status}\n{text}"
    ranks = dict(re.findall(r"rank=(\d) world=2 master=(\S+) sum=3", text))
    assert sorted(ranks) == ["0", "1"], text  # both ranks met, and both summed 1 + 2
    # TorchX's driver names the replica Ray placed first as the rank-0 host (localhost to itself)
    assert "localhost" in ranks.values() and len(set(ranks.values())) == 2


def test_a_function_job_runs_on_a_local_ray_head(early: Dict[str, Any]) -> None:
    """The bridge carries a function job where the cluster shares this machine's filesystem (a local head):
    the replica reads the pickled call from, and writes its value to, the job directory here."""
    job = early["fn"]
    assert job.handle.startswith("torchx:ray://")
    assert job.result(timeout=180) == {"loss": 10 / 1.5, "rank": "0"}
    assert any("training at 0.5" in line for line in job.logs())
    # its track.log records came as marked stderr lines (no directory is shared with a Ray cluster): the
    # log read above hid them and stored them on this machine, where job.metrics() reads them
    assert not any("@@jupyter_sched" in line for line in job.logs())
    frame = job.metrics()
    assert list(frame["step"]) == [0, 1, 2, 3, 4] and set(frame["key"]) == {"loss"}
    assert list(frame["value"]) == [10 / 1.5 / (step + 1) for step in range(5)]


