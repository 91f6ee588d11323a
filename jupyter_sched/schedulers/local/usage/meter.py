"""The local backend's usage bookkeeping, in one place so the scheduler needs only a few calls to it.

It starts sampling a replica when it starts, turns the last sample into totals when it ends (kept in
the replica's record under ``usage``, so ``describe`` shows them from any process, after a kernel
restart too), and answers ``usage(app_id)``: from the sampler for apps this process owns, from the
owner's ``usage.json`` (or its own sampling) for apps of another process, from the record for replicas
that ended.
"""

from __future__ import annotations

import threading
from typing import Dict, List, Optional, Sequence, Tuple

from jupyter_sched.schedulers.local.record.state import AppRecord, ReplicaRecord
from jupyter_sched.schedulers.local.usage import limit as local_limit
from jupyter_sched.schedulers.local.usage.sampler import (
    DEFAULT_INTERVAL,
    ForeignProbe,
    UsageSampler,
    merge_peak,
    read_usage_file,
    write_usage_file,
)
from jupyter_sched.specs.status.usage import UsageSample, UsageTotals


class LocalMeter:
    """One per LocalScheduler."""

    def __init__(self, interval: float = DEFAULT_INTERVAL) -> None:
        self.sampler = UsageSampler(interval, on_tick=self._write_files)
        self._owned: Dict[str, str] = {}  # running app id -> app dir
        self.probe = ForeignProbe()
        """Samples replicas of apps another process owns (its readings are kept between calls)."""
        self._lock = threading.Lock()

    def started(self, record: AppRecord, rep: ReplicaRecord, env: Dict[str, str]) -> None:
        """A replica was spawned: note its limit and start sampling it."""
        limit = local_limit.limit_of(env)
        if limit is not None:
            rep.usage = {"mem_limit_bytes": limit, "cgroup": env.get(local_limit.CGROUP_ENV)}
        if rep.pid is None:
            return
        with self._lock:
            self._owned[record.app_id] = record.app_dir
        self.sampler.track(
            (record.app_id, rep.role, rep.replica_id),
            rep.pid,
            rep.started or 0.0,
            limit,
            (lambda: local_limit.cgroup_peak(env)) if env.get(local_limit.CGROUP_ENV) else None,
        )

    def ended(self, record: AppRecord, rep: ReplicaRecord, finished: float) -> None:
        """A replica ended at ``finished`` (its record has the exit code): keep its totals, and say so if
        it failed at its memory limit."""
        final = self.sampler.finish((record.app_id, rep.role, rep.replica_id), finished)
        env = {}
        if rep.usage and rep.usage.get("mem_limit_bytes"):
            env[local_limit.LIMIT_ENV] = str(rep.usage["mem_limit_bytes"])
            if rep.usage.get("cgroup"):
                env[local_limit.CGROUP_ENV] = rep.usage["cgroup"]
        data = dict(rep.usage or {})
        if final is not None:
            data.update(final.totals().to_json())
        message = local_limit.limit_message(env, rep.exit_code, rep.stderr, data.get("peak_rss_bytes"))
        if message:
            rep.msg = "; ".join(m for m in (rep.msg, message) if m)
        local_limit.remove_cgroup(env)
        rep.usage = data
        if all(r.done or r is rep for r in record.replicas):
            with self._lock:
                self._owned.pop(record.app_id, None)

    def usage(self, record: AppRecord, owned: bool) -> List[UsageSample]:
        return self.usage_many([(record, owned)])[0]

    def usage_many(self, records: Sequence[Tuple[AppRecord, bool]]) -> List[List[UsageSample]]:
        """:meth:`usage` of several apps (``(record, owned)`` each), in order. The replicas that must be
        probed (apps owned by another process that wrote no fresh usage file) are probed together, so a
        listing of many running apps waits for a first reading once, not once per app."""
        live: List[List[UsageSample]] = [[] for _ in records]
        known: List[Optional[List[UsageSample]]] = [None for _ in records]
        probe: List[Tuple[int, Tuple[str, int, int, float, Optional[int]]]] = []
        for i, (record, owned) in enumerate(records):
            running = [r for r in record.replicas if not r.done and r.pid]
            if running and owned:
                live[i] = self.sampler.latest(record.app_id)
            elif running:
                known[i] = read_usage_file(record.app_dir, max_age=3 * self.sampler.interval + 1)
                if known[i] is not None and len(known[i] or []) >= len(running):
                    live[i] = known[i] or []
                else:
                    probe += [
                        (i, (r.role, r.replica_id, r.pid, r.started or 0.0, limit_of_record(r)))
                        for r in running
                        if r.pid is not None
                    ]
        if probe:
            samples = self.probe.sample_each([replica for _, replica in probe])
            for i in dict.fromkeys(i for i, _ in probe):
                ours = [s for (j, _), s in zip(probe, samples) if j == i and s is not None]
                live[i] = merge_peak(ours, known[i])
        return [self._per_replica(record, samples) for (record, _), samples in zip(records, live)]

    @staticmethod
    def _per_replica(record: AppRecord, live: List[UsageSample]) -> List[UsageSample]:
        by_key = {(s.role, s.replica): s for s in live}
        out = []
        for rep in record.replicas:
            if rep.done:
                totals = totals_of(rep)
                if totals is not None:
                    out.append(UsageSample(
                        rep.role, rep.replica_id, 0.0, totals.cpu_seconds, 0, totals.peak_rss_bytes,
                        totals.mem_limit_bytes, wall_seconds=totals.wall_seconds,
                        timestamp=rep.finished or 0.0, running=False,
                    ))
            elif (rep.role, rep.replica_id) in by_key:
                out.append(by_key[(rep.role, rep.replica_id)])
        return out

    def _write_files(self) -> None:
        with self._lock:
            owned = dict(self._owned)
        for app_id, app_dir in owned.items():
            samples = self.sampler.latest(app_id)
            try:
                write_usage_file(app_dir, samples)
            except OSError:
                pass


def limit_of_record(rep: ReplicaRecord) -> Optional[int]:
    return (rep.usage or {}).get("mem_limit_bytes")


def totals_of(rep: ReplicaRecord) -> Optional[UsageTotals]:
    """The totals kept for an ended replica (None for records written before usage was kept)."""
    if not rep.usage or "peak_rss_bytes" not in rep.usage:
        return None
    return UsageTotals.from_json(rep.usage)


def limit_request(request, cfg) -> None:  # type: ignore[no-untyped-def]
    """Applies run option ``memory_limit`` to every replica of a PopenRequest (in place), after checking
    the entrypoints it wraps (so a typo still fails before anything starts)."""
    limit = local_limit.parse_limit(cfg.get("memory_limit"))
    if limit is None:
        return
    from jupyter_sched.schedulers.local.processes.spawn import check_entrypoints

    check_entrypoints(request)
    for role, params in request.role_params.items():
        for k, param in enumerate(params):
            param.args = local_limit.wrap_args(param.args, param.launch_env, limit, request.app_id, role, k)


__all__ = ["LocalMeter", "limit_request", "totals_of"]
