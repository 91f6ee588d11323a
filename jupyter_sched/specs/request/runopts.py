"""Run options: what a scheduler accepts as ``cfg``, and the ``k=v,k2=v2`` string form users type.

Unlike TorchX, mistakes are errors, not silent surprises: an unknown key names the valid keys, and an
ambiguous boolean such as ``yes`` or ``1`` is rejected instead of quietly becoming False. A numeric option
is a count or a duration (``cancel_grace``), so ``nan``, ``inf`` and negative values are refused too.
"""

from __future__ import annotations

import difflib
import math
import typing
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from jupyter_sched.specs.errors import InvalidRunConfigException
from jupyter_sched.specs.output.masking import mask_tree

CfgVal = Union[str, int, float, bool, List[str], Dict[str, str], None]
Cfg = Mapping[str, CfgVal]


@dataclass
class runopt:  # noqa: N801 (public name of the interface)
    """One run option: its default, type, whether it is required, and its help text."""

    default: CfgVal
    opt_type: Any
    is_required: bool
    help: str

    def cast(self, key: str, value: str) -> CfgVal:
        """Casts the string ``value`` of option ``key`` to this option's type, or says why it can't."""
        tp = self.opt_type
        if tp is bool:
            low = value.strip().lower()
            if low in ("true", "false"):
                return low == "true"
            raise InvalidRunConfigException(
                f"run option {key}={value!r} is not a boolean; write {key}=true or {key}=false", key
            )
        if _is_list_type(tp):
            return [v.strip() for v in _split_items(value) if v.strip()]
        if _is_dict_type(tp):
            out: Dict[str, str] = {}
            for item in _split_items(value):
                if not item.strip():
                    continue
                k, sep, v = item.partition(":")
                if not sep:
                    raise InvalidRunConfigException(
                        f"run option {key}: item {item!r} is not KEY:VALUE; write e.g. {key}=A:1,B:2", key
                    )
                out[k.strip()] = v
            return out
        if tp is str:
            return value
        try:
            number = tp(value)
        except (TypeError, ValueError):
            raise InvalidRunConfigException(
                f"run option {key}={value!r} is not a valid {_type_name(tp)}", key
            ) from None
        check_number(key, number)
        return number


