"""What a job told TorchX's tracker API: the metadata, artifacts and sources of each run id, for ``describe``.

Code written for ``torchx.tracker.app_run_from_env()`` stores its calls in the replicas'
``<role>.<k>.tracker.jsonl`` files (``jupyter_sched.track.torchx_tracker``). This reads them back merged the
way TorchX's fsspec backend does (metadata in the order added, a later value of a key winning; artifacts by
name, the last one winning; sources listed), one :class:`TrackedRun` per run id: the job's own run (its
handle, ``TORCHX_JOB_ID``) first, then any other run id the job named, in the order first seen.

Pure reading: a missing directory or file is no runs; a line that is not an entry is skipped.

:func:`tracker_json` is the block every live front end shows (the server's ``tracker`` field of a job's
detail, the notebook pane's tracker block, the JupyterLab job view): bounded (at most :data:`MAX_RUNS` runs,
:data:`MAX_KEYS` metadata keys and :data:`MAX_ARTIFACTS` artifacts each, the rest counted) and masked.
:class:`TrackedCache` reads a directory again only when one of its tracker files changed (by mtime and
size), so a view refreshed twice a second costs one ``listdir`` and a few ``stat`` calls between changes.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from jupyter_sched.specs.output.masking import mask_out
from jupyter_sched.track.layout import TRACKER_SUFFIX
from jupyter_sched.track.torchx_tracker import artifacts_by_name, merged_metadata, read_entries, sources_of

MAX_RUNS = 10
"""Runs a live view shows at most (the job's own first); ``describe`` shows them all."""
MAX_KEYS = 50
"""Metadata keys a live view shows per run (in the order added); the others are counted."""
MAX_ARTIFACTS = 50
"""Artifacts a live view shows per run (in the order first added); the others are counted."""


@dataclass(frozen=True)
class TrackedRun:
    """One run id's tracker record: ``metadata`` (key -> value), ``artifacts`` (name -> ``{name, path,
    metadata}``) and ``sources`` (``{source_id, artifact_name}``, in the order added)."""

    run_id: str
    metadata: Dict[str, Any] = field(default_factory=dict)
    artifacts: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    sources: List[Dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"run_id": self.run_id, "metadata": self.metadata, "artifacts": list(self.artifacts.values()),
                "sources": self.sources}  # fmt: skip


def read_tracked(directory: Optional[str], handle: str) -> List[TrackedRun]:
    """Every run id's record in the metrics ``directory``; the run ``handle`` first (none: an empty list)."""
    entries = read_entries(directory)
    ids = list(dict.fromkeys(str(e["run_id"]) for e in entries))
    if handle in ids:
        ids.remove(handle)
        ids.insert(0, handle)
    return [
        TrackedRun(
            run_id,
            merged_metadata(entries, run_id),
            artifacts_by_name(entries, run_id),
            sources_of(entries, run_id),
        )
        for run_id in ids
    ]


def tracker_json(runs: List[TrackedRun]) -> List[Dict[str, Any]]:
    """``runs`` as the live views show them (the ``TrackerRunJson`` of the server's job detail): at most
    :data:`MAX_RUNS` runs with at most :data:`MAX_KEYS` metadata keys and :data:`MAX_ARTIFACTS` artifacts
    each, what was left out counted in ``more_metadata`` / ``more_artifacts``, masked with ``mask_out`` (a
    value under a secret-looking key is hidden whole). Sources are ``describe``'s only."""
    out = []
    for run in runs[:MAX_RUNS]:
        keys = list(run.metadata)
        artifacts = list(run.artifacts.values())
        out.append({
            "run_id": run.run_id,
            "metadata": {k: run.metadata[k] for k in keys[:MAX_KEYS]},
            "more_metadata": max(0, len(keys) - MAX_KEYS),
            "artifacts": [{"name": str(a.get("name")), "path": str(a.get("path")),
                           "metadata": a.get("metadata") if isinstance(a.get("metadata"), dict) else None}
                          for a in artifacts[:MAX_ARTIFACTS]],
            "more_artifacts": max(0, len(artifacts) - MAX_ARTIFACTS),
        })  # fmt: skip
    masked: List[Dict[str, Any]] = mask_out(out)
    return masked


FilesKey = Tuple[Tuple[str, int, int], ...]


def tracker_files(directory: Optional[str]) -> FilesKey:
    """The tracker files of ``directory`` as ``(name, mtime_ns, size)``, sorted: what a change changes."""
    try:
        names = sorted(n for n in os.listdir(directory or "") if n.endswith(TRACKER_SUFFIX))
    except OSError:
        return ()
    out = []
    for name in names:
        try:
            st = os.stat(os.path.join(directory or "", name))
        except OSError:
            continue
        out.append((name, st.st_mtime_ns, st.st_size))
    return tuple(out)


class TrackedCache:
    """:func:`tracker_json` of each app's metrics directory, read again only when its tracker files changed
    (names, mtimes, sizes). Bounded: the least recently used directories go first. Thread-safe."""

    def __init__(self, limit: int = 1_000) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._kept: "OrderedDict[Tuple[str, str], Tuple[FilesKey, List[Dict[str, Any]]]]" = OrderedDict()
        self.reads = 0
        """Directories read (not served from the cache): what the tests count."""

    def of(self, directory: Optional[str], handle: str) -> List[Dict[str, Any]]:
        """The tracker block of the app ``handle`` whose metrics directory is ``directory`` (none: [])."""
        if not directory:
            return []
        files = tracker_files(directory)
        if not files:
            return []
        with self._lock:
            kept = self._kept.get((directory, handle))
            if kept is not None and kept[0] == files:
                self._kept.move_to_end((directory, handle))
                return kept[1]
        block = tracker_json(read_tracked(directory, handle))
        with self._lock:
            self.reads += 1
            self._kept[(directory, handle)] = (files, block)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return block
