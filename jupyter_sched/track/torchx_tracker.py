"""TorchX's tracker API, stored beside the metrics: the ``jupyter_sched`` ``torchx.tracker`` backend.

TorchX's runner (and ours) tells a replica which trackers to build: ``TORCHX_TRACKERS`` names them (ours is
appended to the user's list), ``TORCHX_TRACKER_JUPYTER_SCHED_CONFIG`` is our config, and ``TORCHX_JOB_ID``
the run's id (the app handle). Code written for ``torchx.tracker.app_run_from_env()`` then calls
:class:`JupyterSchedTracker`, which keeps what the fsspec reference backend keeps, with its semantics:
``add_metadata`` entries merged in the order they were added, ``add_artifact`` by name (the last one
wins), ``add_source`` as a list of sources.

Where: the config ``auto`` (what the Runner sets) means the replica's metrics directory
(``JUPYTER_SCHED_METRICS_DIR``): each replica appends one JSON line per call to ``<role>.<k>.tracker.jsonl``
there, and reading merges every replica's file. Any other config is a directory to use instead. Without a
directory (a container without the mount), each call is a marked stderr line, ``@@jupyter_sched:tracker
{...}``, which the log followers hide and store in the app's metrics directory
(``frontend.logview.metric_lines``).

TorchX is needed only to load this module as a backend (``TrackerBase``); :func:`read_entries`,
:func:`merged_metadata`, :func:`artifacts_by_name` and :func:`sources_of` read the files without it.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional

from jupyter_sched.track.layout import (
    METRICS_DIR_ENV,
    METRICS_OWNER_ENV,
    REPLICA_ENV,
    ROLE_ENV,
    TRACKER_CONFIG_AUTO,
    TRACKER_MARK,
    TRACKER_SUFFIX,
    hand_over,
    replica_stem,
)

try:
    from torchx.tracker.api import Lineage, TrackerArtifact, TrackerBase, TrackerSource
except ImportError:  # pragma: no cover - without TorchX nothing loads this as a backend
    TrackerBase = object



def plain(value: Any) -> Any:
    """``value`` as strict JSON can hold it: non-finite floats as their strings, tuples as lists; anything
    else JSON cannot hold is a TypeError, as with the fsspec backend's ``json.dump``."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"a {type(value).__name__} cannot be stored as JSON: store text or numbers ({value!r})")


def read_entries(directory: Optional[str]) -> List[Dict[str, Any]]:
    """Every replica's tracker entries in ``directory``, oldest first (by time, then file and line order);
    lines that are not entries are skipped."""
    out: List[Dict[str, Any]] = []
    try:
        names = sorted(n for n in os.listdir(directory or "") if n.endswith(TRACKER_SUFFIX))
    except OSError:
        return out
    for name in names:
        try:
            with open(os.path.join(directory or "", name), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line, parse_constant=lambda c: None)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("run_id"), str) and "kind" in entry:
                out.append(entry)
    out.sort(key=entry_time)
    return out


def entry_time(entry: Mapping[str, Any]) -> float:
    t = entry.get("t")
    return float(t) if isinstance(t, (int, float)) else 0.0


def merged_metadata(entries: Iterable[Mapping[str, Any]], run_id: str) -> Dict[str, Any]:
    """The run's metadata: every ``add_metadata`` merged in order (a later value of a key wins)."""
    out: Dict[str, Any] = {}
    for e in entries:
        if e.get("run_id") == run_id and e.get("kind") == "metadata" and isinstance(e.get("metadata"), dict):
            out.update(e["metadata"])
    return out


def artifacts_by_name(entries: Iterable[Mapping[str, Any]], run_id: str) -> Dict[str, Dict[str, Any]]:
    """The run's artifacts by name (the last added under a name wins): ``{name: {name, path, metadata}}``."""
    out: Dict[str, Dict[str, Any]] = {}
    for e in entries:
        if e.get("run_id") == run_id and e.get("kind") == "artifact" and isinstance(e.get("name"), str):
            out[e["name"]] = {"name": e["name"], "path": str(e.get("path")), "metadata": e.get("metadata")}
    return out


