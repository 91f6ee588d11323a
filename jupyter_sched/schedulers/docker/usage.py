"""Usage of docker replicas from the engine's stats API: one streaming connection per running container.

Each watched container gets one ``GET /containers/{id}/stats?stream=true`` on a daemon thread; the
engine pushes a record about every second. The engine does not end that stream when the container
stops (it keeps sending zeroed records), so a record with docker's zero ``read`` time ends it and the
connection is closed then. The request is made through the SDK client's own HTTP session (``api.get``)
rather than ``api.stats``, because the SDK's stats generator gives no way to close its response.

* memory: ``usage`` minus inactive page cache (what ``docker stats`` shows); the peak is the highest
  value sampled; the limit is the container's ``HostConfig.Memory`` (none when 0).
* CPU: ``cpu_usage.total_usage`` (ns) as seconds; % of one core over the last two records.

When a stream ends, the container's totals go to a small file named after the container in the state
directory, so ``describe`` shows them (and the out-of-memory message its peak) from any process.

An out-of-memory kill means the container's memory reached its limit, but the engine samples once a
second, so a container that grows fast is killed between two samples: its highest sample can be far below
the limit (11.6 MiB for a 64 MiB kill). :func:`oom_peak` quotes a sampled peak only when it reached
:data:`OOM_PEAK_SEEN` of the limit; below that the message says the peak is unknown.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from jupyter_sched.schedulers.docker.record.state import ReplicaView, parse_time
from jupyter_sched.specs.status.usage import UsageSample, UsageTotals

TOTALS_DIR = "_docker_usage"
OOM_PEAK_SEEN = 0.9
"""The fraction of the limit a sample must have reached for it to stand for the peak of a killed container
(the working set leaves out inactive page cache, so at the kill it is a little under the limit)."""
_KEEP_ENDED = 256  # ended watches kept in memory (their totals are on disk too)


def _working_set(mem: Dict[str, Any]) -> int:
    stats = mem.get("stats") or {}
    inactive = stats.get("total_inactive_file", stats.get("inactive_file", 0)) or 0
    usage = int(mem.get("usage") or 0)
    return max(0, usage - int(inactive)) if inactive < usage else usage


@dataclass
class _Watch:
    container_id: str
    name: str
    role: str
    replica: int
    limit: Optional[int]
    started: float
    peak: int = 0
    cpu_seconds: float = 0.0
    last_read: Optional[float] = None
    latest: Optional[UsageSample] = None
    ended: bool = False


class DockerUsage:
    """The stats watchers of one DockerScheduler."""

    def __init__(self, api_fn: Callable[[], Any], totals_dir: str) -> None:
        self._api_fn = api_fn
        self._totals_dir = totals_dir
        self._watches: Dict[str, _Watch] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    # -- watching ------------------------------------------------------------------------------------------
    def watch(self, info: Dict[str, Any], role: str, replica: int) -> None:
        """Starts streaming stats of the container ``info`` (an inspect result) unless it is watched."""
        cid = info["Id"]
        with self._lock:
            if cid in self._watches and not self._watches[cid].ended:
                return
            limit = int((info.get("HostConfig") or {}).get("Memory") or 0) or None
            started = parse_time((info.get("State") or {}).get("StartedAt")) or time.time()
            watch = _Watch(cid, (info.get("Name") or "").lstrip("/"), role, replica, limit, started)
            self._watches[cid] = watch
            ended = [c for c, w in self._watches.items() if w.ended]
            for old in ended[: max(0, len(ended) - _KEEP_ENDED)]:
                del self._watches[old]
        threading.Thread(target=self._stream, args=(watch,), name=f"jsched-stats-{watch.name}", daemon=True).start()

    def streams(self) -> int:
        """How many stats connections are open now."""
        with self._lock:
            return sum(1 for w in self._watches.values() if not w.ended)

    def _stream(self, watch: _Watch) -> None:
        api = self._api_fn()
        url = f"{api.base_url}/v{api.api_version}/containers/{watch.container_id}/stats"
        response = None
        try:
            response = api.get(url, params={"stream": "true"}, stream=True, timeout=None)
            if response.status_code != 200:
                return
            for line in response.iter_lines():
                if not line:
                    continue
                record = json.loads(line)
                if not self._update(watch, record):
                    break
        except Exception:  # noqa: BLE001 - a lost stream ends the watch; the next usage() starts another
            pass
        finally:
            if response is not None:
                response.close()
            with self._changed:
                watch.ended = True
                self._changed.notify_all()
            if watch.latest is not None:
                self._save_totals(watch)

    def _update(self, watch: _Watch, record: Dict[str, Any]) -> bool:
        """Takes one stats record; False when it says the container has ended."""
        read = parse_time(record.get("read"))
        mem = record.get("memory_stats") or {}
        if read is None or not mem:
            return False
        rss = _working_set(mem)
        cpu = int(((record.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage") or 0) / 1e9
        with self._changed:
            percent = 0.0
            if watch.last_read is not None and read > watch.last_read:
                percent = max(0.0, cpu - watch.cpu_seconds) / (read - watch.last_read) * 100.0
            watch.peak = max(watch.peak, rss)
            watch.cpu_seconds = max(watch.cpu_seconds, cpu)
            watch.last_read = read
            watch.latest = UsageSample(
                role=watch.role,
                replica=watch.replica,
                cpu_percent=percent,
                cpu_seconds=watch.cpu_seconds,
                rss_bytes=rss,
                peak_rss_bytes=watch.peak,
                mem_limit_bytes=watch.limit,
                wall_seconds=max(0.0, read - watch.started),
                timestamp=read,
            )
            self._changed.notify_all()
        return True

    def latest(self, container_ids: List[str], wait: float = 2.0) -> Dict[str, UsageSample]:
        """The latest sample of each container; waits up to ``wait`` s for a first one (a new stream
        answers at once)."""
        deadline = time.monotonic() + wait
        with self._changed:
            while True:
                pending = [c for c in container_ids if c in self._watches and self._watches[c].latest is None
                           and not self._watches[c].ended]
                left = deadline - time.monotonic()
                if not pending or left <= 0:
                    break
                self._changed.wait(left)
            found = {c: self._watches[c].latest for c in container_ids if c in self._watches}
            return {c: sample for c, sample in found.items() if sample is not None}

    def samples(self, infos: List[Dict[str, Any]]) -> List[UsageSample]:
        """``DockerScheduler.usage`` from the replicas' inspects: a running replica's latest record (its first
        ask starts its stream), an ended one's totals if a stream kept them; ordered by role, then replica."""
        views = sorted(
            ((ReplicaView.from_inspect(i), i) for i in infos), key=lambda vi: (vi[0].role_index, vi[0].replica_id)
        )
        running = [i["Id"] for v, i in views if v.word in ("running", "restarting", "paused")]
        for v, i in views:
            if i["Id"] in running:
                self.watch(i, v.role, v.replica_id)
        live = self.latest(running)
        out = []
        for v, i in views:
            if i["Id"] in live:
                out.append(live[i["Id"]])
            elif v.finished is not None:
                totals = self.totals(v.name, v.started, v.finished)
                if totals is not None:
                    out.append(UsageSample(
                        v.role, v.replica_id, 0.0, totals.cpu_seconds, 0, totals.peak_rss_bytes,
                        totals.mem_limit_bytes, wall_seconds=totals.wall_seconds, timestamp=v.finished,
                        running=False,
                    ))
        return out

    # -- totals kept after the end -----------------------------------------------------------------------
    def _path(self, name: str) -> str:
        return os.path.join(self._totals_dir, f"{name}.json")

    def _save_totals(self, watch: _Watch) -> None:
        data = _totals_json(watch)
        try:
            os.makedirs(self._totals_dir, exist_ok=True)
            tmp = f"{self._path(watch.name)}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                json.dump(data, f)
            os.replace(tmp, self._path(watch.name))
        except OSError:
            pass

    def totals(self, name: str, started: Optional[float], finished: Optional[float]) -> Optional[UsageTotals]:
        """What an ended container used, if a stats stream watched it: this process's watch (its stream
        may not have seen the end yet), else the file a watch in any process left."""
        with self._lock:
            watch = next((w for w in self._watches.values() if w.name == name and w.latest is not None), None)
            data = _totals_json(watch) if watch is not None else None
        if data is None:
            try:
                with open(self._path(name)) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                return None
        data["wall_seconds"] = max(0.0, (finished or 0.0) - (started or finished or 0.0))
        return UsageTotals.from_json(data)

    def forget(self, name: str) -> None:
        try:
            os.remove(self._path(name))
        except OSError:
            pass


def oom_peak(peak: Optional[int], limit: Optional[int]) -> Optional[int]:
    """The peak to quote for a container killed for memory: the highest sample if it reached
    :data:`OOM_PEAK_SEEN` of the limit, else None (the samples missed the climb: the peak is unknown)."""
    if not peak or not limit or peak < OOM_PEAK_SEEN * limit:
        return None
    return peak


def _totals_json(watch: _Watch) -> Dict[str, Any]:
    return {"peak_rss_bytes": watch.peak, "cpu_seconds": watch.cpu_seconds, "mem_limit_bytes": watch.limit}
