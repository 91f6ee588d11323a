"""What the server sends besides the rows: a page of the jobs list, and a job's detail.

Dataclasses for their shapes only (the server fills them), so :mod:`.schema` writes one JSON Schema and
one set of TypeScript types for everything the JupyterLab extension reads. A job's detail is its
:class:`~.rows.JobRow` with :class:`DetailExtra`'s fields over it (its status per replica, and each
replica's usage instead of the summed usage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Union

from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow


@dataclass
class JobPage:
    """``GET jobs``: ``limit`` entries from ``offset``, and what the sidebar shows about them all."""

    jobs: List[Union[JobRow, SweepRow]]
    total: int
    """Entries after the filters (a sweep counts once)."""
    running: int
    """Of those, how many run."""
    offset: int
    limit: int
    notices: List[str]
    sessions: List[str]
    schedulers: List[str]
    generated: float
    """When the listing was made (UNIX time)."""
    apps: int
    """Apps after the filters (each run of a sweep counts)."""
    listed_in: float
    """Seconds the listing took."""
    sweep: Optional[SweepRow]
    """With ``?sweep=``: that sweep's own row (its state, counts and label), so a client that lists one
    sweep's runs reads how the sweep stands instead of counting; else None."""


@dataclass
class GpuJson:
    """One GPU of a replica (``GpuSample.to_json()``)."""

    index: int
    name: str
    utilization_percent: float
    memory_used_bytes: int
    memory_total_bytes: int


@dataclass
class UsageJson:
    """What an ended replica used (``ReplicaStatus.usage``)."""

    peak_rss_bytes: Optional[int]
    """None: unknown."""
    cpu_seconds: float
    wall_seconds: float
    mem_limit_bytes: Optional[int]


@dataclass
class ReplicaJson:
    """One replica in a status."""

    id: int
    state: str
    hostname: str
    exit_code: Optional[int]
    pid: Optional[int]
    started: Optional[float]
    finished: Optional[float]
    num_restarts: int
    msg: Optional[str]
    usage: Optional[UsageJson]


@dataclass
class RoleJson:
    """A role's replicas in a status."""

    role: str
    replicas: List[ReplicaJson]


@dataclass
class StatusJson:
    """``AppStatus.to_json()``, masked."""

    state: str
    num_restarts: int
    msg: Optional[str]
    structured_error_msg: Optional[str]
    ui_url: Optional[str]
    roles: List[RoleJson]


@dataclass
class UsageSampleJson:
    """``UsageSample.to_json()`` and whether the replica still runs."""

    role: str
    replica: int
    cpu_percent: float
    cpu_seconds: float
    rss_bytes: int
    peak_rss_bytes: int
    mem_limit_bytes: Optional[int]
    running: bool
    gpus: Optional[List[GpuJson]] = None
    """Only when the replica has GPUs."""


@dataclass
class DetailExtra:
    """``GET jobs/<handle>``: the job's row with these fields over it."""

    status: StatusJson
    usage: List[UsageSampleJson]
