"""``-s torchx:<name>``: TorchX's own schedulers behind our interface, for real.

TorchX's ``local_cwd`` runs real processes through our runner; ``kubernetes`` and ``slurm`` are dry-run
(no cluster here) and their rendered requests checked; a submit to a backend without a server fails with
the server's words and our hint.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from tests.conftest import require_module  # noqa: E402

require_module("torchx", "the torchx extra: pip install jupyter_sched[torchx]")

from jupyter_sched.runner import get_runner  # noqa: E402
from jupyter_sched.schedulers import get_scheduler_factories  # noqa: E402
from jupyter_sched.schedulers.torchx_bridge.text import TorchXBackendError  # noqa: E402
from jupyter_sched.specs import AppDef, AppState, InvalidAppError, Resource, Role  # noqa: E402


def _app(*args: str, n: int = 2, entrypoint: str = "sh") -> AppDef:
    res = Resource(cpu=1, gpu=0, memMB=256)
    role = Role("main", "alpine:3", entrypoint=entrypoint, args=list(args), num_replicas=n, resource=res)
    return AppDef("bridged", [role])


def test_the_registry_names_every_torchx_scheduler() -> None:
    names = list(get_scheduler_factories())
    assert names[0] == "local_cwd"
    assert {"torchx:local_cwd", "torchx:kubernetes", "torchx:slurm", "torchx:aws_batch"} <= set(names)


def test_torchx_local_cwd_runs_through_our_runner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with get_runner("bridge", log_dir=str(tmp_path)) as runner:
        handle = runner.run(_app("-c", "echo out-$0; echo err >&2", "x"), "torchx:local_cwd")
        assert handle.startswith("torchx:local_cwd://bridge/bridged-")
        status = runner.wait(handle, wait_interval=0.2, timeout=120)
        assert status is not None and status.state == AppState.SUCCEEDED and isinstance(status.state, AppState)
        assert [r.id for r in status.roles[0].replicas] == [0, 1]
        lines = list(runner.log_lines(handle, "main", 1, should_tail=True))
        assert "out-x\n" in lines and all(line.endswith("\n") for line in lines)
        described = runner.describe(handle)
        assert described is not None and described.roles[0].name == "main"
        assert handle in [app.app_handle for app in runner.list("torchx:local_cwd")]

        sleeper = runner.run(_app("-c", "sleep 300", n=1), "torchx:local_cwd")
        runner.cancel(sleeper)
        final = runner.wait(sleeper, wait_interval=0.2, timeout=120)
        assert final is not None and final.state in (AppState.CANCELLED, AppState.FAILED)


def _request_yaml(text: str) -> dict:
    return yaml.safe_load(text.split("=== SCHEDULER REQUEST ===", 1)[-1])


def test_kubernetes_dry_run_renders_the_volcano_job() -> None:
    with get_runner("bridge") as runner:
        info = runner.dryrun(_app("-c", "echo hi", n=3), "torchx:kubernetes", cfg={"queue": "research"})
    text = str(info)
    job = _request_yaml(text) if "=== SCHEDULER REQUEST ===" in text else yaml.safe_load(text)
    assert job["apiVersion"].startswith("batch.volcano.sh/") and job["kind"] == "Job"
    assert job["spec"]["queue"] == "research" and job["spec"]["schedulerName"] == "volcano"
    tasks = job["spec"]["tasks"]
    assert [t["name"] for t in tasks] == ["main-0", "main-1", "main-2"]
    container = tasks[0]["template"]["spec"]["containers"][0]
    assert container["image"] == "alpine:3" and container["command"] == ["sh", "-c", "echo hi"]
    assert container["resources"]["limits"]["cpu"] in ("1000m", "1")


def test_slurm_dry_run_renders_the_batch_script() -> None:
    with get_runner("bridge") as runner:
        text = str(runner.dryrun(_app("-c", "echo hi"), "torchx:slurm"))
    assert "#SBATCH" in text and "srun" in text and "echo hi" in text


def test_a_backend_without_a_server_fails_with_its_words_and_our_hint(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with get_runner("bridge") as runner:
        with pytest.raises(TorchXBackendError) as e:
            runner.run(_app("-c", "echo hi"), "torchx:kubernetes", cfg={"queue": "q"})
    text = str(e.value)
    assert text.startswith("torchx:kubernetes could not submit the app: ")
    assert "kube" in text.lower() and "hint: it needs a reachable Kubernetes cluster" in text


def test_bad_input_is_refused_before_torchx_builds_anything() -> None:
    with get_runner("bridge") as runner:
        with pytest.raises(InvalidAppError, match=r"roles\[0\]\.num_replicas"):
            runner.dryrun(_app("-c", "true", n=10**20), "torchx:kubernetes", cfg={"queue": "q"})
        with pytest.raises(ValueError, match="No resource"):  # TorchX's own _validate, through the bridge
            runner.dryrun(AppDef("a", [Role("r", "img", entrypoint="e")]), "torchx:aws_batch", cfg={"queue": "q"})


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_sched.cli.main", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ},
    )  # fmt: skip


def test_cli_runopts_and_dry_run_show_torchx_options_and_request() -> None:
    opts = _cli("runopts", "torchx:kubernetes")
    assert opts.returncode == 0, opts.stderr
    assert "queue=QUEUE" in opts.stdout and "Volcano queue" in opts.stdout and "namespace" in opts.stdout
    dry = _cli("run", "--dryrun", "-s", "torchx:kubernetes", "--cfg", "queue=q", "utils.echo", "--msg", "hi")
    assert dry.returncode == 0, dry.stderr
    assert "kind: Job" in dry.stdout and "schedulerName: volcano" in dry.stdout


def test_the_notebook_shows_the_bridged_request_escaped() -> None:
    from jupyter_sched.notebook.displays.dryrun_repr import dryrun_html

    app = AppDef("<b>x</b>", [Role("main", "alpine:3", entrypoint="echo", args=["hi"], resource=Resource(1, 0, 256))])
    with get_runner("bridge") as runner:
        html = dryrun_html(runner.dryrun(app, "torchx:kubernetes", cfg={"queue": "q"}))
    assert "schedulerName: volcano" in html and "<b>x" not in html and "&lt;b&gt;x" in html


def test_torchx_local_docker_runs_through_our_runner(docker_engine: None) -> None:
    import docker  # a dependency of ours; the engine fixture fails under CI=true when no engine answers

    from ..docker.fixtures import BUSYBOX

    app = AppDef("bridged", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", "echo hi-$0", "x"], num_replicas=2,
                                  resource=Resource(1, 0, 128))])  # fmt: skip
    client = docker.from_env()
    handle = ""
    try:
        with get_runner("bridge") as runner:
            handle = runner.run(app, "torchx:local_docker")
            status = runner.wait(handle, wait_interval=0.5, timeout=120)
            assert status is not None and status.state == AppState.SUCCEEDED
            assert [r.state for r in status.roles[0].replicas] == [AppState.SUCCEEDED] * 2
            assert list(runner.log_lines(handle, "main", 1, should_tail=True)) == ["hi-x\n"]
            assert handle in [a.app_handle for a in runner.list("torchx:local_docker")]
    finally:
        app_id = handle.rsplit("/", 1)[-1]
        for c in client.containers.list(all=True, filters={"label": f"torchx.pytorch.org/app-id={app_id}"}):
            c.remove(force=True)


SECRET = "supersecret123"


def _secret_app(n: int = 2) -> AppDef:
    res = Resource(cpu=1, gpu=0, memMB=256)
    role = Role(
        "main", "alpine:3", entrypoint="sh", args=["-c", "echo $HF_TOKEN --password=hunter22"], num_replicas=n,
        resource=res, env={"HF_TOKEN": SECRET, "LR": "0.1"},
    )  # fmt: skip
    return AppDef("bridged", [role])


def test_kubernetes_dry_run_is_torchxs_own_with_secrets_masked(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The Volcano job the bridge shows is the one TorchX's own scheduler builds for the same app (same
    app id pinned), but for the secrets, masked by our rule where TorchX's YAML shows them in full."""
    import torchx.schedulers.kubernetes_scheduler as tx_k8s

    from jupyter_sched.schedulers.torchx_bridge.convert import to_torchx_app
    from jupyter_sched.specs.output.masking import MASK

    monkeypatch.setattr(tx_k8s, "make_unique", lambda name: f"{name}-pinned")
    app, cfg = _secret_app(), {"queue": "research", "namespace": "ml"}
    theirs = str(tx_k8s.create_scheduler("bridge").submit_dryrun(to_torchx_app(app), dict(cfg)))
    assert SECRET in theirs and "hunter22" in theirs  # TorchX shows them
    sched = get_scheduler_factories()["torchx:kubernetes"]("bridge")
    ours = str(sched.submit_dryrun(app, dict(cfg)))
    assert SECRET not in ours and "hunter22" not in ours
    expected = _replaced(yaml.safe_load(theirs), {SECRET: MASK, "hunter22": MASK})
    assert yaml.safe_load(ours) == expected  # valid YAML, TorchX's but for the masks
    container = expected["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    assert {"name": "HF_TOKEN", "value": MASK} in container["env"]
    assert {"name": "LR", "value": "0.1"} in container["env"]
    assert app.roles[0].env["HF_TOKEN"] == SECRET  # only what is shown is masked


def _replaced(value, replace):  # type: ignore[no-untyped-def]
    if isinstance(value, dict):
        return {k: _replaced(v, replace) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, replace) for v in value]
    if isinstance(value, str):
        for old, new in replace.items():
            value = value.replace(old, new)
    return value


