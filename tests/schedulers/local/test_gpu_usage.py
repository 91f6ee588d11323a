"""GPU usage through a stand-in ``nvidia-smi`` on PATH (this machine has no GPU): an executable that
answers both queries in nvidia-smi's real ``csv,noheader,nounits`` format, naming the replica's pid as
a compute app of GPU 1, so the replica's sample (and ``top --json``) carries that GPU and no other."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from jupyter_sched.schedulers.local.usage.gpu_usage import read_gpus
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler

from ..helpers import py_app, wait_until

MIB = 1024 * 1024
UUID0 = "GPU-0c1b2a39-6f5e-4d3c-8b7a-111111111111"
UUID1 = "GPU-5d4c3b2a-1f0e-4d9c-8b7a-222222222222"


def fake_nvidia_smi(bin_dir: Path, pid_file: Path) -> None:
    script = f"""#!/bin/sh
case "$1" in
  --query-gpu=*)
    echo "0, {UUID0}, NVIDIA A100-SXM4-40GB, 0, 3, 40960"
    echo "1, {UUID1}, NVIDIA A100-SXM4-40GB, 87, 1024, 40960" ;;
  --query-compute-apps=*)
    [ -f {pid_file} ] && echo "$(cat {pid_file}), {UUID1}" ;;
  *) echo "unexpected $*" >&2; exit 2 ;;
esac
"""
    exe = bin_dir / "nvidia-smi"
    exe.write_text(script)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_a_replica_shows_the_gpu_its_process_uses(tmp_path, log_dir: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bin_dir, pid_file, stop = tmp_path / "bin", tmp_path / "pid", tmp_path / "stop"
    bin_dir.mkdir()
    fake_nvidia_smi(bin_dir, pid_file)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    gpus, by_pid = read_gpus()
    assert sorted(gpus) == [UUID0, UUID1] and by_pid == {}
    assert gpus[UUID1].utilization_percent == 87.0 and gpus[UUID1].memory_total_bytes == 40960 * MIB

    sched = create_cwd_scheduler("test")
    try:
        code = f"import os, time\nwhile not os.path.exists({str(stop)!r}): time.sleep(0.05)\n"
        app_id = sched.submit(py_app(code, name="gpu"), {"log_dir": log_dir})
        pid = sched.describe(app_id).roles_statuses[0].replicas[0].pid
        pid_file.write_text(str(pid))
        wait_until(lambda: bool(sched.usage(app_id)[0].gpus), 30, "the GPU in the replica's sample")
        [gpu] = sched.usage(app_id)[0].gpus
        assert (gpu.index, gpu.utilization_percent, gpu.memory_used_bytes) == (1, 87.0, 1024 * MIB)
        data = sched.usage(app_id)[0].to_json()["gpus"]
        assert data == [{"index": 1, "name": "NVIDIA A100-SXM4-40GB", "utilization_percent": 87.0,
                         "memory_used_bytes": 1024 * MIB, "memory_total_bytes": 40960 * MIB}]

        # Another process (the CLI) gets the GPU too, from the owner's usage file.
        env = {**os.environ, "JUPYTER_SCHED_LOG_DIR": log_dir}
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_sched", "top", f"local_cwd://test/{app_id}", "--json"],
            capture_output=True, text=True, env=env, timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)[0]["gpus"] == data
    finally:
        stop.write_text("")
        sched.close()


def test_no_nvidia_smi_means_no_gpu_reading(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path))
    assert read_gpus() is None
