"""Talking to Slurm through its command-line tools, and reading their answers.

Only the parsable text formats are used (``scontrol -o``, ``squeue -o``, ``sacct --parsable2``, ``sinfo -o``):
Slurm 22.05's ``squeue --json`` ignores ``-j`` and ``scontrol --json`` does not exist, and the text
formats read the same from 20.x to 24.x.

* :func:`job_components` asks the controller (``scontrol``) about a job it still holds in memory (running,
  pending, or ended less than ``MinJobAge`` ago). It answers at once after ``sbatch`` and knows
  ``Restarts``.
* :func:`accounting_rows` asks the accounting database (``sacct``), which also knows each step's state and
  exit code, and every job after the controller forgot it. It lags a few seconds behind a new job.
* :func:`partition_nodes` lists the nodes (``sinfo``) for the capacity check done before submitting.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence

from jupyter_sched.specs import AppState
from jupyter_sched.specs.errors import BackendUnavailableError

TIMEOUT = 30.0


class SlurmError(RuntimeError):
    """A Slurm command is missing or failed in a way that is not "no such job"."""


class SlurmUnavailableError(SlurmError, BackendUnavailableError):
    """Slurm's client commands are missing, or the controller does not answer."""


_UNREACHABLE = re.compile(
    r"Unable to contact slurm controller|Socket timed out|Connection refused|connect failure", re.IGNORECASE
)
"""What Slurm's commands print when the controller cannot be reached."""


