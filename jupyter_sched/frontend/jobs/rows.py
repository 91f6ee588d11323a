"""A job and a sweep as every front end shows them: typed rows, each derived from an ``AppStatus`` once.

:class:`JobRow` is one app: what the listing said (handle, name, scheduler, session, state) and what its
status adds (when its first replica started and its last one ended, the span between, how many replicas
run, why it ended, what it used). :func:`job_row` is the one function that makes it; the notebook's list
pane, ``%sched_list``'s text, ``jupyter-sched list`` and the server's rows all read these fields and
derive none of them again. :class:`SweepRow` is a sweep's runs as one line (see :mod:`.order` for how
runs are grouped and :func:`sweep_row` for a sweep's state).

Every text a row carries that a user or a job wrote (its name, why it ended) goes through the one masking
rule when the row is made, so no front end has to remember to.

The rows are also what the server sends: :mod:`.schema` writes their JSON Schema and the TypeScript
types of the JupyterLab extension from these dataclasses, so a field added here is a field there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence, Union

from jupyter_sched.frontend.jobs.reasons import StderrOf, app_reason
from jupyter_sched.frontend.jobs.sweep_names import sweep_label, sweep_of
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus
from jupyter_sched.specs.output.masking import mask_out

ENDED_STATES = ("FAILED", "CANCELLED", "UNKNOWN")
"""A sweep whose runs have all ended takes the first of these any run has, else SUCCEEDED."""


@dataclass
class UsageSummary:
    """What an app uses, summed over its replicas: CPU % (of one core) and resident memory now while it
    runs (None once it has ended), CPU time, and the largest replica's peak memory."""

    cpu_percent: Optional[float]
    cpu_seconds: Optional[float]
    rss_bytes: Optional[int]
    peak_rss_bytes: Optional[int]


@dataclass
class MetricLast:
    """A metric's last value as the jobs list shows it (what ``jupyter_sched.track`` logged on the first
    role's replica 0), read from its summary file. Numbers, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``
    (strict JSON)."""

    key: str
    last: Union[float, str, None]
    step: Optional[int]
    """The step of the last value."""
    best: Union[float, str, None]
    """The smallest value if its goal is ``min``, the largest if ``max`` (NaN never), else None."""
    goal: Optional[str]
    """``min``, ``max`` or None (``track.define_metric``)."""


MAX_ROW_METRICS = 8
"""How many metrics a row carries: those with a goal first, then the others, each group alphabetical."""


@dataclass
class JobRow:
    """One app, as the jobs list shows it."""

    handle: str
    app_id: str
    name: str
    """The app's name (the launch record's, else the scheduler's), masked."""
    label: str
    """How the row is named under its sweep: ``run 007`` for a sweep's run, else its name."""
    scheduler: str
    session: str
    state: str
    """An ``AppState`` name: ``RUNNING``, ``FAILED``..."""
    running: bool
    """Not ended (every state but SUCCEEDED, FAILED, CANCELLED)."""
    started: Optional[float]
    """When its first replica started (UNIX time), if any has."""
    ended: Optional[float]
    """When its last replica ended, once the app has ended."""
    span: Optional[float]
    """``ended - started`` once both are known (a running app's age is the renderer's ``now - started``)."""
    seen: float
    """When it was launched (the launch record's time), else first listed: orders apps not started yet."""
    sweep: Optional[str]
    """The sweep it is a run of (:func:`~jupyter_sched.frontend.jobs.sweep_names.sweep_of`), else None."""
    sweep_label: Optional[str]
    """That sweep's name as a person gave it (``train-sweep``), else None."""
    notebook: Optional[str]
    """The notebook that launched it (as the launch record says), else None."""
    reason: str
    """How it ended, in one line (``train FAILED: trainer/1 exit code 1``); "" while it runs."""
    replicas: int
    replicas_running: int
    usage: Optional[UsageSummary]
    metrics: Optional[List[MetricLast]]
    """At most :data:`MAX_ROW_METRICS` last values of the first role's replica 0 (those with a goal first,
    then alphabetical); None when it logged none (or its scheduler keeps no metrics files)."""
    kind: Literal["job"] = "job"

    def to_json(self) -> Dict[str, Any]:
        return to_json(self)


