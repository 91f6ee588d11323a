"""Usage of Slurm replicas: ``sstat`` for running steps, ``sacct`` (MaxRSS, TotalCPU) after they end.

Each replica is step 0 of its het-job component (``JOBID+OFFSET.0``, or ``JOBID.0`` for one replica).
Slurm measures only when the cluster gathers accounting data (``JobAcctGatherType`` other than
``jobacct_gather/none``); without it ``sstat`` prints no memory and garbage CPU times and ``sacct`` zeros,
so :func:`check_gathering` refuses with the setting to change rather than showing numbers that are not
measurements.

A step the cluster killed for memory is named by :meth:`SlurmUsage.oom_text` the way every backend does.
Slurm ends it in one of two ways: ``OUT_OF_MEMORY`` where ``task/cgroup`` enforces ``--mem`` (the kernel's
OOM killer), or, with ``JobAcctGatherParams=OverMemoryKill`` (polling, no cgroup needed: our test cluster),
``CANCELLED`` by SIGKILL with a recorded MaxRSS above the step's memory. The second is recognised by
exactly that rule, and only on a cluster configured with OverMemoryKill.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.specs.status.usage import UsageSample, UsageTotals, oom_message

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_TIME = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")
STAT_FIELDS = ("JobID", "MaxRSS", "TRESUsageInTot")
ACCT_FIELDS = ("JobID", "State", "MaxRSS", "TotalCPU", "ReqMem", "Elapsed", "ExitCode", "AllocTRES")
_CONFIG_TTL_S = 30.0  # how long the cluster's gathering settings are trusted before asking again
_RSS_LAG_S = 10.0  # longest wait for the MaxRSS of a killed step (slurmdbd lags under load)


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


def tres_value(text: str, name: str) -> str:
    """One entry of a TRES list such as ``cpu=00:00:03,mem=218200K,vmem=221388K``."""
    for part in (text or "").split(","):
        key, _, value = part.partition("=")
        if key == name:
            return value
    return ""


_settings: Dict[str, Tuple[float, str, str]] = {}


def gather_settings(max_age: float = _CONFIG_TTL_S) -> Tuple[str, str]:
    """The cluster's ``JobAcctGatherType`` and ``JobAcctGatherParams`` (from ``scontrol show config``,
    asked again after ``max_age`` seconds)."""
    cached = _settings.get("config")
    if cached is None or time.monotonic() - cached[0] >= max_age:
        out = slurm_cli.run(["scontrol", "show", "config"]).stdout
        found = {
            key: re.search(rf"^{key}\s*=\s*(\S+)", out, re.M) for key in ("JobAcctGatherType", "JobAcctGatherParams")
        }
        values = [m.group(1) if m else "" for m in found.values()]
        cached = _settings["config"] = (time.monotonic(), values[0], values[1])
    return cached[1], cached[2]


def check_gathering(max_age: float = _CONFIG_TTL_S) -> None:
    """Raises ValueError (naming the setting) if the cluster gathers no usage."""
    if gather_settings(max_age)[0] in ("", "jobacct_gather/none"):
        raise ValueError(
            "this Slurm cluster gathers no resource usage (JobAcctGatherType=jobacct_gather/none), so there is"
            " nothing to show; an administrator enables it with JobAcctGatherType=jobacct_gather/linux (or"
            " jobacct_gather/cgroup) in slurm.conf"
        )


def kills_over_memory(max_age: float = _CONFIG_TTL_S) -> bool:
    """True if the cluster kills a step whose gathered RSS exceeds its memory (OverMemoryKill)."""
    gather, params = gather_settings(max_age)
    return gather not in ("", "jobacct_gather/none") and "overmemorykill" in params.lower().split(",")


def _limit(rows: Dict[str, Dict[str, str]], job_id: str, offset: int, het: bool) -> Optional[int]:
    """The memory of a replica's step (its ``AllocTRES`` ``mem=``, what OverMemoryKill compares with), else
    its het-job component's ReqMem (which sacct can print garbled, ``16?``, just after the job ended)."""
    step = rows.get(step_id(job_id, offset, het), {})
    comp = rows.get(f"{job_id}+{offset}" if het else job_id, {})
    for text in (
        tres_value(step.get("AllocTRES", ""), "mem"),
        tres_value(comp.get("AllocTRES", ""), "mem"),
        comp.get("ReqMem", ""),
    ):
        size = parse_size(text)
        if size:
            return size
    return None


def killed_for_memory(row: Dict[str, str], limit: Optional[int], over_memory_kill: bool) -> bool:
    """Did Slurm end this sacct step row for its memory? ``OUT_OF_MEMORY`` (cgroup), or, where the
    cluster runs OverMemoryKill, SIGKILL (``ExitCode`` ``0:9``) with a MaxRSS above the step's memory."""
    state = slurm_cli.slurm_state_name(row.get("State", ""))
    if state == "OUT_OF_MEMORY":
        return True
    peak = parse_size(row.get("MaxRSS", ""))
    signal = row.get("ExitCode", "").partition(":")[2]
    return (
        over_memory_kill
        and state in ("CANCELLED", "FAILED")
        and signal == "9"
        and bool(peak and limit and peak > limit)
    )


