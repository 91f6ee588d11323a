"""Checks that a function can be a component, and the help text of its flags (TorchX's module path).

``validate(path, fn)`` reads the Python source at ``path`` (the one module of ``specs`` that reads a file:
TorchX documents it here) and reports, without importing or running it, each parameter without a type,
each type a flag cannot take, and a missing or wrong return annotation. ``get_fn_docstring`` splits a
Google-style docstring (parsed with ``docstring_parser``, the library TorchX uses too) into the
description and per-parameter help. :class:`TorchXArgumentHelpFormatter` adds "(required)" or the
default to each flag's help. The messages are worded as TorchX's, which tools written for TorchX match.
"""

from __future__ import annotations

import argparse
import ast
import inspect
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import docstring_parser

__all__ = [
    "LinterMessage", "TorchXArgumentHelpFormatter", "TorchxFunctionArgsValidator", "TorchxFunctionValidator",
    "TorchxReturnValidator", "TorchFunctionVisitor", "get_fn_docstring", "no_docstring_description",
    "read_conf_file", "validate",
]  # fmt: skip

_SCALARS = {"str", "int", "float", "bool"}
_RETURN = "AppDef"
NO_HELP = " "
"""The help of a parameter the docstring does not describe (argparse shows nothing for it)."""


def no_docstring_description(name: str) -> str:
    """The description of component ``name`` that has no docstring: a tip on how to write one.

    These are TorchX's words, kept exactly: tools written for TorchX (and TorchX's own tests) compare a
    component's description, and the guide it links to describes our components as well as TorchX's.
    """
    return (
        f"{name} TIP: improve this help string by adding a docstring\n"
        "to your component (see: https://pytorch.org/torchx/latest/component_best_practices.html)"
    )


class TorchXArgumentHelpFormatter(
    argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter, argparse.MetavarTypeHelpFormatter
):
    """Keeps the description as written and ends each flag's help with ``(required)`` or its default."""

    def _get_help_string(self, action: argparse.Action) -> str:  # argparse's hook for exactly this
        text = action.help or ""
        if action.default is argparse.SUPPRESS:
            return text
        return f"{text} (required)" if action.required else f"{text} (default: {action.default})"


def get_fn_docstring(fn: Callable[..., object]) -> Tuple[str, Dict[str, str]]:
    """``(description, {parameter: help})`` from ``fn``'s Google-style docstring.

    The description is the summary line plus the long description; a parameter the docstring does not
    describe gets ``" "``. Without a docstring the description says how to add one.
    """
    helps = {name: NO_HELP for name in inspect.signature(fn).parameters}
    doc = inspect.getdoc(fn)
    fallback = no_docstring_description(fn.__name__)
    if not doc:
        return fallback, helps
    parsed = docstring_parser.parse(doc)
    for param in parsed.params:
        if param.description is not None:
            helps[param.arg_name.lstrip("*")] = param.description
    description = parsed.short_description or fallback
    if parsed.long_description:
        description += "\n" + parsed.long_description
    return description, helps


@dataclass
class LinterMessage:
    """One problem: what (``description``) and where (``line``, ``char``) in the file."""

    name: str
    description: str
    line: int
    char: int
    severity: str = "error"


class TorchxFunctionValidator:
    """Checks one aspect of a component's ``def``; subclasses implement :meth:`validate`."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        raise NotImplementedError

    def message(self, description: str, line: int) -> LinterMessage:
        return LinterMessage(type(self).__name__, description, line, 0)


class TorchxFunctionArgsValidator(TorchxFunctionValidator):
    """Every parameter (``*args`` and keyword-only ones included) has a type a flag can take: a scalar,
    ``Optional`` of one, or ``List``/``Dict`` of scalars."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        a = app_specs_func_def.args
        params = [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs]
        out: List[LinterMessage] = []
        for param in params:
            out += self._check(app_specs_func_def.name, param)
        return out

    def _check(self, fn: str, param: ast.arg) -> List[LinterMessage]:
        ann = param.annotation
        if ann is None:
            return [self.message(f"Arg {param.arg} missing type annotation", param.lineno)]
        if isinstance(ann, (ast.Name, ast.Attribute, ast.Constant)):
            return []
        if not isinstance(ann, ast.Subscript):
            return [self.message(f"`{fn}`: parameter `{param.arg}` has an unsupported annotation", param.lineno)]
        outer = _name(ann.value)
        if outer == "Optional":
            if not isinstance(ann.slice, ast.Subscript):
                return []
            ann = ann.slice
            outer = _name(ann.value)
        if outer not in ("Dict", "List", "dict", "list"):
            return [
                self.message(
                    # TorchX's words, which its users' tools match (no space after "types." there either)
                    f"`{fn}` allows only Dict, List as complex types.Argument `{param.arg}` has: {outer}",
                    param.lineno,
                )
            ]
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if any(not isinstance(item, (ast.Name, ast.Attribute)) for item in items):
            kind = "Dict" if outer.lower() == "dict" else "List"
            return [self.message(f"{kind} can only have primitive types", param.lineno)]
        return []


class TorchxReturnValidator(TorchxFunctionValidator):
    """The function is annotated to return an ``AppDef`` (``AppDef``, ``specs.AppDef`` or ``"AppDef"``)."""

    def validate(self, app_specs_func_def: ast.FunctionDef) -> List[LinterMessage]:
        ret = app_specs_func_def.returns
        name = _name(ret) if ret is not None else None
        if isinstance(ret, ast.Constant) and isinstance(ret.value, str):
            name = ret.value
        fn = app_specs_func_def.name
        if not name:
            problem = f"missing return annotation or has unknown annotations. Supported return annotation: {_RETURN}"
        elif name != _RETURN:
            problem = f"has incorrect return annotation, supported annotation: {_RETURN}"
        else:
            return []
        return [self.message(f"Function: {fn} {problem}", app_specs_func_def.lineno)]


class TorchFunctionVisitor(ast.NodeVisitor):
    """Finds ``def component_function_name`` anywhere in a module and runs the validators on it."""

    def __init__(self, component_function_name: str) -> None:
        self.validators: List[TorchxFunctionValidator] = [TorchxFunctionArgsValidator(), TorchxReturnValidator()]
        self.linter_errors: List[LinterMessage] = []
        self.component_function_name = component_function_name
        self.visited_function = False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802 (ast.NodeVisitor's naming)
        if node.name == self.component_function_name:
            self.visited_function = True
            for validator in self.validators:
                self.linter_errors += validator.validate(node)


def validate(path: str, component_function: str, source: Optional[str] = None) -> List[LinterMessage]:
    """The problems of ``component_function`` in the Python file at ``path`` (empty when it is a valid
    component). A syntax error or a missing function is reported as one message, never raised."""
    if source is None:
        source = read_conf_file(path)
    try:
        module = ast.parse(source, filename=path)
    except SyntaxError as e:
        return [LinterMessage("TorchXValidator", e.msg, e.lineno or 0, e.offset or 0)]
    visitor = TorchFunctionVisitor(component_function)
    visitor.visit(module)
    if not visitor.visited_function:
        return [LinterMessage("TorchXValidator", f"Function {component_function} not found", 0, 0)]
    return visitor.linter_errors


def read_conf_file(path: str) -> str:
    """The text of the file at ``path`` (UTF-8)."""
    with open(path, encoding="utf-8") as f:
        return f.read()


def _name(node: Optional[ast.AST]) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
