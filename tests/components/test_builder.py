"""Component functions -> flags -> AppDef: every flag type, the help, and every error."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from jupyter_sched.components import (
    ComponentArgError,
    ComponentHelp,
    ComponentValidationError,
    MisplacedFlagError,
    build_component,
)
from jupyter_sched.components.builder import (
    rest_after,
)
from jupyter_sched.specs import AppDef, Role

CALLS: List[Dict[str, Any]] = []


def everything(
    *args: str,
    name: str = "app",
    count: int = 1,
    ratio: float = 0.5,
    debug: bool = False,
    tags: Optional[List[str]] = None,
    ports: List[int] = [],  # noqa: B006 - read only
    env: Optional[Dict[str, str]] = None,
    limits: Optional[Dict[str, int]] = None,
    x: Optional[str] = None,
    some_thing: str = "default",
) -> AppDef:
    """Records its arguments.

    More text of the description.

    Args:
        args: the command
        name: the app name
        count: how many;
            continued on a second line
    """
    CALLS.append(dict(args=list(args), name=name, count=count, ratio=ratio, debug=debug, tags=tags,
                      ports=ports, env=env, limits=limits, x=x, some_thing=some_thing))  # fmt: skip
    return AppDef(name, [Role("r", "img", entrypoint="echo", args=list(args))])


def required(file: str, mode: int = 1) -> AppDef:
    """Needs a file."""
    return AppDef("req", [Role("r", "img", entrypoint="touch", args=[file, str(mode)])])


def positional_then_rest(first: str, *rest: str, flag: bool = False) -> AppDef:
    return AppDef(first, [Role("r", "img", entrypoint="echo", args=[first, *rest, str(flag)])])


def picky(a: Optional[str] = None, b: Optional[str] = None) -> AppDef:
    if (a is None) == (b is None):
        raise ValueError("give exactly one of --a or --b")
    return AppDef("picky", [Role("r", "img", entrypoint="echo")])


def parse(*argv: str, defaults: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    CALLS.clear()
    build_component("t.everything", everything).materialize(list(argv), defaults)
    return CALLS[-1]


def test_defaults_when_no_flag_is_given() -> None:
    got = parse()
    assert got == dict(args=[], name="app", count=1, ratio=0.5, debug=False, tags=None, ports=[], env=None,
                       limits=None, x=None, some_thing="default")  # fmt: skip


def test_every_flag_type_and_spelling() -> None:
    got = parse(
        "--name", "n", "--count=3", "--ratio", "-1.5", "--debug", "--tags", "a,b", "--tags", "c",
        "--ports", "80,443", "--env", "A=1,B=x=y", "--env", "C=3", "--limits", "cpu=2", "-x", "xv",
        "--some-thing", "dashed", "cmd", "--not-a-flag", "-v",
    )  # fmt: skip
    assert got == dict(
        args=["cmd", "--not-a-flag", "-v"], name="n", count=3, ratio=-1.5, debug=True, tags=["a", "b", "c"],
        ports=[80, 443], env={"A": "1", "B": "x=y", "C": "3"}, limits={"cpu": 2}, x="xv", some_thing="dashed",
    )  # fmt: skip


@pytest.mark.parametrize(
    "argv, debug, rest",
    [
        (["--debug"], True, []),
        (["--debug", "false"], False, []),
        (["--debug", "True"], True, []),
        (["--debug=false"], False, []),
        (["--debug", "echo", "hi"], True, ["echo", "hi"]),  # a non-boolean word starts the command
    ],
)
def test_bool_flag_forms(argv: List[str], debug: bool, rest: List[str]) -> None:
    got = parse(*argv)
    assert (got["debug"], got["args"]) == (debug, rest)


def test_double_dash_starts_the_rest_even_before_flag_like_words() -> None:
    assert parse("--count", "2", "--", "--count", "3")["args"] == ["--count", "3"]
    assert parse("-1")["args"] == ["-1"]  # a negative number is not a flag


def test_positional_parameter_before_varargs_is_passed_by_position() -> None:
    comp = build_component("t.pos", positional_then_rest)
    app = comp.materialize(["--first", "f", "--flag", "a", "b"])
    assert app.roles[0].args == ["f", "a", "b", "True"]


@pytest.mark.parametrize(
    "argv, flag, message",
    [
        (["--cuont", "2"], "--cuont", r"unknown flag --cuont\. Did you mean --count\?"),
        (["-count", "2"], "-count", r"Long flags take two dashes: --count"),
        (["--count"], "--count", r"flag --count needs a value \(int\)"),
        (["--count", "two"], "--count", r"flag --count \(int\): 'two' is not a valid int"),
        (["--ratio", "x"], "--ratio", r"flag --ratio \(float\): 'x' is not a valid float"),
        (["--debug=maybe"], "--debug", r"'maybe' is not a boolean"),
        (["--name", "a", "--name", "b"], "--name", r"flag --name is given more than once"),
        (["--ports", "80,http"], "--ports", r"'http' is not a valid int"),
        (["--env", "oops"], "--env", r"'oops' is not KEY=VALUE"),
    ],
)
def test_flag_errors_name_the_flag_and_show_the_usage(
    argv: List[str], flag: str, message: str
) -> None:
    with pytest.raises(ComponentArgError, match=message) as info:
        parse(*argv)
    assert info.value.flag == flag
    assert "usage: t.everything [--name STR] [--count INT]" in str(info.value)
    assert str(info.value).startswith("t.everything: ")


def test_missing_required_flag_and_stray_positional() -> None:
    comp = build_component("t.required", required)
    with pytest.raises(ComponentArgError, match=r"missing required flag --file") as info:
        comp.materialize([])
    assert info.value.flag == "--file" and "usage: t.required --file STR [--mode INT]" in str(
        info.value
    )
    with pytest.raises(
        ComponentArgError, match=r"unexpected argument 'a.txt'.*did you mean --file a.txt\?"
    ):
        comp.materialize(["a.txt"])
    assert comp.materialize(["--file", "a.txt"]).roles[0].args == ["a.txt", "1"]


def test_defaults_sit_between_flags_and_the_signature() -> None:
    got = parse(
        "--count", "5", defaults={"count": 2, "name": "from-config", "tags": ["a,b"], "env": "A=1"}
    )
    assert (got["count"], got["name"], got["tags"], got["env"]) == (
        5,
        "from-config",
        ["a,b"],
        {"A": "1"},
    )
    assert parse(defaults={"some-thing": "alias"})["some_thing"] == "alias"
    with pytest.raises(ComponentArgError, match=r"defaults: unknown flag 'cnt'\. Flags: name, count"):
        parse(defaults={"cnt": 1})
    with pytest.raises(ComponentArgError, match=r"defaults: count = 1\.5: expected int"):
        parse(defaults={"count": 1.5})


def test_help_is_the_docstring_with_every_flag() -> None:
    comp = build_component("t.everything", everything)
    with pytest.raises(ComponentHelp) as info:
        comp.materialize(["--count", "2", "--help"])
    text = info.value.text
    assert text.startswith("usage: t.everything ")
    assert "Records its arguments.\n\nMore text of the description." in text
    assert "  --count (int, default: 1)\n      how many; continued on a second line" in text
    assert "  args ...\n      the command" in text
    assert "  -x, --x (Optional[str], default: None)" in text
    assert comp.summary == "Records its arguments."
    with pytest.raises(ComponentHelp):
        comp.materialize(["-h"])  # -h is help unless the component has a parameter `h`


def test_errors_raised_by_the_component_show_the_usage() -> None:
    comp = build_component("t.picky", picky)
    with pytest.raises(
        ComponentArgError, match=r"t.picky: give exactly one of --a or --b\nusage: t.picky"
    ):
        comp.materialize([])
    assert comp.materialize(["--a", "1"]).name == "picky"


def untyped(a, b: int = 1) -> AppDef:  # type: ignore[no-untyped-def]
    return AppDef("x")


def bad_type(a: set = set()) -> AppDef:  # noqa: B006
    return AppDef("x")


def no_return(a: int = 1):  # type: ignore[no-untyped-def]
    return AppDef("x")


def wrong_return(a: int = 1) -> str:
    return "x"


def kwargs(**options: str) -> AppDef:
    return AppDef("x")


def int_rest(*numbers: int) -> AppDef:
    return AppDef("x")


def helpful(help: str = "") -> AppDef:  # noqa: A002
    return AppDef("x")


def lies(a: int = 1) -> AppDef:
    return "not an app"  # type: ignore[return-value]


@pytest.mark.parametrize(
    "fn, message",
    [
        (untyped, r"parameter 'a' has no type annotation; annotate it, e.g. `a: str`"),
        (bad_type, r"parameter 'a': set is not supported; use str, int"),
        (no_return, r"must be annotated `-> AppDef` \(it has no return annotation\)"),
        (wrong_return, r"must be annotated `-> AppDef` \(it has -> str\)"),
        (kwargs, r"\*\*options cannot become flags"),
        (int_rest, r"\*numbers must be annotated `\*numbers: str`"),
        (len, r"is a builtin_function_or_method, not a function"),
        (3, r"t.bad is an int, not a function returning an AppDef"),
        (helpful, r"parameter 'help' cannot be a flag: --help shows the component's help; rename it"),
    ],
)
def test_invalid_components_are_rejected_naming_the_parameter(fn: Any, message: str) -> None:
    with pytest.raises(ComponentValidationError, match=message):
        build_component("t.bad", fn)


def test_a_component_that_returns_no_appdef_is_an_error_at_materialize() -> None:
    with pytest.raises(ComponentValidationError, match=r"returned str, not an AppDef"):
        build_component("t.lies", lies).materialize([])


@rest_after("m")
def runmod(*args: str, m: Optional[str] = None, n: int = 1) -> AppDef:
    return AppDef(m or "none", [Role("r", "img", entrypoint="python3", args=[str(n), *args])])


@rest_after("nope")
def bad_rest(*args: str, m: Optional[str] = None) -> AppDef:
    return AppDef("x")


def test_rest_after_ends_the_flags_like_python_dash_m() -> None:
    comp = build_component("t.runmod", runmod)
    app = comp.materialize(["--n", "2", "-m", "mod", "--lr", "3", "--help"])
    assert app.name == "mod" and app.roles[0].args == ["2", "--lr", "3", "--help"]
    # TorchX's rule: a leading -- of the program's arguments is dropped; behind it a flag of the
    # component is passed on (without it, it is refused: see test_a_flag_of_the_component_among_its_args...)
    app = comp.materialize(["--n", "2", "-m", "mod", "--", "--n", "3"])
    assert app.roles[0].args == ["2", "--n", "3"]
    assert comp.usage() == "usage: t.runmod [-n INT] [-m STR] [args ...]"
    with pytest.raises(ComponentValidationError, match=r"rest_after names no parameter 'nope'"):
        build_component("t.bad", bad_rest)


def crashes(kind: str = "attr") -> AppDef:
    if kind == "attr":
        return None.roles  # type: ignore[attr-defined]
    raise RuntimeError("the cluster config is missing")


def test_a_component_that_crashes_is_reported_naming_it_and_where() -> None:
    """Not a traceback from deep inside the CLI: which component failed, with what, and at which line."""
    comp = build_component("t.crashes", crashes)
    with pytest.raises(ComponentValidationError) as info:
        comp.materialize([])
    text = str(info.value)
    assert text.startswith("component t.crashes failed: AttributeError: 'NoneType' object has no attribute")
    assert f"{__file__}:" in text and "(a bug in the component" in text
    assert isinstance(info.value.__cause__, AttributeError)  # the traceback stays available
    with pytest.raises(ComponentValidationError, match=r"failed: RuntimeError: the cluster config is missing"):
        comp.materialize(["--kind", "runtime"])


def test_defaults_errors_name_where_the_defaults_came_from() -> None:
    comp = build_component("t.everything", everything)
    origin = '/p/pyproject.toml [tool.jupyter_sched.components."t.everything"]'
    with pytest.raises(ComponentArgError) as info:
        comp.materialize([], {"count": "two"}, defaults_origin=origin)
    assert str(info.value).startswith(f"t.everything: {origin}: count = 'two': 'two' is not a valid int")
    assert info.value.flag == "--count"
    with pytest.raises(ComponentArgError, match=r"/p/pyproject.toml .*: unknown flag 'cnt'"):
        comp.materialize([], {"cnt": 1}, defaults_origin=origin)
    with pytest.raises(ComponentArgError, match=r"^t.everything: defaults: unknown flag 'cnt'"):
        comp.materialize([], {"cnt": 1})


def resourceful(*args: str, h: Optional[str] = None) -> AppDef:
    return AppDef("r", [Role("r", "img", entrypoint="echo", args=list(args))])


def test_dash_h_of_a_component_with_a_parameter_h_points_to_help() -> None:
    comp = build_component("t.resourceful", resourceful)
    with pytest.raises(
        ComponentArgError, match=r"flag --h needs a value \(Optional\[str\]\); for the help, use --help"
    ):
        comp.materialize(["-h"])
    with pytest.raises(ComponentHelp):
        comp.materialize(["--help"])


def test_a_flag_of_the_component_among_its_args_is_refused_with_the_line_meant() -> None:
    """TorchX passes every word after the first positional to *args, so `utils.sh "hostname" --num_replicas 2`
    would run one replica of `hostname --num_replicas 2`: a flag of the component there is refused, with the
    line that puts it first and the line that passes it on (after --)."""
    comp = build_component("t.everything", everything)
    with pytest.raises(MisplacedFlagError) as info:
        comp.materialize(["--name", "x", "hostname; sleep 5", "--count", "2", "--debug", "-v", "--ratio=0.1"])
    e = info.value
    assert e.flags == ["--count", "--debug", "--ratio"] and e.flag == "--count"
    assert e.meant == ["--name", "x", "--count", "2", "--debug", "--ratio=0.1", "hostname; sleep 5", "-v"]
    assert e.escaped == ["--name", "x", "--", "hostname; sleep 5", "--count", "2", "--debug", "-v", "--ratio=0.1"]
    text = str(e)
    assert text.startswith(
        "t.everything: --count and --debug and --ratio are flags of t.everything, but here they come after"
        " 'hostname; sleep 5', from where every word is passed on as args (the command)."
    )
    assert "\n    t.everything --name x --count 2 --debug --ratio=0.1 'hostname; sleep 5' -v\n" in text
    assert "\n    t.everything --name x -- 'hostname; sleep 5' --count 2 --debug -v --ratio=0.1\n" in text
    assert e.explain(["jupyter-sched", "run", "-s", "slurm", "t.everything"]).endswith(
        "\n    jupyter-sched run -s slurm t.everything --name x -- 'hostname; sleep 5' --count 2 --debug -v"
        " --ratio=0.1"
    )
    # the escape: -- before the words passes them on as written; other words that look like flags pass too
    for args in (["--", "hostname", "--count", "2"], ["hostname", "--verbose", "-c", "--", "--count"]):
        CALLS.clear()
        comp.materialize(args)
        assert CALLS[-1]["args"] == (args[1:] if args[0] == "--" else args)
    # after -m MODULE (python -m semantics) likewise, and the escape is TorchX's leading --
    mod = build_component("t.runmod", runmod)
    with pytest.raises(MisplacedFlagError) as info:
        mod.materialize(["-m", "train", "--lr", "1", "--n", "3"])
    assert info.value.meant == ["--n", "3", "-m", "train", "--lr", "1"]
    assert info.value.escaped == ["-m", "train", "--", "--lr", "1", "--n", "3"]
    assert "here it comes after -m train," in str(info.value)
