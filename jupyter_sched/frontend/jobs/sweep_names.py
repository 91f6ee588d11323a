"""Which sweep an app belongs to, from its name alone (so any process can group a sweep's runs).

``jupyter_sched.sweep`` names each run ``<name[:20]>-<random id>-<index>`` (three or more digits); the
random id (a letter, then 12 letters or digits) is what keeps two sweeps of one function apart.
"""

from __future__ import annotations

import re
from typing import Optional

_SWEEP_RUN = re.compile(r"^(?P<sweep>.+-[a-z][a-z0-9]{12})-(?P<index>\d{3,})$")
_RANDOM_ID = re.compile(r"-[a-z][a-z0-9]{12}$")


def sweep_of(name: str) -> Optional[str]:
    """``train-sweep-b3k2x9q0d1xyz-007`` -> ``train-sweep-b3k2x9q0d1xyz``; None for an app of no sweep."""
    match = _SWEEP_RUN.match(name or "")
    return match.group("sweep") if match else None


def sweep_label(sweep: str) -> str:
    """The sweep's name as a person gave it: ``train-sweep-b3k2x9q0d1xyz`` -> ``train-sweep``."""
    return _RANDOM_ID.sub("", sweep)
