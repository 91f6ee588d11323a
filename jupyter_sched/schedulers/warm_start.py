"""The warm-start extension of the scheduler contract: a role may ask that its replicas start warm.

A role whose ``metadata[WARM_START]`` lists modules (and Python files) asks a scheduler that can to start its
replicas from an interpreter that has already imported them, instead of exec'ing a fresh one each time: a
function job's role asks for cloudpickle and its bootstrap. A scheduler that cannot, or a replica it cannot
start so (see the local backend's zygote, ``schedulers/local/warm_starts/zygote.py``), starts it as usual, so the key is
a hint, never a requirement: the replica runs the same either way.
"""

from __future__ import annotations

__all__ = ["WARM_START"]

WARM_START = "jupyter_sched.warm_start"
"""Role metadata key: what to have loaded before a replica of the role starts (a list of module names and
paths of Python files)."""
