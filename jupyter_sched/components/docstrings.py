"""A component's docstring -> a description and per-parameter help (for its ``--help``).

``docstring_parser`` (MIT, no dependencies, what TorchX uses) reads Google, numpydoc and reST (``:param
x:``) docstrings, picking the style that explains the most; a hand-written parser read Google only, and
data scientists mostly write numpydoc. Only the description (the text before the first section) and the
parameters are used: sections such as ``Returns`` never land in the description.
"""

from __future__ import annotations

import inspect
from typing import Dict, Optional, Tuple

import docstring_parser


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """Returns ``(description, {param: help})``. A parameter's help is one line (its text re-flowed);
    ``*args`` is documented as ``args`` or ``*args``."""
    text = inspect.cleandoc(doc or "")
    if not text.strip():
        return "", {}
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:  # a malformed section: show the whole text, document no flag
        return text.strip(), {}
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    description = ("\n\n" if parsed.blank_after_short_description else "\n").join(parts)
    params = {
        p.arg_name.lstrip("*"): " ".join((p.description or "").split())
        for p in parsed.params
        if p.arg_name
    }
    return description.strip(), params


def first_line(description: str) -> str:
    for line in description.splitlines():
        if line.strip():
            return line.strip()
    return ""
