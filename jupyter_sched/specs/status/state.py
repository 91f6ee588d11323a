"""App and replica states, and the status objects the schedulers report."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, List, Optional

from jupyter_sched.specs.output.masking import mask_out, masked_copy
from jupyter_sched.specs.request.app import NONE
from jupyter_sched.specs.status.usage import UsageTotals


class AppStatusError(Exception):
    """Raised by :meth:`AppStatus.raise_for_status` when an app did not succeed."""

    def __init__(self, status: AppStatus, *args: object) -> None:
        super().__init__(*args)
        self.status = status


class AppState(int, Enum):
    """State of an app or of one replica. ``str`` gives the name, ``repr`` the name and value."""

    UNSUBMITTED = 0
    SUBMITTED = 1
    PENDING = 2
    RUNNING = 3
    SUCCEEDED = 4
    FAILED = 5
    CANCELLED = 6
    UNKNOWN = 7

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{self.name} ({self.value})"

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL_STATES


ReplicaState = AppState
_TERMINAL_STATES = frozenset({AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED})
_STARTED_STATES = _TERMINAL_STATES | {AppState.RUNNING}


def is_terminal(state: AppState) -> bool:
    """True for SUCCEEDED, FAILED and CANCELLED: the app will not change state again."""
    return state in _TERMINAL_STATES


def is_started(state: AppState) -> bool:
    return state in _STARTED_STATES


@dataclass
class ReplicaStatus:
    """One replica's state. The fields after ``structured_error_msg`` are extras the panes show.

    ``started``/``finished`` are UNIX timestamps; ``num_restarts`` counts retries of this replica;
    ``usage`` is what an ended replica used (peak memory, CPU and wall seconds) where the backend knows it.
    """

    id: int
    state: AppState
    role: str
    hostname: str
    structured_error_msg: str = NONE
    exit_code: Optional[int] = None
    pid: Optional[int] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    num_restarts: int = 0
    msg: str = ""
    """What the backend has to say about this replica beyond its state (e.g. its logs were truncated)."""
    usage: Optional[UsageTotals] = None


@dataclass
class RoleStatus:
    role: str
    replicas: List[ReplicaStatus]


@dataclass
class AppStatus:
    """The status of an app as a runner reports it."""

    state: AppState
    num_restarts: int = 0
    msg: str = ""
    structured_error_msg: str = NONE
    ui_url: Optional[str] = None
    roles: List[RoleStatus] = field(default_factory=list)

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def raise_for_status(self) -> None:
        """Raises AppStatusError unless the app SUCCEEDED (a running app raises too)."""
        if self.state != AppState.SUCCEEDED:
            raise AppStatusError(self, f"job did not succeed: {self}")

    def format(self, filter_roles: Optional[List[str]] = None) -> str:
        """A human-readable summary, laid out as TorchX's: a header, then one line per replica (``*``
        marks replica 0 of each role); a replica that left an error file shows its exit code, timestamp,
        hostname and message; any other ended replica shows its exit code when known (TorchX's only says
        "no reply file")."""
        roles = "".join(
            _format_replica(rep)
            for role in self.roles
            if not filter_roles or role.role in filter_roles
            for rep in sorted(role.replicas, key=lambda r: r.id)
        )
        return (
            "AppStatus:\n"
            f"    State: {self.state}\n"
            f"    Num Restarts: {self.num_restarts}\n"
            f"    Roles: {roles}\n"
            f"    Msg: {self.msg}\n"
            f"    Structured Error Msg: {self.structured_error_msg}\n"
            f"    UI URL: {self.ui_url}\n"
            "    "
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types; the ``<NONE>`` placeholder of ``msg`` and ``structured_error_msg`` becomes null."""
        return {
            "state": str(self.state),
            "num_restarts": self.num_restarts,
            "msg": None if self.msg == NONE else self.msg,
            "structured_error_msg": None if self.structured_error_msg == NONE else self.structured_error_msg,
            "ui_url": self.ui_url,
            "roles": [
                {
                    "role": r.role,
                    "replicas": [
                        {
                            "id": rep.id,
                            "state": str(rep.state),
                            "hostname": rep.hostname,
                            "exit_code": rep.exit_code,
                            "pid": rep.pid,
                            "started": rep.started,
                            "finished": rep.finished,
                            "num_restarts": rep.num_restarts,
                            "msg": rep.msg or None,
                            "usage": rep.usage.to_json() if rep.usage is not None else None,
                        }
                        for rep in r.replicas
                    ],
                }
                for r in self.roles
            ],
        }

    def __str__(self) -> str:  # the message masked (specs.masking): it is in AppStatusError's text too
        return f"AppStatus(state={self.state}, num_restarts={self.num_restarts}, msg={mask_out(self.msg)!r})"

    def __repr__(self) -> str:
        """YAML, as TorchX's: states as ``NAME (value)``, a JSON ``structured_error_msg`` as nested YAML
        (any other text as itself), and no Python object tags. Secrets masked, as in the reprs of Role and
        AppDef (:func:`~jupyter_sched.specs.output.masking.masked_copy`)."""
        import yaml

        shown = masked_copy(self)

        def replica(rep: ReplicaStatus) -> dict[str, Any]:
            data = dict(rep.__dict__)
            data["state"] = repr(rep.state)
            if rep.usage is None:
                del data["usage"]  # shown only where a backend measured it, so the rest reads as TorchX's
            else:
                data["usage"] = rep.usage.to_json()
            return data

        data = {
            "msg": shown.msg,
            "num_restarts": shown.num_restarts,
            "roles": [{"role": r.role, "replicas": [replica(x) for x in r.replicas]} for r in shown.roles],
            "state": repr(shown.state),
            "structured_error_msg": _parsed(shown.structured_error_msg),
            "ui_url": shown.ui_url,
        }
        return yaml.safe_dump({"AppStatus": data}, default_flow_style=False, sort_keys=True)


