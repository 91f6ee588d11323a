"""App and role names are free text; this turns one into a safe path component or engine name.

TorchX accepts any text as an app or role name (``_ignored_``, ``my app``), and so do we. A name is
untrusted: it must never climb out of a log directory (``../x``), hide a file (``.x``), look like a
command-line option (``-x``) or break a Docker container, network or Slurm job name. Every backend runs a
name through :func:`safe_name` at the point where it becomes one of those, and keeps the original text
(labels, records, status) for display. Pure: no I/O.
"""

from __future__ import annotations

import re

__all__ = ["safe_name", "NAME_CHARS"]

NAME_CHARS = "A-Za-z0-9_.-"
_UNSAFE = re.compile(f"[^{NAME_CHARS}]+")
_LEADING = re.compile(r"^[._-]+")


def safe_name(name: str, fallback: str = "app", max_len: int = 63) -> str:
    """``name`` as ``[A-Za-z0-9][A-Za-z0-9_.-]*`` of at most ``max_len`` characters.

    Each run of other characters becomes one ``-``; leading ``.``, ``_`` and ``-`` are dropped, so the
    result is never ``.``, ``..``, hidden, or an option; text with nothing usable gives ``fallback``.
    The same name always gives the same result (callers rely on it to find a role's directory again).

    >>> safe_name("../x"), safe_name("_ignored_"), safe_name("my app/2"), safe_name("☃")
    ('x', 'ignored_', 'my-app-2', 'app')
    """
    text = _LEADING.sub("", _UNSAFE.sub("-", str(name)))[:max_len].rstrip("-.")
    return text or fallback
