"""``jupyter_sched.record(name, value)``: a value handed back from a notebook run as a job.

It runs in the notebook's kernel. In a notebook job (the executor sets ``JUPYTER_SCHED_NOTEBOOK_JOB`` in
the kernel's environment) the value is published as a display output of its own MIME type, as
scrapbook's ``glue`` does: the executed notebook carries it, and the executor reads it from the cell's
outputs into ``job.result()``. JSON values are stored as JSON (readable in the saved notebook); others
pickled with cloudpickle, base64 in the JSON. Outside a job the call only returns the value, so the same
notebook runs by hand unchanged. The display goes through the running shell's ``display_pub`` found in
``builtins`` (where a kernel puts ``get_ipython``), so this module imports no IPython.
"""

from __future__ import annotations

import base64
import builtins
import json
import math
import os
from typing import Any, Dict, Optional, Tuple

JOB_ENV = "JUPYTER_SCHED_NOTEBOOK_JOB"
MIME = "application/vnd.jupyter-sched.record+json"
SCRAPBOOK_MIME = "application/scrapbook.scrap.json+json"


def record(name: str, value: Any) -> Any:
    """Records ``value`` under ``name`` for ``job.result()`` (a dict of every recorded value, the last one
    of a name winning); returns ``value``. Outside a notebook job it records nothing."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"record: name must be a non-empty string (got {name!r})")
    if not os.environ.get(JOB_ENV):
        return value
    shell = getattr(builtins, "get_ipython", lambda: None)()
    if shell is None:
        raise RuntimeError("record: a notebook job's kernel has no running shell to publish the value through")
    shell.display_pub.publish(data={MIME: encode(name, value)}, metadata={})
    return value


def encode(name: str, value: Any) -> Dict[str, Any]:
    """The display data of one recorded value: JSON when it round-trips as JSON, else pickled."""
    try:
        text = json.dumps(value, allow_nan=False)
        if json.loads(text) == value:
            return {"name": name, "value": value}
    except (TypeError, ValueError):
        pass
    if isinstance(value, float) and not math.isfinite(value):
        return {"name": name, "float": repr(value)}
    import cloudpickle

    return {"name": name, "pickle": base64.b64encode(cloudpickle.dumps(value)).decode("ascii")}


def decode(mime: str, data: Any) -> Optional[Tuple[str, Any]]:
    """``(name, value)`` of one output's data under ``mime`` (ours or scrapbook's JSON scraps), else None."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    if mime == MIME:
        if "pickle" in data:
            import cloudpickle

            return data["name"], cloudpickle.loads(base64.b64decode(data["pickle"]))
        if "float" in data:
            return data["name"], float(data["float"])
        return data["name"], data.get("value")
    if mime == SCRAPBOOK_MIME and data.get("encoder", "json") == "json":
        return data["name"], data.get("data")
    return None
