"""TorchX's ``ModuleComponentsFinder(module, group)`` and the package predicates, over a real package."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Iterator

import pytest

from jupyter_sched.specs.file_linter import no_docstring_description
from jupyter_sched.specs.finder import (
    ModuleComponentsFinder,
    get_components,
    is_namespace_package,
    is_package,
)

COMPONENT = '''
from jupyter_sched.specs import AppDef, Role


def {fn}(msg: str = "hi") -> AppDef:
    """Echoes {fn}."""
    return AppDef("{fn}", [Role("r", "img", entrypoint="echo", args=[msg])])
'''

FILES = {
    "jsched_mf/__init__.py": COMPONENT.format(fn="root"),
    "jsched_mf/bar/__init__.py": "",
    "jsched_mf/bar/baz.py": COMPONENT.format(fn="echo")
    + '\n\ndef untyped(x) -> AppDef:\n    return AppDef("u")\n\n\ndef helper() -> int:\n    return 1\n',
    "jsched_mf/_hidden.py": COMPONENT.format(fn="secret"),
    "jsched_ns/inner.py": COMPONENT.format(fn="nsfn"),  # jsched_ns has no __init__.py
}


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path


def names(module: str, group: str) -> list:  # type: ignore[type-arg]
    return [c.name for c in ModuleComponentsFinder(module, group).find()]


def test_names_follow_the_module_path_below_the_searched_one(package: Path) -> None:
    assert names("jsched_mf", "") == ["bar.baz.echo", "bar.baz.untyped", "root"]
    assert names("jsched_mf.bar", "abc") == ["abc.baz.echo", "abc.baz.untyped"]
    assert names("jsched_mf.bar.baz", "") == ["echo", "untyped"]
    assert names("jsched_mf.bar.baz", "my_echo") == ["my_echo.echo", "my_echo.untyped"]
    # a module object works as well as its name; a namespace package is searched when given
    assert names(importlib.import_module("jsched_mf.bar"), "") == ["baz.echo", "baz.untyped"]
    assert names("jsched_ns", "ns") == ["ns.inner.nsfn"]


def test_found_components_carry_description_function_and_problems(package: Path) -> None:
    found = {c.name: c for c in ModuleComponentsFinder("jsched_mf.bar", "").find()}
    echo, untyped = found["baz.echo"], found["baz.untyped"]
    assert (echo.description, echo.fn_name, echo.validation_errors) == ("Echoes echo.", "echo", [])
    assert echo.fn("yo").roles[0].args == ["yo"]
    assert len(untyped.validation_errors) == 1 and "'x'" in untyped.validation_errors[0]
    assert untyped.description == no_docstring_description("untyped")
    assert untyped.description.startswith("untyped TIP: improve this help string by adding a docstring\n")


def test_the_builtins_are_what_the_components_package_holds() -> None:
    builtins = names("jupyter_sched.components", "")
    assert builtins == ["dist.ddp", "dist.spmd", "utils.booth", "utils.echo", "utils.python", "utils.sh",
                        "utils.touch"]  # fmt: skip
    assert set(builtins) <= set(get_components())


def test_package_predicates(package: Path) -> None:
    pkg, mod, ns = (importlib.import_module(n) for n in ("jsched_mf", "jsched_mf.bar.baz", "jsched_ns"))
    assert (is_package(pkg), is_namespace_package(pkg)) == (True, False)
    assert (is_package(mod), is_namespace_package(mod)) == (False, False)
    assert (is_package(ns), is_namespace_package(ns)) == (True, True)
