"""GPU usage from ``nvidia-smi`` (the NVML command-line front end, present wherever the driver is).

Two queries per reading, in the CSV format ``nvidia-smi`` documents for scripts
(``--format=csv,noheader,nounits``): ``--query-gpu`` for each GPU's utilisation and memory, and
``--query-compute-apps`` for which process uses which GPU, so a replica is shown the GPUs its own process
tree uses. The command rather than NVML bindings: no extra dependency, and the same numbers. No
``nvidia-smi`` on PATH (no GPU): no reading, at the cost of one PATH lookup.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Dict, List, Optional, Tuple

from jupyter_sched.specs.status.usage import MIB, GpuSample

GPU_QUERY = "index,uuid,name,utilization.gpu,memory.used,memory.total"
APPS_QUERY = "pid,gpu_uuid"
TIMEOUT = 10.0


def _query(exe: str, flag: str) -> List[List[str]]:
    out = subprocess.run(
        [exe, f"--{flag}", "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    if out.returncode != 0:
        return []
    return [[cell.strip() for cell in line.split(",")] for line in out.stdout.splitlines() if line.strip()]


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return 0.0


def read_gpus() -> Optional[Tuple[Dict[str, GpuSample], Dict[int, List[str]]]]:
    """(GPU by uuid, GPU uuids by pid), or None without ``nvidia-smi``."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        gpus = {}
        for row in _query(exe, f"query-gpu={GPU_QUERY}"):
            if len(row) >= 6:
                index, uuid, name, util, used, total = row[:6]
                gpus[uuid] = GpuSample(int(_number(index)), name, _number(util),
                                       int(_number(used) * MIB), int(_number(total) * MIB))
        by_pid: Dict[int, List[str]] = {}
        for row in _query(exe, f"query-compute-apps={APPS_QUERY}"):
            if len(row) >= 2 and row[0].isdigit():
                by_pid.setdefault(int(row[0]), []).append(row[1])
    except (OSError, subprocess.SubprocessError):
        return None
    return gpus, by_pid


def gpus_of(pids: List[int], reading: Optional[Tuple[Dict[str, GpuSample], Dict[int, List[str]]]]) -> List[GpuSample]:
    """The GPUs any of ``pids`` uses, in index order."""
    if not reading:
        return []
    gpus, by_pid = reading
    uuids = {u for pid in pids for u in by_pid.get(pid, ())}
    return sorted((gpus[u] for u in uuids if u in gpus), key=lambda g: g.index)