def run(cmd: Sequence[str], timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Runs a Slurm command and returns its result (whatever its exit status)."""
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SlurmUnavailableError(
            f"{cmd[0]!r} not found: the slurm scheduler needs Slurm's client commands on PATH"
            " (on a test machine, `sudo bash scripts/setup/slurm.sh` installs and starts a local cluster)"
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmUnavailableError(
            f"`{' '.join(cmd)}` did not answer within {timeout:.0f}s: is slurmctld up?"
        ) from None


def check_result(proc: subprocess.CompletedProcess, what: str) -> str:
    """``proc``'s stdout, or a SlurmError with its last line of complaint if it failed."""
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        message = f"{what} failed (exit {proc.returncode}): {detail[-1] if detail else 'no output'}"
        if _UNREACHABLE.search(proc.stderr or ""):
            raise SlurmUnavailableError(f"{message}; is slurmctld up? (`scontrol ping` says)")
        raise SlurmError(message)
    return proc.stdout


# -- states, times, exit codes -------------------------------------------------------------------------------------

_STATES: Dict[str, AppState] = {
    **dict.fromkeys(
        ["PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"],
        AppState.PENDING,
    ),
    **dict.fromkeys(
        ["RUNNING", "COMPLETING", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "SUSPENDED"],
        AppState.RUNNING,
    ),
    "COMPLETED": AppState.SUCCEEDED,
    "CANCELLED": AppState.CANCELLED,
    "REVOKED": AppState.CANCELLED,
    **dict.fromkeys(
        ["FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"],
        AppState.FAILED,
    ),
}


def slurm_state_name(raw: str) -> str:
    """``"CANCELLED by 0"`` -> ``"CANCELLED"``; ``""`` -> ``"UNKNOWN"``."""
    words = raw.split()
    return words[0].rstrip("+").upper() if words else "UNKNOWN"


def map_state(raw: str) -> AppState:
    """A Slurm job or step state as an AppState (UNKNOWN for states this version does not know)."""
    return _STATES.get(slurm_state_name(raw), AppState.UNKNOWN)


def parse_time(raw: Optional[str]) -> Optional[float]:
    """Slurm's local ``YYYY-MM-DDTHH:MM:SS`` as a UNIX timestamp; None for Unknown/None/N/A."""
    if not raw or not raw[:1].isdigit():
        return None
    try:
        return time.mktime(time.strptime(raw.strip(), "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def parse_exit_code(raw: Optional[str]) -> Optional[int]:
    """``"3:0"`` -> 3; ``"0:15"`` (killed by SIGTERM) -> -15, as ``Popen.returncode`` reports it."""
    if not raw or ":" not in raw:
        return None
    code, _, sig = raw.partition(":")
    try:
        code_i, sig_i = int(code), int(sig)
    except ValueError:
        return None
    return -sig_i if sig_i else code_i


# -- scontrol ------------------------------------------------------------------------------------------------------

_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][\w/:]*)=")


def parse_scontrol_line(line: str) -> Dict[str, str]:
    """One ``scontrol -o`` record as a dict. A value runs up to the next ``Key=``, so values may hold
    spaces (``Reason=...``, paths)."""
    matches = list(_KEY.finditer(line))
    out: Dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out[m.group(1)] = line[m.end() : end].strip()
    return out


def job_components(job_id: str) -> List[Dict[str, str]]:
    """The controller's records of job ``job_id`` (one per het-job component, by offset); ``[]`` when the
    controller does not hold it (never existed, or ended more than ``MinJobAge`` ago)."""
    proc = run(["scontrol", "-o", "show", "job", job_id])
    if proc.returncode != 0:
        if "Invalid job id" in proc.stderr or "invalid job id" in proc.stderr.lower():
            return []
        check_result(proc, f"scontrol show job {job_id}")
    records = [parse_scontrol_line(line) for line in proc.stdout.splitlines() if line.strip()]
    records = [r for r in records if r.get("JobId")]
    return sorted(records, key=lambda r: int(r.get("HetJobOffset") or 0))


# -- sacct ---------------------------------------------------------------------------------------------------------

SACCT_FIELDS = (
    "JobID", "JobName", "State", "ExitCode", "NodeList", "Start", "End", "Submit", "MaxRSS", "TotalCPU", "AllocTRES",
    "WorkDir",  # last: the only free text that may hold a "|"
)  # fmt: skip


def accounting_rows(job_ids: Sequence[str], allocations_only: bool = False) -> Optional[List[Dict[str, str]]]:
    """sacct's records for ``job_ids``, *including* earlier attempts of requeued jobs (``--duplicates``),
    oldest first. None when this cluster keeps no accounting."""
    if not job_ids:
        return []
    cmd = ["sacct", "--parsable2", "--noheader", "--duplicates", "-o", ",".join(SACCT_FIELDS), "-j", ",".join(job_ids)]
    if allocations_only:
        cmd.insert(1, "--allocations")
    proc = run(cmd)
    if proc.returncode != 0:
        text = (proc.stderr + proc.stdout).lower()
        if "accounting storage is disabled" in text or "slurmdbd" in text or "connection refused" in text:
            return None
        check_result(proc, "sacct")
    rows = []
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        values = line.split("|", len(SACCT_FIELDS) - 1)
        values += [""] * (len(SACCT_FIELDS) - len(values))
        rows.append(dict(zip(SACCT_FIELDS, values)))
    return rows


@dataclass
class JobIdParts:
    """``12+1.0`` -> job 12, component 1, step ``0``; ``12.batch`` -> job 12, component 0, step ``batch``."""

    job: str
    component: Optional[int]
    step: Optional[str]


def split_job_id(raw: str) -> JobIdParts:
    head, _, step = raw.partition(".")
    job, plus, comp = head.partition("+")
    return JobIdParts(job, int(comp) if plus and comp.isdigit() else None, step or None)


# -- squeue --------------------------------------------------------------------------------------------------------


def queue_states(job_ids: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """State and work dir of each job in ``job_ids`` the controller still holds, by job id (the leader's row
    for a het job)."""
    if not job_ids:
        return {}
    proc = run(["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%T|%r|%Z"])
    out: Dict[str, Dict[str, str]] = {}
    if proc.returncode != 0:
        if "Invalid job id" in proc.stderr:
            return out
        check_result(proc, "squeue")
    for line in proc.stdout.splitlines():
        parts = line.strip().split("|", 3)
        if len(parts) < 4:
            continue
        ids = split_job_id(parts[0])
        if ids.component not in (None, 0):
            continue
        out[ids.job] = {"State": parts[1], "Reason": parts[2], "WorkDir": parts[3]}
    return out


# -- sinfo ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    name: str
    cpus: int
    memMB: int
    gpus: int
    features: FrozenSet[str] = field(default_factory=frozenset)
    state: str = ""


@dataclass
class Partition:
    name: str
    default: bool
    nodes: List[Node] = field(default_factory=list)
    max_minutes: Optional[int] = None  # the partition's MaxTime; None: no limit


_TIME = re.compile(r"^(?:(?P<d>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?$")


def time_minutes(text: Optional[str]) -> Optional[int]:
    """Minutes in a Slurm time limit (``30``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``), rounded up;
    None for no limit (``infinite``, ``UNLIMITED``, empty) or text that is not a time."""
    m = _TIME.match((text or "").strip())
    if not m:
        return None
    a = int(m.group("a"))  # the pattern always has the first number
    days, b, c = (int(x) if x else None for x in m.group("d", "b", "c"))
    if days is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
        seconds = days * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    elif c is not None:  # HH:MM:SS
        seconds = a * 3600 + (b or 0) * 60 + c
    elif b is not None:  # MM:SS
        seconds = a * 60 + b
    else:  # minutes
        seconds = a * 60
    return -(-seconds // 60)


def parse_gpus(gres: str) -> int:
    """GPUs in an sinfo ``%G`` value such as ``gpu:2``, ``gpu:a100:4(S:0-1)`` or ``(null)``."""
    total = 0
    for item in re.split(r",(?![^()]*\))", gres or ""):
        item = re.sub(r"\(.*?\)", "", item).strip()
        if not item.startswith("gpu"):
            continue
        last = item.split(":")[-1]
        if last.isdigit():
            total += int(last)
        elif item in ("gpu",):
            total += 1
    return total


def _int(raw: str) -> int:
    m = re.match(r"\d+", raw.strip())
    return int(m.group()) if m else 0


def partitions() -> Dict[str, Partition]:
    """Every partition with its nodes, from one ``sinfo`` call."""
    out = check_result(run(["sinfo", "-h", "-N", "-o", "%N|%c|%m|%G|%P|%t|%f|%l"]), "sinfo")
    parts: Dict[str, Partition] = {}
    for line in out.splitlines():
        cols = line.strip().split("|")
        if len(cols) < 7:
            continue
        name, cpus, mem, gres, part, state, feats = cols[:7]
        default = part.endswith("*")
        part = part.rstrip("*")
        features = frozenset(f for f in feats.split(",") if f and f != "(null)")
        node = Node(name, _int(cpus), _int(mem), parse_gpus(gres), features, state)
        p = parts.setdefault(part, Partition(part, default, max_minutes=time_minutes(cols[7] if len(cols) > 7 else "")))
        p.default = p.default or default
        if all(n.name != name for n in p.nodes):
            p.nodes.append(node)
    return parts
