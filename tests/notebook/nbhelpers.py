"""Helpers of the notebook tests (imported by the test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import shlex
import time
from typing import Any, Callable


def wait_for(predicate: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Polls ``predicate`` until it is truthy (a liveness guard, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def py(code: str, flags: str = "") -> str:
    """A shell-quoted ``utils.python [FLAGS] -c CODE`` component line."""
    return f"utils.python {flags} -c {shlex.quote(code)}"

