"""TorchX's finder classes: ``CustomComponentsFinder(path, fn).find()`` over a real component file."""

from __future__ import annotations

import pytest

from jupyter_sched.specs.finder import (
    ComponentNotFoundException,
    ComponentsFinder,
    ComponentValidationException,
    CustomComponentsFinder,
)

SOURCE = '''
from jupyter_sched.specs import AppDef, Role


def trainer(name: str, steps: int = 10) -> AppDef:
    """Trains for a while.

    Args:
        name: the app name
        steps: how long
    """
    return AppDef(name, [Role("t", "img", entrypoint="train", args=[str(steps)])])


def untyped(name) -> AppDef:
    return AppDef(name)
'''


def test_custom_finder_finds_the_function_in_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "comps.py"
    path.write_text(SOURCE)
    finder = CustomComponentsFinder(str(path), "trainer")
    assert isinstance(finder, ComponentsFinder)
    (found,) = finder.find()
    assert (found.name, found.fn_name, found.description) == (f"{path}:trainer", "trainer", "Trains for a while.")
    assert found.validation_errors == [] and found.fn("x").roles[0].args == ["10"]


def test_custom_finder_refuses_missing_and_invalid_functions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "comps.py"
    path.write_text(SOURCE)
    with pytest.raises(ComponentNotFoundException, match="nope"):
        CustomComponentsFinder(str(path), "nope").find()
    with pytest.raises(ComponentNotFoundException):
        CustomComponentsFinder(str(tmp_path / "absent.py"), "trainer").find()
    with pytest.raises(ComponentValidationException, match="name"):
        CustomComponentsFinder(str(path), "untyped").find()


def test_components_finder_is_abstract() -> None:
    with pytest.raises(TypeError):
        ComponentsFinder()  # type: ignore[abstract]
