"""App handles (``scheduler://session/app_id``) and unique app ids."""

from __future__ import annotations

import re
import secrets
from typing import NamedTuple

from jupyter_sched.specs.errors import MalformedAppHandleException

AppHandle = str

_HANDLE_RE = re.compile(r"^(?P<scheduler_backend>[^:/]+)://(?P<session_name>.*)/(?P<app_id>[^/]+)$")
_FIRST = "bcdfghjklmnpqrstvwxz"
_REST = _FIRST + "0123456789"


class ParsedAppHandle(NamedTuple):
    scheduler_backend: str
    session_name: str
    app_id: str


def make_app_handle(scheduler_backend: str, session_name: str, app_id: str) -> AppHandle:
    return f"{scheduler_backend}://{session_name}/{app_id}"


def parse_app_handle(app_handle: AppHandle) -> ParsedAppHandle:
    """Splits a handle; the app id is the last path segment, so a session name may contain ``/``."""
    match = _HANDLE_RE.match(app_handle)
    if not match:
        raise MalformedAppHandleException(app_handle)
    return ParsedAppHandle(**match.groupdict())


def random_id() -> str:
    """About 64 random bits as a DNS- and Kubernetes-safe token that starts with a letter."""
    first = _FIRST[secrets.randbelow(len(_FIRST))]
    return first + "".join(_REST[secrets.randbelow(len(_REST))] for _ in range(12))


def make_unique(name: str) -> str:
    """``{name}-{random_id()}``: the app id of a new submission."""
    return f"{name}-{random_id()}"
