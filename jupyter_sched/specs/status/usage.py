"""What a replica uses: a usage sample, its GPU part, the totals kept after it ends, and the
out-of-memory message every backend gives in the same words.

Pure data, no I/O: the backends measure (psutil, the docker stats API, ``sstat``/``sacct``,
``nvidia-smi``) and fill these in; the CLI's ``top``, ``describe`` and the notebook's status pane only
read them. One shape for all backends is what lets a front end show them without asking which backend
ran the job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuSample:
    """One GPU as ``nvidia-smi``/NVML reports it."""

    index: int
    name: str
    utilization_percent: float
    memory_used_bytes: int
    memory_total_bytes: int

    def to_json(self) -> Dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "utilization_percent": self.utilization_percent,
            "memory_used_bytes": self.memory_used_bytes,
            "memory_total_bytes": self.memory_total_bytes,
        }


@dataclass(frozen=True)
class UsageSample:
    """One replica's usage at ``timestamp`` (UNIX seconds).

    ``cpu_percent`` is % of one core (200 means two busy cores); ``rss_bytes`` is the resident memory of
    the replica's whole process tree (container, step); ``peak_rss_bytes`` the highest seen since it
    started; ``mem_limit_bytes`` None when nothing limits it. ``running`` is False for a final sample
    (totals of a replica that ended: ``cpu_percent`` is then 0).
    """

    role: str
    replica: int
    cpu_percent: float
    cpu_seconds: float
    rss_bytes: int
    peak_rss_bytes: int
    mem_limit_bytes: Optional[int] = None
    gpus: List[GpuSample] = field(default_factory=list)
    wall_seconds: float = 0.0
    timestamp: float = field(default_factory=time.time)
    running: bool = True

    def to_json(self) -> Dict[str, Any]:
        """The fields of ``jupyter-sched top --json``: one object per replica, ``gpus`` only when present."""
        data: Dict[str, Any] = {
            "role": self.role,
            "replica": self.replica,
            "cpu_percent": round(self.cpu_percent, 1),
            "cpu_seconds": round(self.cpu_seconds, 3),
            "rss_bytes": self.rss_bytes,
            "peak_rss_bytes": self.peak_rss_bytes,
            "mem_limit_bytes": self.mem_limit_bytes,
        }
        if self.gpus:
            data["gpus"] = [g.to_json() for g in self.gpus]
        return data

    @property
    def mem_fraction(self) -> Optional[float]:
        """``rss_bytes`` as a fraction of the limit, None without a limit."""
        if not self.mem_limit_bytes:
            return None
        return self.rss_bytes / self.mem_limit_bytes

    def totals(self) -> "UsageTotals":
        return UsageTotals(self.peak_rss_bytes, self.cpu_seconds, self.wall_seconds, self.mem_limit_bytes)


@dataclass(frozen=True)
class UsageTotals:
    """What an ended replica used, kept in its app's record: shown by ``describe`` and ``job.status``.
    ``peak_rss_bytes`` 0 means unknown (a backend whose samples missed the peak says so)."""

    peak_rss_bytes: int
    cpu_seconds: float
    wall_seconds: float
    mem_limit_bytes: Optional[int] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "peak_rss_bytes": self.peak_rss_bytes or None,
            "cpu_seconds": round(self.cpu_seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "mem_limit_bytes": self.mem_limit_bytes,
        }

    @staticmethod
    def from_json(data: Optional[Dict[str, Any]]) -> Optional["UsageTotals"]:
        if not data:
            return None
        return UsageTotals(
            peak_rss_bytes=int(data.get("peak_rss_bytes") or 0),
            cpu_seconds=float(data.get("cpu_seconds") or 0.0),
            wall_seconds=float(data.get("wall_seconds") or 0.0),
            mem_limit_bytes=data.get("mem_limit_bytes"),
        )

    def format(self) -> str:
        """``peak 190.0 MiB, cpu 3.21 s, wall 4.02 s`` (and ``of 256 MiB`` with a limit); ``peak unknown,
        limit 64 MiB, ...`` when the peak is not known."""
        limit = format_bytes(self.mem_limit_bytes) if self.mem_limit_bytes else ""
        if self.peak_rss_bytes:
            peak = f"peak {format_bytes(self.peak_rss_bytes)}" + (f" of {limit}" if limit else "")
        else:
            peak = "peak unknown" + (f", limit {limit}" if limit else "")
        return f"{peak}, cpu {self.cpu_seconds:.2f} s, wall {self.wall_seconds:.2f} s"


def format_bytes(n: Optional[float]) -> str:
    """Binary units with one decimal below 1000 of a unit: ``63.9 MiB``, ``64 MiB``, ``1.5 GiB``."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            break
        value /= 1024
    if unit == "B":
        return f"{int(value)} B"
    text = f"{value:.1f}"
    return f"{text[:-2] if text.endswith('.0') else text} {unit}"


def oom_message(limit_bytes: Optional[int], peak_bytes: Optional[int], peak_unknown: bool = False) -> str:
    """The message of a replica killed for memory, the same on every backend:
    ``killed: out of memory (limit 64 MiB, peak 63.9 MiB)``. Unknown parts are left out; ``peak_unknown``
    says so instead (a backend whose samples missed the climb to the limit: ``peak unknown``)."""
    parts = []
    if limit_bytes:
        parts.append(f"limit {format_bytes(limit_bytes)}")
    if peak_bytes and not peak_unknown:
        parts.append(f"peak {format_bytes(peak_bytes)}")
    elif peak_unknown:
        parts.append("peak unknown")
    detail = f" ({', '.join(parts)})" if parts else ""
    return f"killed: out of memory{detail}"

