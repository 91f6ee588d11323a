"""App handles (``scheduler://session/app_id``), the names in them, and unique app ids.

A session name and an app id become directory names (``<log_dir>/<session>/<app_id>``), and a handle is
text a user may paste from anywhere. So both are checked where they enter (:func:`parse_safe_handle` in the
runner, :func:`check_name` for a runner's session and in the local scheduler): absolute names, names
containing ``..``, a path separator or a NUL are refused with :class:`UnsafeNameError` (a usage error
naming the field), before any path is built from them. :func:`parse_app_handle` itself splits as TorchX's
does (a session may contain ``/``), for code written against TorchX.
"""

from __future__ import annotations

import re
import secrets
from typing import NamedTuple

from jupyter_sched.specs.errors import MalformedAppHandleException

AppHandle = str

_HANDLE_RE = re.compile(r"^(?P<scheduler_backend>[^/]+?)://(?P<session_name>.*)/(?P<app_id>[^/]+)$")
_SEPARATORS = ("/", "\\", "\0")
_FIRST = "bcdfghjklmnpqrstvwxz"
_REST = _FIRST + "0123456789"


class ParsedAppHandle(NamedTuple):
    scheduler_backend: str
    session_name: str
    app_id: str


def make_app_handle(scheduler_backend: str, session_name: str, app_id: str) -> AppHandle:
    return f"{scheduler_backend}://{session_name}/{app_id}"


class UnsafeNameError(MalformedAppHandleException):
    """A session name or app id that could name a path outside its directory."""

    def __init__(self, what: str, name: str, source: str = "") -> None:
        where = f" in {source!r}" if source and source != name else ""
        ValueError.__init__(
            self,
            f"{what} {name!r}{where} is not allowed: it must be a plain name, without '/', '\\', '..' or NUL,"
            " and not '.' (e.g. default, or an app id such as echo-b3k2x9q0d1)",
        )
        self.name = name


def check_name(name: str, what: str = "session name", source: str = "") -> str:
    """Returns ``name`` if it is safe as one directory name, else raises :class:`UnsafeNameError`.

    ``""`` is allowed (the empty session of a ``local_cwd:///app_id`` handle)."""
    if not isinstance(name, str):
        raise UnsafeNameError(what, repr(name), source)
    if ".." in name or any(sep in name for sep in _SEPARATORS) or name == ".":
        raise UnsafeNameError(what, name, source)
    return name


def parse_app_handle(app_handle: AppHandle) -> ParsedAppHandle:
    """Splits a handle as TorchX does: the app id is the last path segment, so a session name may contain
    ``/``. Parsing alone builds no path; whatever uses the parts as names uses :func:`parse_safe_handle`."""
    match = _HANDLE_RE.match(app_handle)
    if not match:
        raise MalformedAppHandleException(app_handle)
    return ParsedAppHandle(**match.groupdict())


def parse_safe_handle(app_handle: AppHandle) -> ParsedAppHandle:
    """:func:`parse_app_handle`, then its session name and app id checked by :func:`check_name`: what the
    runner (and so the CLI and the magics) accepts from a user."""
    parsed = parse_app_handle(app_handle)
    check_name(parsed.session_name, "session name", app_handle)
    check_name(parsed.app_id, "app id", app_handle)
    return parsed


def random_id() -> str:
    """About 64 random bits as a DNS- and Kubernetes-safe token that starts with a letter."""
    first = _FIRST[secrets.randbelow(len(_FIRST))]
    return first + "".join(_REST[secrets.randbelow(len(_REST))] for _ in range(12))


def make_unique(name: str) -> str:
    """``{name}-{random_id()}``: the app id of a new submission."""
    return f"{name}-{random_id()}"
