"""A component function -> its flags, usage and help; command-line arguments -> the AppDef it returns.

Flag syntax (the same from a terminal, a script and the ``%sched_run`` magic):

* every parameter ``name`` is ``--name VALUE`` or ``--name=VALUE`` (``--some-name`` works for ``some_name``);
  a one-letter parameter is also ``-x VALUE``;
* a ``bool`` is ``--flag`` (true), ``--flag true`` or ``--flag false``;
* lists and dicts take comma-separated text (see :mod:`jupyter_sched.components.types`); repeating a list or
  dict flag adds to it, repeating any other flag is an error;
* ``*args`` is everything from the first argument that is not a flag (or everything after ``--``), so put
  flags before the command: ``utils.sh --num_replicas 2 echo hello``;
* a component may mark flags after which the rest of the line is ``*args`` (see :func:`rest_after`):
  ``utils.python -m train --lr 1`` passes ``--lr 1`` to ``train``, as ``python -m`` does;
* ``--help`` (and ``-h`` unless the component has a parameter ``h``) asks for the help.

Precedence: flags, then ``defaults`` (e.g. from the project's config file), then the function's defaults.
"""

from __future__ import annotations

import difflib
import inspect
import re
import shlex
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from jupyter_sched.components.docstrings import first_line, parse_docstring
from jupyter_sched.components.errors import (
    ComponentArgError,
    ComponentHelp,
    ComponentValidationError,
    MisplacedFlagError,
)
from jupyter_sched.components.types import BadValue, ParamType, UnsupportedType, classify
from jupyter_sched.specs import AppDef

_REQUIRED = inspect.Parameter.empty
_REST_AFTER = "__jupyter_sched_rest_after__"


def rest_after(*flags: str) -> Callable[[Callable[..., AppDef]], Callable[..., AppDef]]:
    """Decorates a component with ``*args``: after the value of any of ``flags``, the rest of the command
    line is ``*args`` even if it looks like flags (``python -m MODULE ARGS...`` semantics)."""

    def mark(fn: Callable[..., AppDef]) -> Callable[..., AppDef]:
        setattr(fn, _REST_AFTER, tuple(flags))
        return fn

    return mark


_NUMBER = re.compile(r"^-\d+(\.\d*)?$")


@dataclass
class Flag:
    """One keyword parameter of a component."""

    name: str
    type: ParamType
    default: Any
    help: str = ""
    positional: bool = False
    """True for a positional-or-keyword parameter before ``*args`` (it must be passed by position)."""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def is_bool(self) -> bool:
        return self.type.kind == "scalar" and self.type.item is bool

    @property
    def spelling(self) -> str:
        return f"--{self.name}"

    def usage(self) -> str:
        names = f"-{self.name}" if len(self.name) == 1 else f"--{self.name}"
        text = f"{names} [true|false]" if self.is_bool else f"{names} {self.type.metavar}"
        return text if self.required else f"[{text}]"