@dataclass
class SweepRow:
    """A sweep's runs (two or more) as one line, at the place of its first run in the order."""

    handle: str
    """``sweep:<sweep>``: a key no app handle can be."""
    sweep: str
    name: str
    label: str
    """The sweep's name as a person gave it: ``train-sweep``."""
    sweep_label: str
    scheduler: str
    """Its runs' schedulers, comma-separated."""
    session: str
    state: str
    """RUNNING while any run runs, else the worst end among its runs (see :data:`ENDED_STATES`)."""
    running: bool
    started: Optional[float]
    ended: Optional[float]
    span: Optional[float]
    seen: float
    notebook: Optional[str]
    """The notebook that launched its runs, if one launched them all."""
    counts: Dict[str, int]
    """Runs per state name."""
    total: int
    runs_running: int
    failed_run: Optional[str]
    """The handle of its one FAILED run, which a notification's Open shows; None when no run or several runs
    failed (Open shows the sweep's runs: no one of them is the run to look at)."""
    runs: List[JobRow]
    """Its first runs, in order (the rest are counted in ``more``)."""
    more: int
    kind: Literal["sweep"] = "sweep"

    def to_json(self) -> Dict[str, Any]:
        return to_json(self)


def to_json(obj: Any) -> Any:
    """A row (or anything made of rows, lists and dicts) as plain JSON values, field by field."""
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: to_json(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, list):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


# -- what a status says ---------------------------------------------------------------------------------
def _replicas(status: Optional[AppStatus]) -> List[ReplicaStatus]:
    return [r for role in (status.roles if status is not None else []) for r in role.replicas]


def times(status: Optional[AppStatus]) -> "tuple[Optional[float], Optional[float]]":
    """(the first replica's start, the last replica's end once the app has ended)."""
    reps = _replicas(status)
    starts = [r.started for r in reps if r.started is not None]
    ends = [r.finished for r in reps if r.finished is not None]
    ended = status is not None and status.is_terminal()
    return (min(starts) if starts else None, max(ends) if ended and ends else None)


def app_span(status: Optional[AppStatus], now: float) -> Optional[float]:
    """Seconds from the first replica's start to the last replica's end, or to ``now`` while the app runs
    (or while an ended app has a replica with no end recorded); None before any replica started."""
    started, ended = times(status)
    if started is None or status is None:
        return None
    complete = all(r.finished is not None for r in _replicas(status))
    return (ended if ended is not None and complete else now) - started


def usage_totals(status: Optional[AppStatus]) -> Optional[UsageSummary]:
    """What an app used, summed over the replicas that report it (peak memory is the largest replica's)."""
    reps = [r for r in _replicas(status) if r.usage]
    if not reps:
        return None
    return UsageSummary(
        cpu_percent=None,
        cpu_seconds=round(sum(r.usage.cpu_seconds for r in reps if r.usage), 3),
        rss_bytes=None,
        peak_rss_bytes=max(r.usage.peak_rss_bytes for r in reps if r.usage),
    )


def usage_now(samples: Iterable[Any]) -> Optional[UsageSummary]:
    """Running replicas' usage samples summed: CPU % and resident memory now, CPU time, the largest peak."""
    samples = list(samples)
    if not samples:
        return None
    return UsageSummary(
        cpu_percent=round(sum(s.cpu_percent for s in samples), 1),
        cpu_seconds=round(sum(s.cpu_seconds for s in samples), 3),
        rss_bytes=sum(s.rss_bytes for s in samples),
        peak_rss_bytes=max(s.peak_rss_bytes for s in samples),
    )


def run_label(name: str) -> str:
    """``run 007`` for a sweep's run ``train-sweep-b3k2x9q0d1xyz-007``, else the name."""
    sweep = sweep_of(name)
    return f"run {name[len(sweep) + 1 :]}" if sweep else name