def test_cli_kubernetes_dry_run_masks_secrets_in_text_and_json() -> None:
    for json_flag in ([], ["--json"]):
        dry = _cli("run", "--dryrun", *json_flag, "-s", "torchx:kubernetes", "--cfg", "queue=q", "utils.sh",
                   "--env", f"HF_TOKEN={SECRET}", "echo hi")  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        assert "schedulerName: volcano" in dry.stdout and "HF_TOKEN" in dry.stdout
        assert SECRET not in dry.stdout + dry.stderr


_BLOCK_KUBERNETES = """
import sys
class NoKubernetes:
    def find_spec(self, name, path=None, target=None):
        if name == "kubernetes" or name.startswith("kubernetes."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoKubernetes())
from jupyter_sched.cli.main import main
sys.exit(main())
"""


def test_without_the_kubernetes_package_the_hint_says_to_install_it() -> None:
    """As where the package is not installed: its import fails (a finder refuses it), nothing else."""
    proc = subprocess.run(
        [sys.executable, "-c", _BLOCK_KUBERNETES, "run", "--dryrun", "-s", "torchx:kubernetes", "--cfg", "queue=q",
         "utils.echo"], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "No module named 'kubernetes" in proc.stderr
    assert "pip install 'kubernetes'" in proc.stderr and "jupyter_sched[torchx]" in proc.stderr
    assert "reachable Kubernetes cluster" not in proc.stderr and "needs none of this" not in proc.stderr


def test_records_a_torchx_job_prints_are_collected_by_its_log_readers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A TorchX backend shares no directory with its replicas: their records come as marked stderr lines,
    which the log readers here hide and store in the app's metrics directory on this machine."""
    from jupyter_sched.frontend.job import Job

    line = '@@jupyter_sched:metrics {"v":1,"w":"x","seq":0,"t":1700000000,"step":0,"metrics":{"loss":0.5}}'
    with get_runner("bridge", log_dir=str(tmp_path)) as runner:
        handle = runner.run(_app("-c", f"echo hi; echo '{line}' >&2", n=1), "torchx:local_cwd")
        job = Job(handle, runner)
        status = job.wait(timeout=120)
        assert status is not None and status.state == AppState.SUCCEEDED
        directory = runner.metrics_dir(handle)
        assert directory is not None and f"{os.sep}torchx-local_cwd{os.sep}" in directory
        assert job.metrics().empty, "nothing read the log yet"
        assert [text.split("|", 1)[1].strip() for text in job.logs()] == ["hi"]
        frame = job.metrics()
        assert list(zip(frame["step"], frame["key"], frame["value"], strict=True)) == [(0, "loss", 0.5)]


TRACKED = (
    "from torchx.tracker import app_run_from_env; run = app_run_from_env(); "
    "run.add_metadata(lr=0.1); run.add_metadata(lr=0.01, epochs=3); run.add_artifact('model', '/out/m.pt'); "
    "print('trained', flush=True)"
)


def test_tracker_entries_a_torchx_job_prints_reach_describe(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """TorchX's tracker API in a TorchX backend's replica (no metrics directory there) prints its entries as
    marked stderr lines: the log readers hide them and store them where ``describe`` reads them."""
    import sys

    from jupyter_sched.frontend.job import Job
    from jupyter_sched.frontend.jobs.tracked import read_tracked

    with get_runner("bridge", log_dir=str(tmp_path)) as runner:
        handle = runner.run(_app("-c", TRACKED, n=1, entrypoint=sys.executable), "torchx:local_cwd")
        job = Job(handle, runner)
        status = job.wait(timeout=120)
        assert status is not None and status.state == AppState.SUCCEEDED, "\n".join(job.logs())
        assert read_tracked(runner.metrics_dir(handle), handle) == [], "nothing read the log yet"
        assert [text.split("|", 1)[1].strip() for text in job.logs()] == ["trained"]
        assert [text.split("|", 1)[1].strip() for text in job.logs()] == ["trained"]  # read twice: stored once
        [run] = read_tracked(runner.metrics_dir(handle), handle)
        assert run.run_id == handle and run.metadata == {"lr": 0.01, "epochs": 3}
        assert run.artifacts == {"model": {"name": "model", "path": "/out/m.pt", "metadata": None}}
        tracker_files = [n for n in os.listdir(runner.metrics_dir(handle) or "") if n.endswith(".tracker.jsonl")]
        [name] = tracker_files
        with open(os.path.join(runner.metrics_dir(handle) or "", name)) as f:
            assert len(f.read().splitlines()) == 3  # two metadata entries and one artifact, each once