def sources_of(entries: Iterable[Mapping[str, Any]], run_id: str) -> List[Dict[str, Any]]:
    """The run's sources in the order added: ``[{source_id, artifact_name}]``."""
    return [
        {"source_id": e["source_id"], "artifact_name": e.get("artifact_name")}
        for e in entries
        if e.get("run_id") == run_id and e.get("kind") == "source" and isinstance(e.get("source_id"), str)
    ]


class JupyterSchedTracker(TrackerBase):
    """TorchX's ``TrackerBase`` over a metrics directory (None: marked stderr lines, nothing to read back)."""

    def __init__(self, directory: Optional[str], role: str = "", replica: int = 0) -> None:
        self.directory = directory
        self.stem = replica_stem(role, replica)
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<JupyterSchedTracker: {self.directory or 'stderr lines'}>"

    def write(self, entry: Dict[str, Any]) -> None:
        line = json.dumps({"v": 1, "t": time.time(), **plain(entry)}, allow_nan=False, separators=(",", ":"))
        with self.lock:
            if self.directory is None:
                os.write(2, f"{TRACKER_MARK}{line}\n".encode())
                return
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            path = os.path.join(self.directory, self.stem + TRACKER_SUFFIX)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                hand_over(fd, os.environ.get(METRICS_OWNER_ENV))
                os.write(fd, (line + "\n").encode("utf-8"))
            finally:
                os.close(fd)

    def entries(self) -> List[Dict[str, Any]]:
        return read_entries(self.directory)

    # -- TorchX's TrackerBase --------------------------------------------------------------------------------
    def add_artifact(self, run_id: str, name: str, path: str, metadata: Optional[Mapping[str, object]] = None) -> None:
        self.write({"run_id": run_id, "kind": "artifact", "name": name, "path": path, "metadata": metadata})

    def artifacts(self, run_id: str) -> Mapping[str, "TrackerArtifact"]:
        return {
            name: TrackerArtifact(a["name"], a["path"], a["metadata"])
            for name, a in artifacts_by_name(self.entries(), run_id).items()
        }

    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        self.write({"run_id": run_id, "kind": "metadata", "metadata": dict(kwargs)})

    def metadata(self, run_id: str) -> Mapping[str, object]:
        return merged_metadata(self.entries(), run_id)

    def add_source(self, run_id: str, source_id: str, artifact_name: Optional[str] = None) -> None:
        self.write({"run_id": run_id, "kind": "source", "source_id": source_id, "artifact_name": artifact_name})

    def sources(self, run_id: str, artifact_name: Optional[str] = None) -> Iterable["TrackerSource"]:
        return [
            TrackerSource(src["source_id"], src["artifact_name"])
            for src in sources_of(self.entries(), run_id)
            if artifact_name is None or src["artifact_name"] == artifact_name
        ]

    def lineage(self, run_id: str) -> "Lineage":
        raise NotImplementedError("the jupyter_sched tracker keeps sources (sources()), not a lineage graph")

    def run_ids(self, **kwargs: str) -> Iterable[str]:
        """The runs with entries here; ``parent_run_id=`` keeps those with that source (as fsspec's)."""
        parent = kwargs.get("parent_run_id")
        entries = self.entries()
        ids = dict.fromkeys(e["run_id"] for e in entries)
        if parent:
            ids = dict.fromkeys(
                e["run_id"] for e in entries if e.get("kind") == "source" and e.get("source_id") == parent
            )
        return list(ids)


def create(config: Optional[str]) -> JupyterSchedTracker:
    """The entry point TorchX calls with ``TORCHX_TRACKER_JUPYTER_SCHED_CONFIG``: ``auto`` (or none) writes
    to the replica's metrics directory, else ``config`` is the directory."""
    env = os.environ
    if config and config != TRACKER_CONFIG_AUTO:
        directory: Optional[str] = os.path.abspath(os.path.expanduser(config))
    else:
        directory = env.get(METRICS_DIR_ENV) or None
    raw = env.get(REPLICA_ENV) or "0"
    role = env.get(ROLE_ENV, "")
    return JupyterSchedTracker(directory, role, int(raw) if raw.isdigit() else 0)
