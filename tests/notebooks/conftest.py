"""Engines the docker-using tutorials need: skip locally without them, FAIL under CI=true."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import missing_engine

TUTORIAL_IMAGES = ("jupyter-sched/busybox:local", "jupyter-sched/python:local")


@pytest.fixture(scope="session")
def tutorial_images(docker_engine: None) -> None:
    missing = [
        image
        for image in TUTORIAL_IMAGES
        if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0
    ]
    if missing:
        missing_engine("Docker images", f"{', '.join(missing)} missing: run `bash scripts/setup/images.sh`")


@pytest.fixture(scope="session")
def slurm_available() -> None:
    """A Slurm cluster that answers ``sinfo`` (``sudo bash scripts/setup/slurm.sh`` starts a local one)."""
    if shutil.which("sinfo") is None:
        missing_engine("Slurm", "no sinfo on PATH (run: sudo bash scripts/setup/slurm.sh)")
    try:
        probe = subprocess.run(["sinfo", "-h"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        missing_engine("Slurm", "sinfo did not answer within 20 s")
    if probe.returncode != 0 or not probe.stdout.strip():
        missing_engine("Slurm", probe.stderr.strip() or "sinfo shows no partition")
