"""Launching a sweep's run again: the same pickled call, a new job directory and app.

What the run called is its pickled call: in memory while the kernel that made the sweep lives, else the
``call.pkl`` its job directory kept, so a sweep found again after a restart (``load_sweep``) retries the
exact call, without unpickling it here. How it ran (scheduler, replicas, run options, resource, image)
is the sweep's, kept in its manifest as plain JSON (:func:`options_to_json`).

``retry_failed()`` answers with a :class:`Retried`, a one-line note of what it launched again, not the sweep:
the cell that displayed the sweep already shows it live, and a second copy of its table under the call
would only repeat it.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional

from jupyter_sched.functions.launch import FunctionRequest, prepare_call, read_meta
from jupyter_sched.functions.results import CALL_FILE
from jupyter_sched.specs import Resource

OPTION_NAMES = ("scheduler", "num_replicas", "cfg", "resource", "image")


def options_to_json(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The sweep's launch options as JSON values (a Resource as its fields, a named one by its name)."""
    out = {k: options.get(k) for k in OPTION_NAMES}
    resource = out.get("resource")
    if isinstance(resource, Resource):
        out["resource"] = {"fields": dataclasses.asdict(resource)}
    out["cfg"] = dict(out.get("cfg") or {})
    return out


def options_from_json(
    data: Optional[Mapping[str, Any]], scheduler: str, cfg: Optional[Mapping[str, Any]]
) -> Dict[str, Any]:
    """:func:`options_to_json` read back; a manifest written before options were kept gives ``scheduler``
    and ``cfg`` (what ``load_sweep`` was given) and the defaults."""
    data = dict(data or {})
    resource = data.get("resource")
    if isinstance(resource, dict) and isinstance(resource.get("fields"), dict):
        resource = Resource(**resource["fields"])
    return {
        "scheduler": data.get("scheduler") or scheduler,
        "num_replicas": int(data.get("num_replicas") or 1),
        "cfg": dict(data["cfg"] if isinstance(data.get("cfg"), dict) else (cfg or {})),
        "resource": resource,
        "image": data.get("image"),
    }


def payload_of(request: Optional[FunctionRequest], job_dir: str) -> bytes:
    """The run's pickled call: from its request in memory, else from its job directory."""
    if request is not None:
        return request.payload
    path = os.path.join(job_dir, CALL_FILE)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise RuntimeError(f"cannot retry: the call in {path} cannot be read ({e.strerror or e})") from e


def prepare_again(runner: Any, payload: bytes, previous_dir: str, options: Mapping[str, Any], name: str,
                  meta: Mapping[str, Any]) -> FunctionRequest:  # fmt: skip
    """A new request (job directory, dry run) for the same call, named ``name``, launched as ``options``."""
    old = read_meta(previous_dir) if previous_dir else {}
    return prepare_call(
        runner, payload, fn_name=str(old.get("function") or meta.get("function") or name),
        source=str(old.get("source") or "unknown"), name=name, scheduler=options["scheduler"],
        num_replicas=options["num_replicas"], cfg=options["cfg"], resource=options["resource"],
        image=options["image"], meta=meta,
    )  # fmt: skip


class Retried:
    """What ``sweep.retry_failed()`` launched again: ``indices`` (the runs, in grid order) and their
    ``labels`` (their parameters). Shows as one line; iterating gives the indices, ``len()`` how many."""

    def __init__(self, sweep_name: str, indices: List[int], labels: List[str], wanted: str) -> None:
        self.sweep_name = sweep_name
        self.indices = indices
        self.labels = labels
        self.wanted = wanted

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)

    def __repr__(self) -> str:
        if not self.indices:
            return f"sweep {self.sweep_name}: no {self.wanted} run to retry"
        runs = ", ".join(f"#{i} ({label})" for i, label in zip(self.indices, self.labels))
        what = "run" if len(self.indices) == 1 else "runs"
        return (f"sweep {self.sweep_name}: retrying {len(self.indices)} {what}: {runs} (the sweep's table shows"
                " them; sweep.results() waits for them)")  # fmt: skip
