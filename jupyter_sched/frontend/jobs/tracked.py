"""What a job told TorchX's tracker API: the metadata, artifacts and sources of each run id, for ``describe``.

Code written for ``torchx.tracker.app_run_from_env()`` stores its calls in the replicas'
``<role>.<k>.tracker.jsonl`` files (``jupyter_sched.track.torchx_tracker``). This reads them back merged the
way TorchX's fsspec backend does (metadata in the order added, a later value of a key winning; artifacts by
name, the last one winning; sources listed), one :class:`TrackedRun` per run id: the job's own run (its
handle, ``TORCHX_JOB_ID``) first, then any other run id the job named, in the order first seen.

Pure reading: a missing directory or file is no runs; a line that is not an entry is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from jupyter_sched.track.torchx_tracker import artifacts_by_name, merged_metadata, read_entries


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
            [
                {"source_id": e["source_id"], "artifact_name": e.get("artifact_name")}
                for e in entries
                if e.get("run_id") == run_id and e.get("kind") == "source" and isinstance(e.get("source_id"), str)
            ],
        )
        for run_id in ids
    ]