@dataclass
class _Seen:
    cpu: float
    at: float
    peak: int
    limit: Optional[int]


class SlurmUsage:
    """Turns ``sstat``/``sacct`` rows into samples; keeps the last CPU reading per step for a CPU %, and
    the out-of-memory verdict of steps that ended (it cannot change)."""

    def __init__(self) -> None:
        self._seen: Dict[str, _Seen] = {}
        self._oom: Dict[str, str] = {}

    def samples(
        self, job_id: str, replicas: List[Tuple[str, int, int, bool, Optional[float], Optional[float]]], het: bool
    ) -> List[UsageSample]:
        """``replicas``: (role, replica, component offset, running, started, finished)."""
        check_gathering()
        running = [step_id(job_id, off, het) for _, _, off, live, _, _ in replicas if live]
        stat = (
            _rows(
                ["sstat", "-a", "--noheader", "--parsable2", "-o", ",".join(STAT_FIELDS), "-j", ",".join(running)],
                STAT_FIELDS,
            )
            if running
            else {}
        )
        acct = (
            _rows(["sacct", "--noheader", "--parsable2", "-o", ",".join(ACCT_FIELDS), "-j", job_id], ACCT_FIELDS)
            if replicas
            else {}
        )
        out, now = [], time.time()
        for role, k, off, live, started, finished in replicas:
            sid = step_id(job_id, off, het)
            row = stat.get(sid) if live else acct.get(sid)
            if row is None:
                continue
            if live:  # the step's tasks now (TRESUsageInTot); MaxRSS is the highest Slurm has polled
                rss = parse_size(tres_value(row["TRESUsageInTot"], "mem")) or 0
                cpu = parse_duration(tres_value(row["TRESUsageInTot"], "cpu")) or 0.0
            else:
                rss, cpu = 0, parse_duration(row["TotalCPU"]) or 0.0
            seen = self._seen.get(sid)
            percent = 0.0
            if live and seen is not None and now > seen.at:
                percent = max(0.0, cpu - seen.cpu) / (now - seen.at) * 100.0
            elif live and started and now > started:  # first look: the average since the step started
                percent = cpu / (now - started) * 100.0
            peak = max(rss, parse_size(row["MaxRSS"]) or 0, seen.peak if seen else 0)
            # the database may not have a job that just started: keep the limit once it had it
            limit = _limit(acct, job_id, off, het) or (seen.limit if seen else None)
            self._seen[sid] = _Seen(cpu, now, peak, limit)
            out.append(
                UsageSample(
                    role,
                    k,
                    percent,
                    cpu,
                    rss,
                    peak,
                    limit,
                    wall_seconds=max(0.0, (finished if not live and finished else now) - (started or now)),
                    timestamp=now if live else (finished or now),
                    running=live,
                )
            )
        return out

    @staticmethod
    def totals(
        step: Optional[Dict[str, str]], started: Optional[float], finished: Optional[float]
    ) -> Optional[UsageTotals]:
        """What an ended replica used, from its step's accounting row (``MaxRSS``, ``TotalCPU``, ``AllocTRES``),
        which ``describe`` already reads; None while the database has no MaxRSS for it yet, or when the
        cluster gathers nothing (its zeros are not measurements)."""
        row = step or {}
        peak = parse_size(row.get("MaxRSS", ""))
        if peak is None or finished is None or gather_settings()[0] in ("", "jobacct_gather/none"):
            return None
        return UsageTotals(
            peak_rss_bytes=peak,
            cpu_seconds=parse_duration(row.get("TotalCPU", "")) or 0.0,
            wall_seconds=max(0.0, finished - (started or finished)),
            mem_limit_bytes=parse_size(tres_value(row.get("AllocTRES", ""), "mem")),
        )

    def oom_text(self, job_id: str, offset: int, het: bool) -> str:
        """The message of a replica whose step Slurm ended for its memory, with its limit and peak where
        sacct has them; "" for a step that ended otherwise. The controller records a cancelled step
        before its step daemon reports the step's MaxRSS: a SIGKILLed step is looked at again for up to
        ``_RSS_LAG_S`` seconds until it has one (and a limit). Verdicts are kept (an ended step does not change)."""
        sid = step_id(job_id, offset, het)
        if sid in self._oom:
            return self._oom[sid]
        deadline = time.monotonic() + _RSS_LAG_S
        while True:
            rows = _rows(["sacct", "--noheader", "--parsable2", "-o", ",".join(ACCT_FIELDS), "-j", job_id], ACCT_FIELDS)
            row = rows.get(sid)
            if row is None or not slurm_cli.map_state(row["State"]).is_terminal:
                return ""  # not recorded (as ended) yet: ask again next time
            limit = _limit(rows, job_id, offset, het)
            if (row["MaxRSS"] and limit) or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        killed = killed_for_memory(row, limit, kills_over_memory())
        while len(self._oom) >= 1000:
            self._oom.pop(next(iter(self._oom)))
        self._oom[sid] = oom_message(limit, parse_size(row["MaxRSS"])) if killed else ""
        return self._oom[sid]