def _parsed(structured: str) -> Any:
    if structured == NONE:
        return NONE
    try:
        return json.loads(structured)
    except ValueError:
        return structured


_RPC_ERROR = re.compile(r"\w*\('On WorkerInfo\(.+\):\n(?:.*\n)*'\)")
_BEFORE_EXCEPTION = re.compile(r"(?P<msg>.+)\nException.*")


def format_error_message(msg: str, header: str, width: int = 80) -> str:
    """An error message for a status line: the RPC error (``On WorkerInfo(...)``) or the text before an
    ``Exception`` line if there is one, broken at the first space after each ``width`` characters, the
    first line led by ``header`` and the others indented to match."""
    found = _RPC_ERROR.search(msg)
    if found:
        msg = found.group(0)
    found = _BEFORE_EXCEPTION.search(msg)
    if found:
        msg = found.group("msg")
    lines, start = [], 0
    for i, char in enumerate(msg):
        if char == " " and i - start >= width:
            lines.append(msg[start:i])
            start = i
    lines.append(msg[start:])
    pad = " " * len(header)
    return "\n".join((header if n == 0 else pad) + line for n, line in enumerate(lines))


def _format_replica(rep: ReplicaStatus) -> str:
    mark = "*" if rep.id == 0 else " "
    data = str(rep.state)
    error = _parsed(rep.structured_error_msg)
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, dict):
        code = rep.exit_code if rep.exit_code is not None else (message.get("errorCode") or "<N/A>")
        stamp = (message.get("extraInfo") or {}).get("timestamp")
        when = datetime.fromtimestamp(int(stamp)) if stamp is not None else "<N/A>"
        text = format_error_message(str(message.get("message", "")), header="    error_msg: ")
        data += f" (exitcode: {code})\n        timestamp: {when}\n        hostname: {rep.hostname}\n    {text}"
    elif rep.structured_error_msg != NONE:
        data += "\n" + textwrap.indent(_error_text(rep.structured_error_msg), "      ")
    elif rep.exit_code is not None and rep.state.is_terminal:
        data += f" (exitcode: {rep.exit_code})"
    elif rep.state in (AppState.FAILED, AppState.CANCELLED):
        data += " (no reply file)"
    if rep.num_restarts:
        data += f" (restarts: {rep.num_restarts})"
    if rep.usage is not None:
        data += f" ({rep.usage.format()})"
    return f"\n {mark}{rep.role}[{rep.id}]:{data}"


def _error_text(structured: str) -> str:
    """The readable part of a structured (torchelastic-style JSON) error message, or the text itself."""
    try:
        data = json.loads(structured)
        message = data.get("message", data)
        if isinstance(message, dict):
            text = str(message.get("message", message))
        else:
            text = str(message)
    except (ValueError, AttributeError):
        text = structured
    return "\n".join(textwrap.wrap(text, 80)) or text