def job_row(
    handle: str,
    status: Optional[AppStatus],
    *,
    app_id: str,
    name: str,
    scheduler: str,
    session: str,
    listed_state: AppState,
    seen: float,
    notebook: Optional[str] = None,
    kernel_pid: Optional[int] = None,
    stderr_of: Optional[StderrOf] = None,
    metrics: Optional[List[MetricLast]] = None,
) -> JobRow:
    """The one derivation of a job's row: the listing's facts, and what ``status`` (None: not known; then
    the listing's state) says. Its reason is :func:`~jupyter_sched.frontend.jobs.reasons.app_reason`'s
    (``stderr_of``: a failed replica's last stderr lines, when its status does not say why; ``kernel_pid``:
    the kernel that launched it; ``metrics``: its last values, read by the caller from the summary files
    (:class:`~.metrics.LastValues`), at most :data:`MAX_ROW_METRICS` kept). Names and reasons are masked here."""
    name = str(mask_out(name))
    state = status.state if status is not None else listed_state
    started, ended = times(status)
    reps = _replicas(status)
    sweep = sweep_of(name)
    return JobRow(
        handle=handle,
        app_id=app_id,
        name=name,
        label=run_label(name),
        scheduler=scheduler,
        session=session,
        state=state.name,
        running=not state.is_terminal,
        started=started,
        ended=ended,
        span=round(ended - started, 3) if started is not None and ended is not None else None,
        seen=seen,
        sweep=sweep,
        sweep_label=sweep_label(sweep) if sweep else None,
        notebook=notebook,
        reason=app_reason(name, status, stderr_of, kernel_pid),
        replicas=len(reps),
        replicas_running=sum(1 for r in reps if r.state == AppState.RUNNING),
        usage=usage_totals(status),
        metrics=list(metrics[:MAX_ROW_METRICS]) if metrics else None,
    )


def sweep_state(states: Sequence[str]) -> str:
    """RUNNING while any run runs; else FAILED, CANCELLED or UNKNOWN if any run ended so; else SUCCEEDED."""
    if any(not AppState[s].is_terminal for s in states):
        return "RUNNING"
    return next((s for s in ENDED_STATES if s in states), "SUCCEEDED")


def sweep_row(name: str, runs: List[JobRow], runs_shown: int) -> SweepRow:
    """A sweep of ``runs`` (in order): its counts, its state, its first start and (once every run has
    ended) its last end, and the first ``runs_shown`` runs."""
    counts = Counter(r.state for r in runs)
    running = sum(1 for r in runs if r.running)
    starts = [r.started for r in runs if r.started is not None]
    ends = [r.ended for r in runs if r.ended is not None]
    notebooks = {r.notebook for r in runs}
    started = min(starts) if starts else None
    ended = max(ends) if ends and not running else None
    label = sweep_label(name)
    failed = [r.handle for r in runs if r.state == AppState.FAILED.name]
    return SweepRow(
        handle=f"sweep:{name}",
        sweep=name,
        name=name,
        label=label,
        sweep_label=label,
        scheduler=", ".join(sorted({r.scheduler for r in runs})),
        session=", ".join(sorted({r.session for r in runs})),
        state=sweep_state(list(counts)),
        running=bool(running),
        started=started,
        ended=ended,
        span=round(ended - started, 3) if started is not None and ended is not None else None,
        seen=min(r.seen for r in runs),
        notebook=notebooks.pop() if len(notebooks) == 1 else None,
        counts=dict(counts),
        total=len(runs),
        runs_running=running,
        failed_run=failed[0] if len(failed) == 1 else None,
        runs=runs[:runs_shown],
        more=max(0, len(runs) - runs_shown),
    )


__all__ = [
    "ENDED_STATES", "MAX_ROW_METRICS", "JobRow", "MetricLast", "SweepRow", "UsageSummary", "app_span", "job_row",
    "run_label", "sweep_row", "sweep_state", "times", "to_json", "usage_now", "usage_totals",
]  # fmt: skip
