"""App and replica states, and the status objects the schedulers report."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, List, Optional

from jupyter_sched.specs.app import NONE
from jupyter_sched.specs.errors import AppStatusError
from jupyter_sched.specs.usage import UsageTotals


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
        """A human-readable multi-line summary, one line per replica (``*`` marks replica 0)."""
        lines = []
        for role in self.roles:
            if filter_roles and role.role not in filter_roles:
                continue
            for rep in role.replicas:
                mark = "*" if rep.id == 0 else " "
                line = f"{mark}{role.role}[{rep.id}]:{rep.state}"
                if rep.exit_code is not None and rep.state.is_terminal:
                    line += f" (exitcode: {rep.exit_code})"
                if rep.num_restarts:
                    line += f" (restarts: {rep.num_restarts})"
                if rep.usage is not None:
                    line += f" ({rep.usage.format()})"
                if rep.structured_error_msg != NONE:
                    line += "\n" + textwrap.indent(_error_text(rep.structured_error_msg), "      ")
                lines.append(line)
        roles = ("\n" + textwrap.indent("\n".join(lines), "    ")) if lines else ""
        return (
            f"  State: {self.state}\n"
            f"  Num Restarts: {self.num_restarts}\n"
            f"  Roles:{roles}\n"
            f"  Msg: {self.msg}\n"
            f"  Structured Error Msg: {self.structured_error_msg}\n"
            f"  UI URL: {self.ui_url}"
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
                            "usage": rep.usage.to_json() if rep.usage is not None else None,
                        }
                        for rep in r.replicas
                    ],
                }
                for r in self.roles
            ],
        }

    def __str__(self) -> str:
        return f"AppStatus(state={self.state}, num_restarts={self.num_restarts}, msg={self.msg!r})"

    def __repr__(self) -> str:
        """An indented, YAML-like rendering with readable states and no object tags."""
        out = ["AppStatus:"]
        out.append(f"  msg: {self.msg!r}")
        out.append(f"  num_restarts: {self.num_restarts}")
        out.append("  roles:" + ("" if self.roles else " []"))
        for role in self.roles:
            out.append(f"  - role: {role.role}")
            out.append("    replicas:" + ("" if role.replicas else " []"))
            for rep in role.replicas:
                out.append(f"    - id: {rep.id}")
                out.append(f"      state: {rep.state!r}")
                out.append(f"      hostname: {rep.hostname}")
                if rep.exit_code is not None:
                    out.append(f"      exit_code: {rep.exit_code}")
                if rep.usage is not None:
                    out.append(f"      usage: {rep.usage.format()}")
        out.append(f"  state: {self.state!r}")
        out.append(f"  structured_error_msg: {self.structured_error_msg}")
        out.append(f"  ui_url: {self.ui_url}")
        return "\n".join(out)


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
