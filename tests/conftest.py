"""Shared fixtures. Tests run real processes, engines and browsers; nothing here mocks them.

Every test session gets its own ``JUPYTER_SCHED_LOG_DIR`` so tests never touch the user's state dir.
``docker_engine``, ``slurm_cluster`` (a running Slurm cluster: ``bash scripts/setup/slurm.sh`` starts a
local one) and ``ray_cluster`` (a Ray head with its dashboard: ``bash scripts/setup/ray.sh``) skip when an
engine is missing on a developer machine, but FAIL under ``CI=true``,
where the project's setup scripts are expected to have installed and started it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

import pytest
from hypothesis import settings

from jupyter_sched.runner import Runner, get_runner

# Tests assert no timing: Hypothesis's per-example deadline (200 ms) is one, and a loaded 2-core machine
# exceeds it on examples that are not slow at all, so no example has a deadline.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# The processes the tests start stand for programs run in a terminal's foreground, where Ctrl-C (SIGINT)
# interrupts. A pytest started as a script's background job (CI's may be) has SIGINT ignored, and an
# ignored signal stays ignored across exec: its children would ignore Ctrl-C, as they should there (see
# jupyter_sched/schedulers/local/processes/signals.py). Handled here, it is back to the default in every child.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The local logs and the Slurm job root (:func:`slurm_cluster`'s) in this run's temporary directory,
    from the first test on: a scheduler object keeps the root it was made with, so a Slurm scheduler that
    a test makes before any test asks for the cluster (a dry run, a run-options listing) must already see
    the same root as the jobs the cluster's tests check."""
    names = ("JUPYTER_SCHED_LOG_DIR", "JUPYTER_SCHED_SLURM_DIR")
    old = {name: os.environ.get(name) for name in names}
    os.environ["JUPYTER_SCHED_LOG_DIR"] = str(tmp_path_factory.mktemp("jupyter_sched_state"))
    os.environ["JUPYTER_SCHED_SLURM_DIR"] = str(tmp_path_factory.mktemp("slurm_jobs"))
    yield
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def log_dir(tmp_path) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "logs"
    path.mkdir()
    return str(path)


@pytest.fixture
def runner() -> Iterator[Runner]:
    with get_runner("test") as r:
        yield r


def missing_engine(what: str, why: str) -> None:
    """Skip locally, fail in CI: CI must have every engine (its setup scripts install them)."""
    message = f"{what} is not available: {why}"
    if IN_CI:
        pytest.fail(message + " (CI=true: the setup scripts should have provided it)")
    pytest.skip(message)


def require_module(name: str, why: str) -> None:
    """Module-level: skip the file when an optional package is missing locally; fail under CI=true (CI
    installs the test extra, so a missing package there is a broken setup, not a reason to skip)."""
    import importlib

    try:
        importlib.import_module(name)
    except ImportError as e:
        if IN_CI:
            raise RuntimeError(f"{name} is not installed ({why}); CI=true: scripts/setup/python.sh installs it") from e
        pytest.skip(f"{name} is not installed ({why})", allow_module_level=True)


@pytest.fixture
def torch_installed() -> None:
    """Requires PyTorch (scripts/setup/torch.sh installs the CPU build into the main venv). Tests using it
    are marked ``torch``: the other Pythons' venvs (scripts/ci/python_versions.sh) deselect them."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        if IN_CI:
            raise RuntimeError("torch is not installed; CI=true: scripts/setup/torch.sh installs it") from e
        pytest.skip("torch is not installed (bash scripts/setup/torch.sh)")


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Requires a running Docker engine (``bash scripts/setup/docker.sh`` starts one)."""
    if shutil.which("docker") is None:
        missing_engine("Docker", "no docker client on PATH")
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True)
    if probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "docker info failed"
        missing_engine("Docker", why)


