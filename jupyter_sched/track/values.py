"""What a metric may be called and hold, checked at the call, and how a value is written as strict JSON.

Keys are ``[A-Za-z0-9_./-]``, 1 to 128 characters (``/`` groups keys: ``train/loss``), so a key never needs
escaping in JSON, a file name or a URL. Values are numbers: ``int``, ``float``, ``bool`` and anything
``float()`` takes that is not text (NumPy and torch scalars, a one-element tensor, ``Decimal``). Non-finite
values are kept, as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``: strict JSON, which a
browser's ``JSON.parse`` accepts, where Python's ``json`` would write bare ``NaN``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional, Union

KEY_RE = re.compile(r"[A-Za-z0-9_./-]{1,128}")
MAX_KEY = 128
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
"""The strings that stand for non-finite values in every file and body."""


def check_key(key: Any) -> str:
    """``key`` if it is a valid metric key, else a ValueError (or TypeError) naming it and the rule."""
    if not isinstance(key, str):
        raise TypeError(f"metric key {key!r} is a {type(key).__name__}; keys are strings like 'loss' or 'train/acc'")
    if KEY_RE.fullmatch(key) is None:
        why = "is empty" if not key else "has other characters"
        if len(key) > MAX_KEY:
            why = f"is {len(key)} characters long"
        raise ValueError(f"metric key {key!r} {why}: use 1 to {MAX_KEY} of A-Z a-z 0-9 _ . / - (e.g. 'train/loss')")
    return key


def to_number(key: str, value: Any) -> float:
    """``value`` as a float (``float()`` of it), or a TypeError naming ``key`` and the value's type."""
    if isinstance(value, (str, bytes, bytearray)) or not hasattr(type(value), "__float__"):
        raise TypeError(
            f"metric {key!r}: a {type(value).__module__}.{type(value).__qualname__} is not a number;"
            " log an int, float, bool or a NumPy/torch scalar (e.g. loss.item())"
        )
    try:
        return float(value)
    except (TypeError, ValueError) as e:  # a tensor of several elements, an array
        raise TypeError(
            f"metric {key!r}: {type(value).__module__}.{type(value).__qualname__} is not a scalar ({e});"
            " log one number per key"
        ) from None


def encode_number(value: float) -> str:
    """``value`` as a JSON token: ``repr`` of a finite float (exact, and valid JSON), else the quoted name."""
    if value != value:
        return '"NaN"'
    if value in (math.inf, -math.inf):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    return repr(value)


def json_value(value: float) -> Union[float, str]:
    """``value`` as a JSON encoder should get it: the float, or its name in :data:`NON_FINITE` (what
    :func:`encode_number` writes, for code that builds objects for ``json.dumps``)."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def decode_number(token: Any) -> Optional[float]:
    """A stored value back as a float (the non-finite strings included), else None."""
    if isinstance(token, bool):
        return float(token)
    if isinstance(token, (int, float)):
        return float(token)
    if isinstance(token, str):
        return NON_FINITE.get(token)
    return None


SummaryValue = Union[None, bool, int, float, str]


def to_summary_value(key: str, value: Any) -> SummaryValue:
    """A value of ``track.summary``: a number (as :func:`to_number`), text, or None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return value
    return to_number(key, value)
