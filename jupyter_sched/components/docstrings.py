"""Google-style docstrings -> a description and per-parameter help (for a component's ``--help``)."""

from __future__ import annotations

import inspect
import re
from typing import Dict, Optional, Tuple

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?|Notes?|See Also):\s*$"
)
_ARG = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """Returns ``(description, {param: help})``. The description is the text before the first section;
    ``Args:`` entries may continue on more-indented lines. ``*args`` is documented as ``args`` or ``*args``."""
    text = inspect.cleandoc(doc or "")
    description: list[str] = []
    params: Dict[str, str] = {}
    section: Optional[str] = None
    current: Optional[str] = None
    entry_indent = 0
    for line in text.splitlines():
        stripped = line.strip()
        match = _SECTION.match(stripped)
        if match and not line.startswith(" "):
            section = match.group(1)
            current = None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        arg = _ARG.match(stripped)
        if arg and (current is None or indent <= entry_indent):
            current = arg.group("name")
            entry_indent = indent
            params[current] = arg.group("text").strip()
        elif current is not None:
            params[current] = (params[current] + " " + stripped).strip()
    return "\n".join(description).strip(), params


def first_line(description: str) -> str:
    for line in description.splitlines():
        if line.strip():
            return line.strip()
    return ""
