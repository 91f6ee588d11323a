"""papermill's parameter conventions, pure: the injected cell's literals and place (no kernel)."""

from __future__ import annotations

import pytest

from jupyter_sched.functions.notebooks import params


def nb(*cells: dict, minor: int = 5) -> dict:
    return {"nbformat": 4, "nbformat_minor": minor, "metadata": {}, "cells": list(cells)}


def code(text: str, *tags: str, cell_id: str = "") -> dict:
    cell: dict = {"cell_type": "code", "source": text, "metadata": {"tags": list(tags)}, "outputs": []}
    cell["execution_count"] = None
    if cell_id:
        cell["id"] = cell_id
    return cell


def test_json_values_become_python_literals_and_other_types_are_refused() -> None:
    text = params.cell_source({"a": 'it\'s "x"', "b": float("nan"), "c": [1, {"k": None}], "d": True}, {"e": "2 ** 3"})
    assert text == "# Parameters\na = 'it\\'s \"x\"'\nb = float('nan')\nc = [1, {'k': None}]\nd = True\ne = 2 ** 3\n"
    assert eval(text.splitlines()[1].split(" = ", 1)[1]) == 'it\'s "x"'
    with pytest.raises(TypeError, match=r"parameter when is a datetime.*raw=\{'when'"):
        import datetime

        params.cell_source({"when": datetime.datetime(2020, 1, 1)}, {})


def test_the_injected_cell_follows_the_parameters_cell_and_replaces_an_earlier_one() -> None:
    book = nb(code("x = 1"), code("lr = 0.1", "parameters", cell_id="p"), code("print(lr)"))
    book, has = params.inject(book, {"lr": 0.5})
    assert has and [c["metadata"]["tags"] for c in book["cells"]] == [[], ["parameters"], ["injected-parameters"], []]
    book, _ = params.inject(book, {"lr": 0.7})
    assert len(book["cells"]) == 4, "an earlier injected cell is replaced, not added to"
    assert book["cells"][2]["source"] == "# Parameters\nlr = 0.7\n"
    assert book["metadata"]["papermill"]["parameters"] == {"lr": 0.7}
    old, has = params.inject(nb(code("print(1)"), minor=4), {"a": 1})
    assert not has and old["cells"][0]["metadata"]["tags"] == ["injected-parameters"]
    assert "id" not in old["cells"][0], "nbformat 4.4 has no cell ids"