@dataclass
class Component:
    """A component: a typed function returning an AppDef, known under ``name``."""

    name: str
    fn: Callable[..., AppDef]
    description: str
    flags: Dict[str, Flag]
    varargs: Optional[str] = None
    """The name of the ``*args`` parameter, if the component takes one."""
    varargs_help: str = ""
    origin: str = ""
    """Where it was found: ``builtin``, ``entry point <name>``, or a file or module path."""
    rest_after: Tuple[str, ...] = ()
    """Flags whose value ends the flags: what follows is ``*args`` (see :func:`rest_after`)."""
    _aliases: Dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def summary(self) -> str:
        """The first line of the docstring (what ``jupyter-sched builtins`` lists)."""
        return first_line(self.description)

    # -- documentation ------------------------------------------------------------------------------------
    def usage(self) -> str:
        parts = [f.usage() for f in self.flags.values()]
        if self.varargs:
            parts.append(f"[{self.varargs} ...]")
        if self.rest_after:
            parts = [
                p
                for p in parts
                if not any(p.strip("[]").split()[0].lstrip("-") == f for f in self.rest_after)
            ]
            parts.insert(
                len(parts) - 1,
                "[" + " | ".join(self.flags[f].usage().strip("[]") for f in self.rest_after) + "]",
            )
        return _wrap(f"usage: {self.name}", parts)

    def help(self) -> str:
        out = [self.usage(), ""]
        if self.description:
            out += [self.description, ""]
        if self.varargs:
            out += [
                "positional arguments:",
                f"  {self.varargs} ...",
                f"      {self.varargs_help or '(the rest of the line)'}",
                "",
            ]
        if self.flags:
            out.append("flags:")
            for flag in self.flags.values():
                names = f"-{flag.name}, --{flag.name}" if len(flag.name) == 1 else f"--{flag.name}"
                default = "required" if flag.required else f"default: {flag.default!r}"
                out.append(f"  {names} ({flag.type}, {default})")
                if flag.help:
                    out.append(f"      {flag.help}")
        return "\n".join(out).rstrip() + "\n"

    # -- parsing -----------------------------------------------------------------------------------------------
    def _error(self, problem: str, flag: Optional[str] = None) -> ComponentArgError:
        return ComponentArgError(self.name, problem, self.usage(), flag)

    def _lookup(self, token: str) -> Tuple[Flag, Optional[str]]:
        """The flag a ``-x``/``--name[=value]`` token names, and its inline value."""
        body, eq, inline = token.partition("=")
        long = body.startswith("--")
        key = body[2:] if long else body[1:]
        name = self._aliases.get(key) if (long or len(key) == 1) else None
        if name is None:
            candidates = [f"--{n}" for n in self.flags] + [
                f"-{n}" for n in self.flags if len(n) == 1
            ]
            close = difflib.get_close_matches(body, candidates, n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            if not long and len(key) > 1 and key.replace("-", "_") in self.flags:
                hint = f" Long flags take two dashes: --{key}."
            known = ", ".join(f"--{n}" for n in self.flags) or "none"
            raise self._error(f"unknown flag {body}.{hint} Flags: {known}", body)
        return self.flags[name], (inline if eq else None)

    def parse(
        self,
        args: List[str],
        defaults: Optional[Mapping[str, Any]] = None,
        defaults_origin: Optional[str] = None,
    ) -> Tuple[List[Any], Dict[str, Any]]:
        """Positional and keyword arguments for the function; raises ComponentArgError or ComponentHelp.

        ``defaults_origin`` says where ``defaults`` came from (e.g. the config file and table), so that an
        error in them names the place to fix."""
        values: Dict[str, Any] = {}
        rest: List[str] = []
        # where the flags ended without a `--`: (index of the token that ended them, index of the first *args
        # word); the words from there on are checked for this component's own flags
        flags_end: Optional[Tuple[int, int]] = None
        i = 0
        while i < len(args):
            token = args[i]
            if token == "--":
                rest = list(args[i + 1 :])
                break
            if token == "--help" or (token == "-h" and "h" not in self.flags):
                raise ComponentHelp(self.help())
            if not token.startswith("-") or token == "-" or _NUMBER.match(token):
                if not self.varargs:
                    raise self._error(
                        f"unexpected argument {token!r}: {self.name} takes only flags"
                        + (
                            f" (did you mean --{next(iter(self.flags))} {token}?)"
                            if self.flags
                            else ""
                        )
                    )
                rest = list(args[i:])
                flags_end = (i, i)
                break
            flag_at = i
            flag, inline = self._lookup(token)
            if flag.is_bool and inline is None:
                nxt = args[i + 1] if i + 1 < len(args) else None
                if nxt is not None and nxt.lower() in ("true", "false"):
                    inline, i = nxt, i + 1
                else:
                    inline = "true"
            elif inline is None:
                if i + 1 >= len(args):
                    hint = "; for the help, use --help" if token == "-h" else ""
                    raise self._error(
                        f"flag {flag.spelling} needs a value ({flag.type}){hint}", flag.spelling
                    )
                inline, i = args[i + 1], i + 1
            try:
                value = flag.type.parse(inline)
            except BadValue as e:
                raise self._error(
                    f"flag {flag.spelling} ({flag.type}): {e}", flag.spelling
                ) from None
            if flag.name in values:
                if flag.type.kind == "list":
                    value = values[flag.name] + value
                elif flag.type.kind == "dict":
                    value = {**values[flag.name], **value}
                else:
                    raise self._error(
                        f"flag {flag.spelling} is given more than once", flag.spelling
                    )
            values[flag.name] = value
            i += 1
            if flag.name in self.rest_after and self.varargs:
                rest = list(args[i:])
                if rest[:1] == ["--"]:  # TorchX's rule: a leading -- of *args is dropped
                    rest = rest[1:]
                else:
                    flags_end = (flag_at, i)
                break
        if flags_end is not None:
            self._check_rest(args, rest, *flags_end)

        where = defaults_origin or "defaults"
        for key, raw in (defaults or {}).items():
            name = self._aliases.get(str(key).lstrip("-"))
            if name is None:
                raise self._error(
                    f"{where}: unknown flag {key!r}. Flags: {', '.join(self.flags) or 'none'}", str(key)
                )
            if name in values:
                continue
            try:
                values[name] = self.flags[name].type.coerce(raw)
            except BadValue as e:
                raise self._error(
                    f"{where}: {key} = {raw!r}: {e}", self.flags[name].spelling
                ) from None

        missing = [f.spelling for f in self.flags.values() if f.required and f.name not in values]
        if missing:
            raise self._error(f"missing required flag {', '.join(missing)}", missing[0])
        positional: List[Any] = []
        keywords: Dict[str, Any] = {}
        for flag in self.flags.values():
            if flag.name not in values:
                if flag.positional:
                    positional.append(flag.default)
                continue
            if flag.positional:
                positional.append(values[flag.name])
            else:
                keywords[flag.name] = values[flag.name]
        return positional + rest, keywords

    def _check_rest(self, args: List[str], rest: List[str], flags_at: int, rest_at: int) -> None:
        """Refuses this component's own ``--flag`` among the ``*args`` words (up to a ``--``): TorchX passes
        every word after the first positional on, so ``utils.sh "hostname" --num_replicas 2`` would run
        ``hostname --num_replicas 2`` as one replica. The error shows the line with the flags first, and
        the line that passes them on (``--`` before the words)."""
        found: List[Tuple[int, int]] = []  # (start, end) of each flag and its value in `rest`
        names: List[str] = []
        j = 0
        while j < len(rest) and rest[j] != "--":
            token = rest[j]
            body, eq, _ = token.partition("=")
            name = self._aliases.get(body[2:]) if body.startswith("--") and len(body) > 2 else None
            if name is None:
                j += 1
                continue
            end = j + 1
            nxt = rest[end] if end < len(rest) else None
            if not eq and nxt is not None and nxt != "--":
                if not self.flags[name].is_bool or nxt.lower() in ("true", "false"):
                    end += 1
            found.append((j, end))
            names.append(body)
            j = end
        if not found:
            return
        moved = [t for start, end in found for t in rest[start:end]]
        taken = {k for start, end in found for k in range(start, end)}
        left = [t for k, t in enumerate(rest) if k not in taken]
        meant = [*args[:flags_at], *moved, *args[flags_at:rest_at], *left]
        escaped = [*args[:rest_at], "--", *rest]
        after = " ".join(shlex.quote(t) for t in args[flags_at:rest_at]) or shlex.quote(rest[0])
        what = self.varargs_help or "its arguments"
        args_help = f"{self.varargs} ({what})" if self.varargs else what
        raise MisplacedFlagError(self.name, list(dict.fromkeys(names)), after, args_help, self.usage(), meant, escaped)

    def materialize(
        self,
        args: List[str],
        defaults: Optional[Mapping[str, Any]] = None,
        defaults_origin: Optional[str] = None,
    ) -> AppDef:
        """Parses ``args`` and calls the function. ValueError/KeyError raised by the function (e.g. "give
        exactly one of -m, -c, --script") become ComponentArgError with the usage; any other exception is a
        bug in the component and becomes ComponentValidationError naming it and the line that raised (the
        original exception is the ``__cause__``)."""
        positional, keywords = self.parse(list(args), defaults, defaults_origin)
        try:
            app = self.fn(*positional, **keywords)
        except (ValueError, KeyError) as e:
            message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            raise self._error(str(message)) from e
        except Exception as e:  # noqa: BLE001 - reported with the component's name instead of a traceback
            raise ComponentValidationError(
                f"component {self.name} failed: {type(e).__name__}: {e}"
                f" (a bug in the component, raised at {_raised_at(e, self.fn)})"
            ) from e
        if not isinstance(app, AppDef):
            raise ComponentValidationError(
                f"component {self.name} returned {type(app).__name__}, not an AppDef; return AppDef(...)"
            )
        return app


def _raised_at(error: BaseException, fn: Callable[..., Any]) -> str:
    """``file:line`` where ``error`` left the component's own file (the line to look at), else where it was
    raised."""
    own = getattr(getattr(fn, "__code__", None), "co_filename", None)
    tb, found = error.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == own or (found is None and tb.tb_next is None):
            found = f"{code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found or "an unknown line"


def _wrap(head: str, parts: List[str], width: int = 100) -> str:
    lines, line = [], head
    for part in parts:
        if len(line) + 1 + len(part) > width and line.strip() != head.strip():
            lines.append(line)
            line = " " * len(head)
        line += " " + part
    lines.append(line)
    return "\n".join(lines)


def build_component(name: str, fn: Callable[..., Any], origin: str = "") -> Component:
    """Checks that ``fn`` is a valid component and describes it; ComponentValidationError names the problem."""
    if not callable(fn) or not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        kind = type(fn).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise ComponentValidationError(
            f"{name} is {article} {kind}, not a function returning an AppDef"
        )
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:  # noqa: BLE001 - any failure to resolve annotations is a validation error
        raise ComponentValidationError(
            f"component {name}: cannot resolve its type annotations ({e})"
        ) from None
    returns = hints.get("return")
    if returns is not AppDef:
        got = (
            "no return annotation"
            if returns is None
            else f"-> {getattr(returns, '__name__', returns)}"
        )
        raise ComponentValidationError(
            f"component {name} must be annotated `-> AppDef` (it has {got}); a component returns the AppDef to run"
        )
    description, helps = parse_docstring(fn.__doc__)
    flags: Dict[str, Flag] = {}
    varargs: Optional[str] = None
    params = list(inspect.signature(fn).parameters.values())
    has_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            raise ComponentValidationError(
                f"component {name}: **{p.name} cannot become flags; declare each flag as a typed parameter"
            )
        if p.kind is p.VAR_POSITIONAL:
            if hints.get(p.name, str) is not str:
                raise ComponentValidationError(
                    f"component {name}: *{p.name} must be annotated `*{p.name}: str` (the rest of the command line)"
                )
            varargs = p.name
            continue
        if p.name == "help":
            raise ComponentValidationError(
                f"component {name}: parameter 'help' cannot be a flag: --help shows the component's help;"
                " rename it"
            )
        if p.name not in hints:
            raise ComponentValidationError(
                f"component {name}: parameter {p.name!r} has no type annotation; annotate it, e.g. `{p.name}: str`"
            )
        try:
            ptype = classify(hints[p.name])
        except UnsupportedType as e:
            raise ComponentValidationError(f"component {name}: parameter {p.name!r}: {e}") from None
        if p.default is None and not ptype.optional:
            ptype = ParamType(ptype.kind, ptype.item, optional=True)
        positional = has_varargs and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        if p.kind is p.POSITIONAL_ONLY and not has_varargs:
            positional = True
        flags[p.name] = Flag(p.name, ptype, p.default, helps.get(p.name, ""), positional)
    aliases: Dict[str, str] = {}
    for flag_name in flags:
        aliases[flag_name] = flag_name
        aliases.setdefault(flag_name.replace("_", "-"), flag_name)
    vhelp = helps.get(varargs or "", "") if varargs else ""
    rest = tuple(getattr(fn, _REST_AFTER, ()))
    unknown = [f for f in rest if f not in flags]
    if unknown:
        raise ComponentValidationError(
            f"component {name}: rest_after names no parameter {unknown[0]!r}"
        )
    return Component(name, fn, description, flags, varargs, vhelp, origin, rest, aliases)
