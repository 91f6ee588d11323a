"""Metrics from inside a job: ``track.log({"loss": 0.31})`` in a training loop, charted where you watch it.

Standard library only, and cheap to import (no IPython, no pandas, no NumPy): code in a replica imports it
at the top of a training script. Every call is safe anywhere:

* **Inside a job** (a replica launched by jupyter_sched on any backend) records go to the replica's files in
  the app's metrics directory (local backends, Slurm's shared ``job_dir``), or, where no directory is shared
  (a container, a TorchX backend), as marked lines on stderr. See ``docs/metrics.md``.
* **Outside a job** (the notebook, a plain ``python train.py``) every call is a no-op: it writes nothing,
  checks nothing and never raises; :func:`current` says ``is_noop``.

The calls (MLflow's names and argument order for ``log_metric``/``log_metrics``; Ray's ``report``)::

    from jupyter_sched import track
    track.define_metric("loss", goal="min")
    for epoch in range(10):
        track.log({"loss": loss, "acc": acc})        # step 0, 1, 2, ... (or step=N)
        if track.should_stop():                      # a sweep's early stopping asked this replica to end
            break
    track.summary["best_acc"] = best

Keys are ``[A-Za-z0-9_./-]``, 1-128 characters (a ValueError names a bad one); values are numbers (int,
float, bool, NumPy and torch scalars; anything else is a TypeError naming the key and type); NaN and the
infinities are kept (as ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` in strict JSON). A call only queues its
record: a thread writes at most once a second, at exit, and on :func:`flush`.

Modules: :mod:`.layout` (the variables, directory and file names every side uses), :mod:`.values` (keys
and values), :mod:`.recorder` (the queue and its writer thread), :mod:`.torchx_tracker` (the backend of
TorchX's tracker API, registered as the ``jupyter_sched`` ``torchx.tracker`` entry point).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterator, Mapping, Optional

from jupyter_sched.track.layout import APP_ID_ENV, JOB_ID_ENV, METRICS_DIR_ENV, REPLICA_ENV, ROLE_ENV
from jupyter_sched.track.recorder import Recorder
from jupyter_sched.track.values import SummaryValue

__all__ = [
    "Run", "current", "define_metric", "flush", "log", "log_metric", "log_metrics", "report", "should_stop",
    "summary",
]  # fmt: skip


@dataclass(frozen=True)
class Run:
    """Who is logging: the app's handle, role and replica, where records go (``metrics_dir``; None: stderr
    lines), and ``is_noop`` when this process is not a job's replica (every call then does nothing)."""

    job_id: Optional[str]
    app_id: Optional[str]
    role: Optional[str]
    replica: Optional[int]
    metrics_dir: Optional[str]
    is_noop: bool


def run_from_env(env: Mapping[str, str]) -> Run:
    """The :class:`Run` the variables in ``env`` describe (see :mod:`.layout`)."""
    job_id = env.get(JOB_ID_ENV) or None
    app_id = env.get(APP_ID_ENV) or None
    metrics_dir = env.get(METRICS_DIR_ENV) or None
    if job_id is None and app_id is None and metrics_dir is None:
        return Run(None, None, None, None, None, True)
    role = env.get(ROLE_ENV, "")
    raw = env.get(REPLICA_ENV) or env.get("RANK") or "0"
    replica = int(raw) if raw.isdigit() else 0
    return Run(job_id or app_id, app_id, role, replica, metrics_dir, False)


_lock = threading.Lock()
_run: Optional[Run] = None
_recorder: Optional[Recorder] = None


def current() -> Run:
    """This process's :class:`Run` (read from the environment once)."""
    global _run
    run = _run
    if run is None:
        run = _run = run_from_env(os.environ)
    return run


def _get() -> Optional[Recorder]:
    """The process's recorder, made at the first call in a job; None outside one."""
    global _recorder
    recorder = _recorder
    if recorder is not None:
        return recorder
    run = current()
    if run.is_noop:
        return None
    with _lock:
        if _recorder is None:
            _recorder = Recorder(run.job_id or "", run.role or "", run.replica or 0, run.metrics_dir)
        return _recorder


def _after_fork() -> None:
    """A forked child starts its own writer (the parent's thread is not in it), reading its variables again."""
    global _recorder, _run, _lock
    _recorder, _run, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def log(metrics: Mapping[str, Any], step: Optional[int] = None) -> None:
    """Records ``metrics`` (key -> number) at ``step``: the next step (0, 1, 2, ...) when None, else the
    given integer (and the next call's default follows it)."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.log(metrics, step)


def log_metrics(metrics: Mapping[str, Any], step: Optional[int] = None) -> None:
    """MLflow's ``log_metrics(metrics, step=None)``: :func:`log`."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.log(metrics, step)


def log_metric(key: str, value: Any, step: Optional[int] = None, timestamp: Optional[int] = None) -> None:
    """MLflow's ``log_metric(key, value, step=None, timestamp=None)``: one key; ``timestamp`` in
    milliseconds since the epoch, as MLflow's (default: now). A call without ``step`` is a new step, as
    :func:`log`'s (MLflow would use step 0)."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.log({key: value}, step, None if timestamp is None else float(timestamp) / 1000.0)


def report(metrics: Mapping[str, Any]) -> None:
    """Ray's ``report(metrics)``: :func:`log` at the next step."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.log(metrics, None)


def define_metric(key: str, goal: str = "min") -> None:
    """Says whether lower (``"min"``) or higher (``"max"``) values of ``key`` are better: the summary, the
    charts' best value and a sweep's ranking use it."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.define(key, goal)


def flush() -> None:
    """Writes every record logged so far now (otherwise: within a second, and at exit)."""
    recorder = _recorder or _get()
    if recorder is not None:
        recorder.flush()


def should_stop() -> bool:
    """True once whoever watches the job (a sweep's early stopping) has asked this replica to stop: a stop
    file for it exists in the metrics directory (``<role>.<replica>.stop``, or ``stop`` for every replica).
    The replica may then save and return; it is cancelled after a grace period otherwise. Always False
    outside a job and where no metrics directory is shared."""
    recorder = _recorder or _get()
    return recorder.should_stop() if recorder is not None else False


class Summary:
    """``track.summary[key] = value``: a replica's final values (a number, text or None) beside the metrics,
    e.g. the best accuracy or the path of a checkpoint. Reading gives what this process set."""

    def __setitem__(self, key: str, value: Any) -> None:
        recorder = _recorder or _get()
        if recorder is not None:
            recorder.set_summary(key, value)

    def update(self, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            self[key] = value

    def _values(self) -> Dict[str, SummaryValue]:
        recorder = _recorder or _get()
        if recorder is None:
            return {}
        recorder.flush()
        return dict(recorder.user_summary)

    def __getitem__(self, key: str) -> SummaryValue:
        return self._values()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())

    def __repr__(self) -> str:
        return f"track.summary({self._values()!r})"


summary = Summary()
