"""Usage of Slurm replicas: ``sstat`` for running steps, ``sacct`` (MaxRSS, TotalCPU) after they end.

Each replica is step 0 of its het-job component (``JOBID+OFFSET.0``, or ``JOBID.0`` for one replica).
Slurm measures only when the cluster gathers accounting data (``JobAcctGatherType`` other than
``jobacct_gather/none``); without it ``sstat`` prints no memory and garbage CPU times and ``sacct`` zeros,
so :func:`check_gathering` refuses with the setting to change rather than showing numbers that are not
measurements. A step the cluster killed for memory ends OUT_OF_MEMORY; :func:`oom_text` words it the way
every backend does.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from jupyter_sched.schedulers import slurm_cli
from jupyter_sched.specs.usage import UsageSample, oom_message

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_TIME = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")
STAT_FIELDS = ("JobID", "MaxRSS", "AveCPU")
ACCT_FIELDS = ("JobID", "State", "MaxRSS", "TotalCPU", "ReqMem", "Elapsed")


def parse_size(text: str) -> Optional[int]:
    """Slurm's ``123456K`` / ``1.50G`` / ``4000M`` (and ``4000Mn``/``Mc`` of old ReqMem) as bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)([KMGT]?)[nc]?\s*", text or "")
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


def parse_duration(text: str) -> Optional[float]:
    """``[DD-[HH:]]MM:SS[.mmm]`` as seconds."""
    match = _TIME.match((text or "").strip())
    if not match:
        return None
    days, hours, minutes, seconds = match.groups()
    return int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def step_id(job_id: str, offset: int, het: bool) -> str:
    return f"{job_id}+{offset}.0" if het else f"{job_id}.0"


def _rows(cmd: List[str], fields: Tuple[str, ...]) -> Dict[str, Dict[str, str]]:
    proc = slurm_cli.run(cmd)
    rows = {}
    for line in proc.stdout.splitlines():
        values = line.split("|")
        if len(values) >= len(fields):
            row = dict(zip(fields, values))
            rows[row["JobID"]] = row
    return rows


_GATHER: Dict[str, str] = {}


def check_gathering() -> None:
    """Raises ValueError (naming the setting) if the cluster gathers no usage."""
    if "type" not in _GATHER:
        out = slurm_cli.run(["scontrol", "show", "config"]).stdout
        match = re.search(r"^JobAcctGatherType\s*=\s*(\S+)", out, re.M)
        _GATHER["type"] = match.group(1) if match else ""
    if _GATHER["type"] in ("", "jobacct_gather/none"):
        raise ValueError(
            "this Slurm cluster gathers no resource usage (JobAcctGatherType=jobacct_gather/none), so there is"
            " nothing to show; an administrator enables it with JobAcctGatherType=jobacct_gather/linux (or"
            " jobacct_gather/cgroup) in slurm.conf"
        )


@dataclass
class _Seen:
    cpu: float
    at: float
    peak: int


class SlurmUsage:
    """Turns ``sstat``/``sacct`` rows into samples; keeps the last CPU reading per step for a CPU %."""

    def __init__(self) -> None:
        self._seen: Dict[str, _Seen] = {}

    def samples(self, job_id: str, replicas: List[Tuple[str, int, int, bool, Optional[float], Optional[float]]],
                het: bool) -> List[UsageSample]:
        """``replicas``: (role, replica, component offset, running, started, finished)."""
        check_gathering()
        running = [step_id(job_id, off, het) for _, _, off, live, _, _ in replicas if live]
        ended = [step_id(job_id, off, het) for _, _, off, live, _, _ in replicas if not live]
        stat = _rows(["sstat", "-a", "--noheader", "--parsable2", "-o", ",".join(STAT_FIELDS), "-j", ",".join(running)],
                     STAT_FIELDS) if running else {}
        acct = _rows(["sacct", "--noheader", "--parsable2", "-o", ",".join(ACCT_FIELDS), "-j", job_id],
                     ACCT_FIELDS) if ended or running else {}
        limit = parse_size(next((r["ReqMem"] for r in acct.values() if r["ReqMem"]), ""))
        out, now = [], time.time()
        for role, k, off, live, started, finished in replicas:
            sid = step_id(job_id, off, het)
            row = stat.get(sid) if live else acct.get(sid)
            if row is None:
                continue
            rss = parse_size(row["MaxRSS"]) or 0
            cpu = parse_duration(row["AveCPU" if live else "TotalCPU"]) or 0.0
            seen = self._seen.get(sid)
            percent = 0.0
            if live and seen is not None and now > seen.at:
                percent = max(0.0, cpu - seen.cpu) / (now - seen.at) * 100.0
            peak = max(rss, seen.peak if seen else 0)
            self._seen[sid] = _Seen(cpu, now, peak)
            out.append(UsageSample(
                role, k, percent, cpu, rss if live else 0, peak, limit,
                wall_seconds=max(0.0, (finished if not live and finished else now) - (started or now)),
                timestamp=now if live else (finished or now), running=live,
            ))
        return out


def oom_text(job_id: str, offset: int, het: bool) -> str:
    """The message of a step that ended OUT_OF_MEMORY, with its limit and peak where sacct has them."""
    rows = _rows(["sacct", "--noheader", "--parsable2", "-o", ",".join(ACCT_FIELDS), "-j", job_id], ACCT_FIELDS)
    row = rows.get(step_id(job_id, offset, het), {})
    limit = parse_size(next((r["ReqMem"] for r in rows.values() if r.get("ReqMem")), ""))
    return oom_message(limit, parse_size(row.get("MaxRSS", "")))
