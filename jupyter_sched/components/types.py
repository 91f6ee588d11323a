"""The parameter types a component may declare, and how command-line text becomes a value of one.

Supported: ``str``, ``int``, ``float``, ``bool``; ``List[T]`` / ``list[T]`` of those; ``Dict[str, T]`` /
``dict[str, T]``; and ``Optional[...]`` (or ``... | None``) of any of them. Anything else is rejected when the
component is loaded, naming the parameter.

Text forms: a bool is ``true`` or ``false`` (any case); a list is comma-separated (``a,b,c``); a dict is
``KEY=VALUE`` pairs separated by commas (``A=1,B=2``), where a piece without ``=`` continues the previous value
(``PATHS=/a,/b,N=1`` gives ``{"PATHS": "/a,/b", "N": "1"}``) and a value may itself contain ``=``.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Dict, List, Union

SCALARS = (str, int, float, bool)


class UnsupportedType(TypeError):
    """The annotation cannot be a component flag; the message says what is supported."""


class BadValue(ValueError):
    """Text that is not a valid value of the flag's type; the message says what is expected."""


@dataclass(frozen=True)
class ParamType:
    """A supported annotation: ``kind`` is ``scalar``, ``list`` or ``dict``; ``item`` the scalar type (of the
    value, for lists and dicts)."""

    kind: str
    item: type
    optional: bool = False

    def __str__(self) -> str:
        name = self.item.__name__
        text = {"scalar": name, "list": f"List[{name}]", "dict": f"Dict[str, {name}]"}[self.kind]
        return f"Optional[{text}]" if self.optional else text

    @property
    def metavar(self) -> str:
        return {
            "scalar": self.item.__name__.upper(),
            "list": f"{self.item.__name__.upper()},...",
            "dict": "KEY=VALUE,...",
        }[self.kind]

    def parse(self, text: str) -> Any:
        """Converts command-line text into a value of this type, or raises :class:`BadValue`."""
        if self.kind == "scalar":
            return parse_scalar(self.item, text)
        if self.kind == "list":
            return [
                parse_scalar(self.item, part.strip()) for part in text.split(",") if part.strip()
            ]
        return {k: parse_scalar(self.item, v) for k, v in parse_pairs(text).items()}

    def coerce(self, value: Any) -> Any:
        """Accepts a value from a config file: text is parsed like a flag, anything else must already have the
        right type (ints are accepted for floats). Raises :class:`BadValue`."""
        if value is None and self.optional:
            return None
        if isinstance(value, str):
            return self.parse(value)
        if self.kind == "scalar":
            return _check_scalar(self.item, value)
        if self.kind == "list":
            if not isinstance(value, (list, tuple)):
                raise BadValue(f"expected a list, got {value!r}")
            return [self._coerce_item(v) for v in value]
        if not isinstance(value, dict):
            raise BadValue(f"expected a table of KEY = VALUE, got {value!r}")
        return {str(k): self._coerce_item(v) for k, v in value.items()}

    def _coerce_item(self, value: Any) -> Any:
        if isinstance(value, str):
            return parse_scalar(self.item, value)
        return _check_scalar(self.item, value)


def _check_scalar(tp: type, value: Any) -> Any:
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, tp) and not (tp is int and isinstance(value, bool)):
        return value
    raise BadValue(f"expected {tp.__name__}, got {value!r}")


def parse_scalar(tp: type, text: str) -> Any:
    if tp is str:
        return text
    if tp is bool:
        low = text.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        raise BadValue(f"{text!r} is not a boolean; write true or false")
    try:
        return tp(text)
    except ValueError:
        raise BadValue(f"{text!r} is not a valid {tp.__name__}") from None


def parse_pairs(text: str) -> Dict[str, str]:
    """``A=1,B=2`` -> ``{"A": "1", "B": "2"}``; see the module docstring for commas and ``=`` in values."""
    out: Dict[str, str] = {}
    key = None
    for piece in text.split(","):
        if "=" in piece:
            key, _, value = piece.partition("=")
            key = key.strip()
            if not key:
                raise BadValue(f"{piece!r} has no key before '='; write KEY=VALUE")
            out[key] = value
        elif key is not None:
            out[key] += "," + piece
        elif piece.strip():
            raise BadValue(f"{piece!r} is not KEY=VALUE; write e.g. A=1,B=2")
    return out


_SUPPORTED = (
    "str, int, float, bool, List[T], Dict[str, T] (T one of those scalars) or Optional[...] of them"
)


def classify(annotation: Any) -> ParamType:
    """The :class:`ParamType` of a (resolved) annotation, or :class:`UnsupportedType`."""
    optional = False
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Union or isinstance(
        annotation, getattr(types, "UnionType", ())
    ):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(rest) == len(args):
            raise UnsupportedType(f"{_name(annotation)} is not supported; use {_SUPPORTED}")
        optional = True
        annotation = rest[0]
        args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if annotation in SCALARS:
        return ParamType("scalar", annotation, optional)
    if annotation in (list, List):
        return ParamType("list", str, optional)
    if annotation in (dict, Dict):
        return ParamType("dict", str, optional)
    if origin is list and len(args) == 1 and args[0] in SCALARS:
        return ParamType("list", args[0], optional)
    if origin is dict and len(args) == 2 and args[0] is str and args[1] in SCALARS:
        return ParamType("dict", args[1], optional)
    raise UnsupportedType(f"{_name(annotation)} is not supported; use {_SUPPORTED}")


def _name(annotation: Any) -> str:
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
