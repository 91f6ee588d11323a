from typing import Dict, List, Optional, Set, Tuple, Union

import pytest

from jupyter_sched.components.types import (
    BadValue,
    ParamType,
    UnsupportedType,
    classify,
    parse_pairs,
)


@pytest.mark.parametrize(
    "annotation, expected",
    [
        (str, "str"),
        (int, "int"),
        (float, "float"),
        (bool, "bool"),
        (List[str], "List[str]"),
        (list[int], "List[int]"),
        (list, "List[str]"),
        (Dict[str, str], "Dict[str, str]"),
        (dict[str, int], "Dict[str, int]"),
        (Optional[int], "Optional[int]"),
        (Optional[List[str]], "Optional[List[str]]"),
        (int | None, "Optional[int]"),
        (Union[None, Dict[str, float]], "Optional[Dict[str, float]]"),
    ],
)
def test_supported_annotations(annotation, expected) -> None:  # type: ignore[no-untyped-def]
    assert str(classify(annotation)) == expected


@pytest.mark.parametrize(
    "annotation",
    [Set[str], Tuple[int, int], Dict[int, str], List[List[str]], Union[int, str], object, bytes],
)
def test_unsupported_annotations_say_what_is_supported(annotation) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnsupportedType, match=r"not supported; use str, int, float, bool"):
        classify(annotation)


def test_scalars_parse_and_reject_with_the_reason() -> None:
    assert ParamType("scalar", int).parse("-3") == -3
    assert ParamType("scalar", float).parse("2.5") == 2.5
    assert ParamType("scalar", bool).parse("TRUE") is True
    assert ParamType("scalar", bool).parse("false") is False
    with pytest.raises(BadValue, match=r"'yes' is not a boolean; write true or false"):
        ParamType("scalar", bool).parse("yes")
    with pytest.raises(BadValue, match=r"'x' is not a valid int"):
        ParamType("scalar", int).parse("x")


def test_lists_split_on_commas_and_cast_items() -> None:
    assert ParamType("list", str).parse("a, b,,c") == ["a", "b", "c"]
    assert ParamType("list", int).parse("1,2") == [1, 2]
    with pytest.raises(BadValue, match="'two' is not a valid int"):
        ParamType("list", int).parse("1,two")


def test_dict_pairs_keep_commas_and_equals_inside_values() -> None:
    assert parse_pairs("A=1,B=2") == {"A": "1", "B": "2"}
    assert parse_pairs("PATHS=/a,/b,N=x=y") == {"PATHS": "/a,/b", "N": "x=y"}
    assert parse_pairs("") == {}
    assert ParamType("dict", int).parse("a=1,b=2") == {"a": 1, "b": 2}
    with pytest.raises(BadValue, match="is not KEY=VALUE"):
        parse_pairs("novalue")
    with pytest.raises(BadValue, match="has no key"):
        parse_pairs("=1")


def test_coerce_accepts_typed_config_values_and_text() -> None:
    assert ParamType("scalar", int).coerce(3) == 3
    assert ParamType("scalar", float).coerce(3) == 3.0
    assert ParamType("scalar", int).coerce("4") == 4
    assert ParamType("list", str).coerce(["a,b", "c"]) == [
        "a,b",
        "c",
    ]  # list items are not split again
    assert ParamType("dict", str).coerce({"A": "1"}) == {"A": "1"}
    assert ParamType("scalar", str, optional=True).coerce(None) is None
    with pytest.raises(BadValue, match="expected int, got True"):
        ParamType("scalar", int).coerce(True)
    with pytest.raises(BadValue, match="expected a list"):
        ParamType("list", str).coerce(5)
    with pytest.raises(BadValue, match="expected a table"):
        ParamType("dict", str).coerce([1])
