"""Component help from Google, numpydoc and reST docstrings (docstring_parser): each flag gets its help,
and no raw parameter block lands in the description."""

from __future__ import annotations

import pytest

from jupyter_sched.components.builder import ComponentHelp, build_component
from jupyter_sched.specs import AppDef, Role


def _app(lr: float, epochs: int) -> AppDef:
    return AppDef("train", [Role("t", "img", entrypoint="echo", args=[str(lr), str(epochs)])])


def google(lr: float = 0.1, epochs: int = 3) -> AppDef:
    """Trains a model.

    Longer text about training.

    Args:
        lr: the learning rate,
            continued on a second line
        epochs: how many passes

    Returns:
        the app
    """
    return _app(lr, epochs)


def numpydoc(lr: float = 0.1, epochs: int = 3) -> AppDef:
    """Trains a model.

    Longer text about training.

    Parameters
    ----------
    lr : float
        the learning rate,
        continued on a second line
    epochs : int
        how many passes

    Returns
    -------
    AppDef
        the app
    """
    return _app(lr, epochs)


def rest(lr: float = 0.1, epochs: int = 3) -> AppDef:
    """Trains a model.

    Longer text about training.

    :param lr: the learning rate,
        continued on a second line
    :param epochs: how many passes
    :returns: the app
    """
    return _app(lr, epochs)


@pytest.mark.parametrize("fn", [google, numpydoc, rest], ids=["google", "numpydoc", "rest"])
def test_every_docstring_style_gives_flag_help(fn) -> None:  # type: ignore[no-untyped-def]
    comp = build_component(f"t.{fn.__name__}", fn)
    with pytest.raises(ComponentHelp) as info:
        comp.materialize(["--help"])
    text = info.value.text
    assert "Trains a model.\n\nLonger text about training." in text
    assert "  --lr (float, default: 0.1)\n      the learning rate, continued on a second line" in text
    assert "  --epochs (int, default: 3)\n      how many passes" in text
    for raw in ("Parameters", "----", ":param", "Args:", "Returns", "the app"):
        assert raw not in text, raw
    assert comp.summary == "Trains a model."
