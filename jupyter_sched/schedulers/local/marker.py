"""The ``SUCCESS`` file TorchX's local scheduler leaves in an app's log directory once it has ended.

Its name is TorchX's and means "the logs are complete", not "the app succeeded": it is written for every
ended app, and ``final_state`` says how it ended. Tools written for TorchX poll for it before reading the
log files; it lists, per role and replica, the pid, exit code and the paths of ``stdout``/``stderr`` and the
error file. It is a convenience copy of what ``state.json`` holds: written atomically (a reader never sees
half of it) and only when the record is, so it never claims more than the record does; a failure to
write it (a full disk) is ignored, ``state.json`` stays the source of truth.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.local.state import AppRecord

DONE_MARKER = "SUCCESS"


def marker_content(record: "AppRecord") -> Dict[str, Any]:
    """What the marker says about an ended app (TorchX's field names)."""
    roles: Dict[str, List[Dict[str, Any]]] = {}
    for rep in record.replicas:
        roles.setdefault(rep.role, []).append(
            {
                "replica_id": rep.replica_id,
                "pid": rep.pid,
                "exitcode": rep.exit_code,
                "stdout": rep.stdout,
                "stderr": rep.stderr,
                "error_file": rep.error_file,
            }
        )
    return {
        "app_id": record.app_id,
        "log_dir": record.app_dir,
        "final_state": record.state().name,
        "last_updated": record.finished,
        "roles": roles,
    }


def marker_json(record: "AppRecord") -> str:
    """The file's text (``state`` writes it at once, beside the record)."""
    return json.dumps(marker_content(record), indent=2)