@dataclass(frozen=True)
class SlurmCluster:
    """The cluster the tests run on: its default partition, node count and the per-node sizes."""

    partition: str
    nodes: int
    cpus: int
    memMB: int
    job_root: str


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A Slurm cluster that answers ``sinfo``, with at least 4 nodes in its default partition.

    App directories (scripts and logs) go to a per-session temporary job root; on this single-host test
    cluster every "node" shares the filesystem.
    """
    if shutil.which("sinfo") is None:
        missing_engine("Slurm", "no sinfo on PATH (run: sudo bash scripts/setup/slurm.sh)")
    try:
        probe = subprocess.run(["sinfo", "-h", "-N", "-o", "%P|%c|%m|%t"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        missing_engine("Slurm", "sinfo did not answer within 20 s (is slurmctld up? scripts/setup/slurm.sh status)")
    if probe.returncode != 0:
        missing_engine("Slurm", probe.stderr.strip() or f"sinfo exited {probe.returncode}")
    rows = [line.split("|") for line in probe.stdout.split()]
    default = [r for r in rows if r[0].endswith("*")]
    if not default:
        missing_engine("Slurm", "the cluster has no default partition")
    usable = [r for r in default if r[3].rstrip("*~#!%$@^-") in ("idle", "mix", "alloc", "comp")]
    if len(usable) < 4:
        missing_engine(
            "Slurm", f"need 4 nodes up in the default partition, found {len(usable)}: {probe.stdout.strip()}"
        )
    root = os.environ["JUPYTER_SCHED_SLURM_DIR"]  # _isolated_state's, also seen by the tests' subprocesses
    yield SlurmCluster(
        partition=default[0][0].rstrip("*"),
        nodes=len(default),
        cpus=min(int(r[1].rstrip("+")) for r in default),
        memMB=min(int(r[2].rstrip("+")) for r in default),
        job_root=root,
    )


RAY_LOCAL_ADDRESS = "http://127.0.0.1:8265"
"""Where ``scripts/setup/ray.sh`` puts the test head's dashboard (its job API)."""


def require_ray() -> None:
    """Module-level: skip the file where Ray (``ray[default]``) is not installed; fail under CI=true."""
    require_module("ray.dashboard.modules.job.sdk", "the ray extra: pip install 'jupyter_sched[ray]'")


def ray_answers(address: str) -> Optional[str]:
    """None when the Ray dashboard at ``address`` answers for jobs, else why not."""
    import urllib.request

    try:
        for path in ("/api/version", "/api/jobs/"):
            with urllib.request.urlopen(address.rstrip("/") + path, timeout=10) as reply:
                if reply.status != 200:
                    return f"{address}{path} answered {reply.status}"
    except OSError as e:
        return f"{address} does not answer ({e})"
    return None


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """A Ray head whose job API answers (``bash scripts/setup/ray.sh`` starts one on 127.0.0.1): its
    dashboard address, also set as RAY_ADDRESS for this process and the processes it starts."""
    try:
        import ray.dashboard.modules.job.sdk  # noqa: F401
    except ImportError:
        missing_engine("Ray", "the ray package is not installed (pip install 'jupyter_sched[ray]')")
    address = os.environ.get("RAY_ADDRESS") or RAY_LOCAL_ADDRESS
    why = ray_answers(address)
    if why is not None:
        missing_engine("Ray", f"{why}; start a local head: bash scripts/setup/ray.sh")
    old = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = address
    yield address
    if old is None:
        os.environ.pop("RAY_ADDRESS", None)
    else:
        os.environ["RAY_ADDRESS"] = old


@pytest.fixture
def built() -> Iterator[Callable[[str], str]]:
    """Builds small images (from a Dockerfile's text, over the test images) for one test; removes them,
    and only them, afterwards."""
    tags: List[str] = []

    def build(dockerfile: str) -> str:
        tag = f"jupyter-sched/test-{uuid.uuid4().hex[:8]}:local"
        subprocess.run(["docker", "build", "-q", "-t", tag, "-"], input=dockerfile.encode(), check=True,
                       capture_output=True, env={**os.environ, "DOCKER_BUILDKIT": "0"})  # fmt: skip
        tags.append(tag)
        return tag

    yield build
    for tag in tags:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)
