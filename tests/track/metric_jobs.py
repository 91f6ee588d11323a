"""Functions that tests run as function jobs to log metrics (importable by reference from the repository's
root, where local_cwd replicas start; a test module outside a package is not)."""

from __future__ import annotations

import math
import os
import time


def logs(steps: int) -> int:
    """``loss`` falls as 1/(step+1) (goal min); ``odd`` is the step, but NaN at step 3."""
    from jupyter_sched import track

    track.define_metric("loss", goal="min")
    for i in range(steps):
        track.log({"loss": 1.0 / (i + 1), "odd": math.nan if i == 3 else i})
    return steps


def logs_nothing() -> str:
    return "quiet"


def logs_until_gate(gate: str, before: int, after: int) -> int:
    """Logs ``before`` steps and flushes them, waits for the file ``gate`` (made by the test once it has seen
    those steps), then logs ``after`` more and returns: what a follower prints before the gate was written
    while the job ran."""
    from jupyter_sched import track

    for i in range(before):
        track.log({"loss": float(i)})
    track.flush()
    deadline = time.monotonic() + 300
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.05)
    for i in range(before, before + after):
        track.log({"loss": float(i)})
    return before + after
