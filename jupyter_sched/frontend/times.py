"""``--since``/``--until`` times, as both front ends accept them: an ISO time or an age such as ``5m``.

Hand-written because the forms are two and small: ``datetime.fromisoformat`` reads ISO 8601 (``Z`` included),
and an age is a number and one unit letter. A date library would accept much more than we document.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import List, Optional

from jupyter_sched.frontend.errors import UsageError

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
FORMS = "an ISO time (2024-05-01T12:00:00, 2024-05-01T12:00:00Z) or an age (30s, 5m, 2h, 1d)"


def parse_time(text: str, flag: str) -> datetime:
    """``2024-05-01T12:00:00`` (ISO 8601, local time unless it has an offset or ``Z``) or ``30s``/``5m``/
    ``2h``/``1d`` ago. Anything else, or an age reaching before year 1, is a :class:`UsageError` naming
    ``flag``."""
    text = text.strip()
    match = _AGE.match(text)
    if match:
        try:
            return datetime.now() - timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
        except (OverflowError, ValueError):  # more days than a datetime can go back
            raise UsageError(
                f"{flag} {text!r}: that age reaches back before year 1; give a smaller age or {FORMS}"
            ) from None
    try:  # before 3.11 fromisoformat rejects a "Z" suffix: read it as +00:00
        return datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    except ValueError:
        raise UsageError(f"{flag} {text!r}: not a time; write {FORMS}") from None


def check_window(since: Optional[datetime], until: Optional[datetime], texts: List[str]) -> None:
    """``--since`` after ``--until`` can match nothing: say so instead of printing nothing."""
    if since is None or until is None:
        return
    try:
        backwards = since > until
    except TypeError:  # one has a UTC offset and the other not: compare both as local times
        backwards = since.astimezone() > until.astimezone()
    if backwards:
        raise UsageError(f"--since {texts[0]} is after --until {texts[1]}; nothing could match")
