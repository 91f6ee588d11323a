"""Readable renderings of data-model objects: an indented, YAML-like text (no object tags) and JSON.

Both mask secrets first (:func:`jupyter_sched.specs.masking.mask_tree`), so no CLI output shows one."""

from __future__ import annotations

import dataclasses
import json
import re
from enum import Enum
from typing import Any, List

from jupyter_sched.specs import BindMount, DeviceMount, Role, VolumeMount
from jupyter_sched.specs.masking import mask_tree

_MOUNT_KINDS = {BindMount: "bind", VolumeMount: "volume", DeviceMount: "device"}
_PLAIN = re.compile(r"^[A-Za-z0-9_./@%+-][A-Za-z0-9_./@%+=, -]*$")


def to_plain(obj: Any) -> Any:
    """Dataclasses -> dicts (field order kept), enums -> their string, tuples -> lists, recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # a Role subclass (e.g. a component's hook-carrying role) renders as the Role the user wrote
        fields = dataclasses.fields(Role) if isinstance(obj, Role) else dataclasses.fields(obj)
        out = {f.name: to_plain(getattr(obj, f.name)) for f in fields}
        kind = _MOUNT_KINDS.get(type(obj))
        return {"type": kind, **out} if kind else out
    if isinstance(obj, Enum):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if (
        _PLAIN.match(text)
        and not text.endswith(" ")
        and text not in ("null", "true", "false")
        and not _numeric(text)
    ):
        return text
    return json.dumps(text, ensure_ascii=False)


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _leaf(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def render(obj: Any) -> str:
    """``obj`` as indented ``key: value`` text; strings are quoted only when they would be ambiguous."""
    lines: List[str] = []
    _render(mask_tree(to_plain(obj)), 0, lines)
    return "\n".join(lines)


def _render(value: Any, indent: int, lines: List[str], prefix: str = "") -> None:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            lines.append(pad + prefix + "{}")
            return
        first = True
        for key, item in value.items():
            head = (prefix if first else " " * len(prefix)) + f"{key}:"
            first = False
            if isinstance(item, (dict, list)) and item:
                lines.append(pad + head)
                _render(item, indent + len(prefix) + 2, lines)
            else:
                lines.append(pad + head + " " + _leaf(item))
        return
    if isinstance(value, list):
        if not value:
            lines.append(pad + prefix + "[]")
            return
        for item in value:
            if isinstance(item, dict) and item:
                _render(item, indent, lines, prefix="- ")
            elif isinstance(item, list) and item:
                lines.append(pad + "-")
                _render(item, indent + 2, lines)
            else:
                lines.append(pad + "- " + _leaf(item))
        return
    lines.append(pad + prefix + _scalar(value))


def to_json(obj: Any) -> str:
    return json.dumps(mask_tree(to_plain(obj)), indent=2, default=str, ensure_ascii=False)
