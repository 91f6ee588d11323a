"""Rooms that show the house: every package says what it holds, and no folder is a heap.

A newcomer opens a package's ``__init__.py`` to find where something lives, so its docstring must name every
module and sub-package directly inside it (with a line on each, by convention). These tests read the files
(nothing is imported), so a new module that its package does not mention fails here, naming both.

- **Listed.** Each child of a package (a module other than ``__init__``, or a sub-package) is named in the
  package's docstring in double backticks: ````name````, ````name/````, ````name.py```` or a dotted
  ````wing.name````; ``:mod:`...name``` counts too. A word in running prose does not: "the state of a job"
  names nothing.
- **No heaps.** No folder holds more than :data:`MAX_MODULES` modules, counting its ``.py`` files other than
  ``__init__.py`` (sub-packages count as one room each, not by their modules). Past that, a folder gets
  sub-packages by what a newcomer looks for.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import List, Set

import pytest

PKG = Path(__file__).resolve().parents[1] / "jupyter_sched"
MAX_MODULES = 15
#: Folders under the package that are not Python packages of ours (the built JupyterLab extension).
NOT_CODE = {"labextension", "__pycache__"}

#: Packages whose docstrings do not list every module yet (none: issue 32 gave every package its list, the
#: package root included). ``test_not_yet_roomed_is_only_what_still_needs_it`` fails as soon as one listed
#: here passes, so a package put here for a while leaves again. The folder-size check has no exceptions.
NOT_YET_ROOMED: Set[str] = set()


def _packages() -> List[Path]:
    return sorted(
        path.parent for path in PKG.rglob("__init__.py") if not NOT_CODE.intersection(path.relative_to(PKG).parts)
    )


def _folders() -> List[Path]:
    return sorted(
        {path.parent for path in PKG.rglob("*.py") if not NOT_CODE.intersection(path.relative_to(PKG).parts)}
    )


def _name(package: Path) -> str:
    return ".".join((PKG.name, *package.relative_to(PKG).parts))


def _children(package: Path) -> List[str]:
    modules = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    packages = [p.name for p in package.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_CODE]
    return sorted(modules + packages)


def _named(docstring: str, child: str) -> bool:
    name = re.escape(child)
    return bool(
        re.search(rf"``(?:[\w.]+\.)?{name}(?:/|\.py)?``", docstring)
        or re.search(rf":mod:`~?(?:[\w.]*\.)?{name}`", docstring)
    )


def _unlisted(package: Path) -> List[str]:
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    return [child for child in _children(package) if not _named(docstring, child)]


@pytest.mark.parametrize("package", _packages(), ids=_name)
def test_a_packages_docstring_names_every_module_and_sub_package(package: Path) -> None:
    if _name(package) in NOT_YET_ROOMED:
        pytest.skip(f"{_name(package)} is in NOT_YET_ROOMED (issue 32)")
    unlisted = _unlisted(package)
    assert not unlisted, (
        f"{package.relative_to(PKG.parent)}/__init__.py does not name {unlisted} in its docstring: "
        "add a line for each (in double backticks) saying what it holds"
    )


def test_not_yet_roomed_is_only_what_still_needs_it() -> None:
    packages = {_name(package): package for package in _packages()}
    gone = sorted(NOT_YET_ROOMED - set(packages))
    done = sorted(name for name in NOT_YET_ROOMED & set(packages) if not _unlisted(packages[name]))
    assert not gone, f"NOT_YET_ROOMED names packages that no longer exist: {gone}"
    assert not done, f"{done} now list every room: remove them from NOT_YET_ROOMED"


@pytest.mark.parametrize("folder", _folders(), ids=_name)
def test_no_folder_holds_more_than_fifteen_modules(folder: Path) -> None:
    modules = sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= MAX_MODULES, (
        f"{folder.relative_to(PKG.parent)}/ holds {len(modules)} modules (at most {MAX_MODULES}): give it "
        f"sub-packages by what a newcomer looks for: {modules}"
    )
