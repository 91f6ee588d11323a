"""What the server sends besides the rows: a page of the jobs list, the jobs ended since a cursor, and a job's
detail.

Dataclasses for their shapes only (the server fills them), so :mod:`.schema` writes one JSON Schema and
one set of TypeScript types for everything the JupyterLab extension reads. A job's detail is its
:class:`~.rows.JobRow` with :class:`DetailExtra`'s fields over it (its status per replica, and each
replica's usage instead of the summed usage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

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
class EndedPage:
    """``GET jobs/ended?since=CURSOR``: every job the server saw end after that cursor, oldest first, each
    once, with its row as the listing that saw it end made it (so a job that started and ended between two
    polls of the list is here too)."""

    cursor: str
    """Give it as ``?since=`` next time (it only grows, across server restarts too). Without ``since`` the
    answer is the cursor of now and no jobs."""
    jobs: List[JobRow]
    truncated: bool
    """Some jobs that ended after ``since`` were forgotten (the server keeps the last ends only)."""


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
class TrackerArtifactJson:
    """An artifact a run added with TorchX's tracker API (the last one added under its name)."""

    name: str
    path: str
    metadata: Optional[Dict[str, Any]]


@dataclass
class TrackerRunJson:
    """What one run id told TorchX's tracker API (``app_run_from_env()``), bounded for a live view
    (``frontend.jobs.tracked.tracker_json``): metadata values as the job stored them (any JSON), masked."""

    run_id: str
    metadata: Dict[str, Any]
    more_metadata: int
    """Keys left out (past the first 50)."""
    artifacts: List[TrackerArtifactJson]
    more_artifacts: int
    """Artifacts left out (past the first 50)."""


@dataclass
class DetailExtra:
    """``GET jobs/<handle>``: the job's row with these fields over it."""

    status: StatusJson
    usage: List[UsageSampleJson]
    tracker: List[TrackerRunJson]
    """What the job told TorchX's tracker API, its own run first (none: empty)."""


@dataclass
class MetricPoint:
    """One value of a metric series: its step (None if logged without), UNIX time, and value (a number, or
    ``"NaN"``, ``"Infinity"``, ``"-Infinity"``)."""

    step: Optional[int]
    t: float
    value: Union[float, str]


@dataclass
class MetricStats:
    """A metric's summary on one replica (its summary file): count, last, min and max with their steps, goal."""

    count: int
    last: Union[float, str, None]
    last_step: Optional[int]
    min: Union[float, str, None]
    min_step: Optional[int]
    max: Union[float, str, None]
    max_step: Optional[int]
    goal: Optional[str]


@dataclass
class MetricsReplica:
    """A replica that has metrics."""

    role: str
    replica: int


@dataclass
class JobMetricsAnswer:
    """``GET jobs/<handle>/metrics``: one replica's series (``?role=&k=``, the first role's replica 0 by
    default), each downsampled to at most ``max_points`` keeping each bucket's min and max; with ``?since=``
    only the records after that cursor."""

    handle: str
    role: Optional[str]
    """None while the job has no replica yet."""
    replica: int
    cursor: str
    """Opaque: give it as ``?since=`` to get only the records written after this answer."""
    series: Dict[str, List[MetricPoint]]
    summary: Dict[str, MetricStats]
    """The replica's summary per key (all it logged, not only since the cursor)."""
    skipped: int
    """Lines read by this answer that were not valid records (torn, corrupt)."""
    points: int
    """Points read by this answer before downsampling."""
    max_points: int
    replicas: List[MetricsReplica]
    """Every replica of the job that has a metrics file."""
    state: str
