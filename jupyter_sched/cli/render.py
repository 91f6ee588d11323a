"""Readable renderings of data-model objects: indented text that is valid YAML (no object tags), and JSON.

The text is written by hand rather than with ``yaml.safe_dump``, to keep field order and quote only
what needs it: a string is plain only when YAML would read it back as the same string (no indicator first,
no ``: `` or `` #``, not a number, date, bool or null word of YAML 1.1 or 1.2); anything else is a JSON
string, which YAML reads as a double-quoted scalar. ``tests/cli/test_render.py`` proves the round trip.

Both mask secrets first (:func:`jupyter_sched.specs.output.masking.mask_out`), so no CLI output shows one."""

from __future__ import annotations

import dataclasses
import json
import re
from enum import Enum
from typing import Any, List

from jupyter_sched.specs import BindMount, DeviceMount, Role, VolumeMount
from jupyter_sched.specs.output.masking import mask_out

_MOUNT_KINDS = {BindMount: "bind", VolumeMount: "volume", DeviceMount: "device"}
_PLAIN = re.compile(r"^(?:[A-Za-z_/.]|-[A-Za-z-])[A-Za-z0-9_./@%+=, -]*\Z")  # \Z: not before a final newline
_SPECIAL = {"null", "true", "false", "yes", "no", "on", "off", "y", "n", "~", ".inf", ".nan", "-.inf", "+.inf"}
_UNPRINTABLE = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufeff\ufffe\uffff]"
)
"""What YAML may not show raw in a double-quoted scalar (or would read as a line break), and what a terminal
would act on (C1 controls, bidirectional overrides): escaped, in the text and in JSON (JSON escapes C0)."""


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
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, int):
        return repr(value)
    text = str(value)
    if (
        _PLAIN.match(text)
        and not text.endswith(" ")
        and text.lower() not in _SPECIAL
        and not _numeric(text)
    ):
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    return _UNPRINTABLE.sub(_escape, quoted)


def _float(value: float) -> str:
    """A float as YAML reads it back: ``.inf``/``.nan``, and always a ``.`` before an exponent."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "e" in text and "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent if exponent[0] in '+-' else '+' + exponent}"
    return text


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
    _render(mask_out(to_plain(obj)), 0, lines)
    return "\n".join(lines)


def _render(value: Any, indent: int, lines: List[str], prefix: str = "") -> None:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            lines.append(pad + prefix + "{}")
            return
        first = True
        for key, item in value.items():
            head = (prefix if first else " " * len(prefix)) + f"{_scalar(key)}:"
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


def _escape(m: "re.Match[str]") -> str:
    return f"\\u{ord(m.group()):04x}"


def to_json(obj: Any) -> str:
    text = json.dumps(mask_out(to_plain(obj)), indent=2, default=str, ensure_ascii=False)
    return _UNPRINTABLE.sub(_escape, text)  # only strings hold them: the escape is what json.loads reads back