def check_number(key: str, value: Any) -> None:
    """A numeric run option must be finite and 0 or more (every one is a count or a duration)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if not math.isfinite(value) or value < 0:
        raise InvalidRunConfigException(
            f"run option {key}={value!r} must be a finite number, 0 or more (e.g. {key}=10)", key
        )


def _split_items(value: str) -> List[str]:
    return value.replace(";", ",").split(",")


def _origin(tp: Any) -> Any:
    return typing.get_origin(tp) or tp


def _is_list_type(tp: Any) -> bool:
    return _origin(tp) in (list, List)


def _is_dict_type(tp: Any) -> bool:
    return _origin(tp) in (dict, Dict)


def _type_name(tp: Any) -> str:
    if _is_list_type(tp):
        return "List[str]"
    if _is_dict_type(tp):
        return "Dict[str, str]"
    return getattr(tp, "__name__", str(tp))


class runopts:  # noqa: N801 (public name of the interface)
    """The run options of a scheduler: a ``--help`` for its ``cfg``."""

    def __init__(self) -> None:
        self._opts: Dict[str, runopt] = {}

    @staticmethod
    def is_type(obj: CfgVal, tp: Any) -> bool:
        """True if ``obj`` is of type ``tp``; understands ``List[str]`` and ``Dict[str, str]``."""
        if _is_list_type(tp):
            return isinstance(obj, list) and all(isinstance(x, str) for x in obj)
        if _is_dict_type(tp):
            return isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items())
        if tp is float:
            return isinstance(obj, (int, float)) and not isinstance(obj, bool)
        if tp is int:
            return isinstance(obj, int) and not isinstance(obj, bool)
        return isinstance(obj, tp)

    def add(self, cfg_key: str, type_: Any, help: str, default: CfgVal = None, required: bool = False) -> None:
        """Declares an option. A required option cannot have a default; a default must match the type."""
        if required and default is not None:
            raise ValueError(f"required option {cfg_key!r} cannot have a default (got {default!r})")
        if default is not None and not runopts.is_type(default, type_):
            raise TypeError(f"option {cfg_key!r}: default {default!r} is not of type {_type_name(type_)}")
        self._opts[cfg_key] = runopt(default, type_, required, help)

    def get(self, name: str) -> Optional[runopt]:
        return self._opts.get(name)

    def update(self, other: "runopts") -> None:
        self._opts.update(other._opts)

    def __iter__(self) -> Iterator[Tuple[str, runopt]]:
        return iter(self._opts.items())

    def __len__(self) -> int:
        return len(self._opts)

    def _unknown(self, key: str, cfg: Optional[Cfg]) -> InvalidRunConfigException:
        close = difflib.get_close_matches(key, list(self._opts), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        valid = ", ".join(self._opts) or "(none)"
        return InvalidRunConfigException(f"Unknown run option {key!r}.{hint} Valid options: {valid}", key, cfg)

    def resolve(self, cfg: Optional[Cfg]) -> Dict[str, CfgVal]:
        """A new dict with defaults filled in; raises on unknown keys, missing required ones, bad types."""
        cfg = dict(cfg or {})
        for key in cfg:
            if key not in self._opts:
                raise self._unknown(key, cfg)
        resolved: Dict[str, CfgVal] = {}
        for key, opt in self._opts.items():
            val = cfg.get(key)
            if val is None:
                if opt.is_required:
                    raise InvalidRunConfigException(
                        f"Required run option {key!r} is missing; set it with --cfg {key}=...", key, cfg
                    )
                resolved[key] = opt.default
                continue
            if not runopts.is_type(val, opt.opt_type):
                shown = mask_tree({key: val})[key]  # a mistyped env may still hold secrets
                raise InvalidRunConfigException(
                    f"Run option {key}={shown!r} should be of type {_type_name(opt.opt_type)},"
                    f" got {type(val).__name__}",
                    key,
                    cfg,
                )
            check_number(key, val)
            resolved[key] = val
        return resolved

    def check_value(self, key: str, value: CfgVal) -> None:
        """Raises InvalidRunConfigException when a typed ``value`` of option ``key`` is out of range."""
        check_number(key, value)

    def cfg_from_str(self, cfg_str: str) -> Dict[str, CfgVal]:
        """Parses ``k=v,k2=v2`` (``,`` or ``;`` between pairs) into typed values.

        List and dict values may themselves contain ``,``/``;``: a pair ends at the *last* separator
        before the next ``key=`` (``copy_env=FOO_*,BAR_*,privileged=true``). ``''`` or ``""`` is an
        empty string; a value cannot contain ``=``.
        """
        out: Dict[str, CfgVal] = {}
        for key, raw in _pairs(cfg_str):
            opt = self._opts.get(key)
            if opt is None:
                raise self._unknown(key, None)
            out[key] = opt.cast(key, raw)
        return out

    def __repr__(self) -> str:
        required = [(k, o) for k, o in self._opts.items() if o.is_required]
        optional = [(k, o) for k, o in self._opts.items() if not o.is_required]
        usage = ",".join(
            (f"{k}={k.upper()}" if o.is_required else f"[{k}={k.upper()}]") for k, o in required + optional
        )
        out = ["    usage:", f"        {usage}", ""]
        for title, group in (("required arguments:", required), ("optional arguments:", optional)):
            if not group:
                continue
            out.append(f"    {title}")
            for key, opt in group:
                default = "" if opt.is_required else f", {opt.default!r}"
                out.append(f"        {key}={key.upper()} ({_type_name(opt.opt_type)}{default})")
                out.append(f"            {opt.help}")
            out.append("")
        return "\n".join(out).rstrip() + "\n"


def _pairs(cfg_str: str) -> List[Tuple[str, str]]:
    """Splits ``k=v,k2=v2`` into (key, raw value) pairs with the last-separator rule. Text that does not
    parse is an InvalidRunConfigException (a ValueError), whose message masks the secrets it quotes."""
    text = cfg_str.strip()
    if not text:
        return []
    chunks = text.split("=")
    if len(chunks) < 2:
        raise InvalidRunConfigException(f"run options {cfg_str!r} are not of the form key=value[,key2=value2]", "")
    pairs: List[Tuple[str, str]] = []
    key = chunks[0].strip()
    for i, chunk in enumerate(chunks[1:], start=1):
        if i == len(chunks) - 1:
            value, next_key = chunk, ""
        else:
            cut = max(chunk.rfind(","), chunk.rfind(";"))
            if cut < 0:
                raise InvalidRunConfigException(
                    f"run options {cfg_str!r}: cannot tell where the value of {key!r} ends;"
                    " values cannot contain '=', and pairs are separated by ',' or ';'",
                    key,
                )
            value, next_key = chunk[:cut], chunk[cut + 1 :].strip()
        if not key:
            raise InvalidRunConfigException(f"run options {cfg_str!r}: a value has no key before '='", "")
        if value.strip() in ("''", '""'):
            value = ""
        elif value == "":
            raise InvalidRunConfigException(f"run option {key!r} has no value; write {key}='' for an empty string", key)
        pairs.append((key, value))
        key = next_key
    return pairs


def get_type_name(tp: Any) -> str:
    """A type's name for help text: ``int``, ``list``, or ``typing.List[int]`` for a generic alias (whose
    plain ``__name__`` would hide its parameters)."""
    if getattr(tp, "__module__", None) != "typing" and hasattr(tp, "__name__") and not typing.get_args(tp):
        return tp.__name__
    return str(tp)
