"""The modules and names TorchX documents under ``torchx.specs``, with its argument rules."""

from __future__ import annotations

import argparse
import textwrap
from typing import Dict, List, Optional

import pytest

import jupyter_sched.specs as specs
from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import AppDef, Resource, Role, get_named_resources, get_type_name, materialize_appdef
from jupyter_sched.specs.builders import create_args_parser
from jupyter_sched.specs.file_linter import (
    TorchXArgumentHelpFormatter,
    get_fn_docstring,
    no_docstring_description,
    validate,
)
from jupyter_sched.specs.finder import ComponentNotFoundException, ComponentValidationException, get_component
from jupyter_sched.specs.named_resources_generic import NAMED_RESOURCES

TORCHX_SPECS_ALL = """AppDef AppDryRunInfo AppHandle AppState AppStatus BindMount CfgVal DeviceMount get_type_name
is_terminal macros MISSING NONE NULL_RESOURCE parse_app_handle ReplicaState ReplicaStatus Resource RetryPolicy
Role RoleStatus runopt runopts UnknownAppException UnknownSchedulerException InvalidRunConfigException
MalformedAppHandleException VolumeMount resource get_named_resources named_resources make_app_handle
materialize_appdef parse_mounts ALL""".split()


def test_every_name_torchx_specs_exports() -> None:
    import jupyter_sched.specs.api as api

    missing = [n for n in TORCHX_SPECS_ALL if n not in specs.__all__ or not hasattr(api, n)]
    assert missing == []


def test_named_resources_generic_and_lookup() -> None:
    assert set(NAMED_RESOURCES) >= {"cpu.small", "gpu.xlarge"}
    small = NAMED_RESOURCES["gpu.small"]()
    assert small == Resource(cpu=8, gpu=1, memMB=32 * 1024) and small is not NAMED_RESOURCES["gpu.small"]()
    assert get_named_resources("cpu.small") == specs.named_resources["cpu.small"] == specs.resource(h="cpu.small")
    with pytest.raises(KeyError, match="Did you mean `cpu.small`"):
        get_named_resources("cpu.smal")


def test_get_type_name() -> None:
    assert [get_type_name(t) for t in (int, list, List[int], Dict[str, int], Optional[str])] == [
        "int", "list", "typing.List[int]", "typing.Dict[str, int]", "typing.Optional[str]",
    ]  # fmt: skip


def _app(*names: str) -> AppDef:
    return AppDef("t", [Role(n, "img", entrypoint="e") for n in names])


def flagged(flag: bool = False, maybe: Optional[bool] = None) -> AppDef:
    """A component with bools.

    Args:
        flag: turn it on
        maybe: unset by default
    """
    return _app(f"flag-{flag}", f"maybe-{maybe}")


def typed(
    name: str, images: List[str], scripts: Dict[str, str], cpus: Optional[List[int]] = None, n: int = 4,
    nested: Optional[Dict[str, List[str]]] = None, *rest: str,
) -> AppDef:  # fmt: skip
    """Every kind of parameter."""
    roles = [
        Role(role, images[i], entrypoint=script, args=list(rest) or (nested or {}).get(role, []), num_replicas=n,
             resource=Resource((cpus or [1] * len(scripts))[i], 0, 1))
        for i, (role, script) in enumerate(scripts.items())
    ]  # fmt: skip
    return AppDef(name, roles)


seen: List[object] = []


def mixed(foo: str, *args: str, bar: str = "dflt") -> AppDef:
    seen.append((foo, args, bar))
    return _app("m")


def letter(c: str) -> AppDef:
    seen.append(c)
    return _app("l")


def test_materialize_appdef_bools() -> None:
    names = lambda app: [r.name for r in app.roles]  # noqa: E731
    assert names(materialize_appdef(flagged, [])) == ["flag-False", "maybe-None"]
    assert names(materialize_appdef(flagged, ["--flag", "True", "--maybe", "false"])) == ["flag-True", "maybe-False"]
    assert names(materialize_appdef(flagged, ["--flag", "true"])) == ["flag-True", "maybe-None"]


def test_materialize_appdef_types_defaults_and_nested_objects() -> None:
    args = ["--name", "x", "--images", "i1,i2", "--scripts", "a=a.py,b=b.py", "--cpus", "1,2", "--", "--lr", "1"]
    app = materialize_appdef(typed, args)
    assert [(r.name, r.image, r.entrypoint, r.args, r.num_replicas, r.resource.cpu) for r in app.roles] == [
        ("a", "i1", "a.py", ["--lr", "1"], 4, 1), ("b", "i2", "b.py", ["--lr", "1"], 4, 2),
    ]  # fmt: skip
    nested = {"a": ["x", "y"], "b": ["z"]}  # an object default passes through as it is
    app = materialize_appdef(typed, args[:6] + ["--n", "2"], {"nested": nested})
    assert [(r.args, r.num_replicas) for r in app.roles] == [(["x", "y"], 2), (["z"], 2)]


def test_materialize_appdef_varargs_and_single_letters() -> None:
    seen.clear()
    materialize_appdef(mixed, ["--foo", "f", "--bar", "b", "a1", "a2"])
    materialize_appdef(mixed, ["--foo", "f"], {"args": "d1 d2"})
    materialize_appdef(mixed, ["--foo", "f", "--", "--bar", "x"])
    materialize_appdef(letter, ["-c", "one"])
    materialize_appdef(letter, ["--c", "two"])
    assert seen == [("f", ("a1", "a2"), "b"), ("f", ("d1", "d2"), "dflt"), ("f", ("--bar", "x"), "dflt"), "one", "two"]


def test_materialize_appdef_missing_required_flag_exits_with_usage(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        materialize_appdef(typed, [])
    assert "--name" in capsys.readouterr().err


def test_help_text_from_the_docstring() -> None:
    parser = create_args_parser(flagged)
    help_text = parser.format_help()
    assert "A component with bools." in help_text
    assert "turn it on (default: False)" in help_text and "unset by default (default: None)" in help_text

    def needs(x: int) -> AppDef:
        """Needs x.

        Args:
            x: the x
        """

    assert "the x (required)" in create_args_parser(needs).format_help()
    assert isinstance(parser.formatter_class(prog="p"), TorchXArgumentHelpFormatter)


def test_get_fn_docstring() -> None:
    def documented(a: int, b: str) -> AppDef:
        """Short line.

        Longer text.

        Args:
            a: the a
        """

    def bare(a: int) -> AppDef: ...

    assert get_fn_docstring(documented) == ("Short line.\nLonger text.", {"a": "the a", "b": " "})
    description, helps = get_fn_docstring(bare)
    assert description == no_docstring_description("bare") and helps == {"a": " "}
    # TorchX's words and link, which tools written for TorchX compare
    assert description.startswith("bare TIP: improve this help string by adding a docstring\nto your component")
    assert description.endswith("(see: https://pytorch.org/torchx/latest/component_best_practices.html)")


SOURCE = textwrap.dedent(
    """
    from typing import Dict, List, Optional
    def good(a: int, b: Optional[str], c: List[str], d: Dict[str, int], *rest: str, e: float = 1.0) -> AppDef: ...
    def untyped(a, b: int) -> "AppDef": ...
    def nested(a: List[List[str]], b: Dict[str, List[int]], c: Optional[Set[str]]) -> specs.AppDef: ...
    def returns_int() -> int: ...
    def returns_nothing(): ...
    """
)


@pytest.mark.parametrize(
    "fn, problems",
    [
        ("good", []),
        ("untyped", ["Arg a missing type annotation"]),
        (
            "nested",
            [
                "List can only have primitive types",
                "Dict can only have primitive types",
                "`nested` allows only Dict, List as complex types.Argument `c` has: Set",
            ],
        ),
        ("returns_int", ["Function: returns_int has incorrect return annotation, supported annotation: AppDef"]),
        (
            "returns_nothing",
            [
                "Function: returns_nothing missing return annotation or has unknown annotations."
                " Supported return annotation: AppDef"
            ],
        ),
        ("absent", ["Function absent not found"]),
    ],
)
def test_validate_a_component_file(tmp_path, fn: str, problems: List[str]) -> None:  # type: ignore[no-untyped-def]
    """The messages are exactly TorchX's words: tools written for TorchX compare them."""
    path = tmp_path / "comp.py"
    path.write_text(SOURCE)
    found = validate(str(path), fn)
    assert [m.description for m in found] == problems
    assert all(m.line >= 0 for m in found)


def test_validate_reports_a_syntax_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.py"
    path.write_text("def f(:\n")
    [message] = validate(str(path), "f")
    assert message.line == 1 and message.severity == "error"


def test_finder_and_run_component_raise_component_not_found() -> None:
    found = get_component("utils.echo")
    assert (found.name, found.fn_name, found.validation_errors) == ("utils.echo", "echo", [])
    with pytest.raises(ComponentNotFoundException, match="utils.echo"):
        get_component("utils.ecoh")
    with Runner("s", {"local_cwd": create_cwd_scheduler}) as runner:
        with pytest.raises(ComponentNotFoundException):
            runner.run_component("no.such.component", [], "local_cwd")
        with pytest.raises(ComponentNotFoundException):
            runner.dryrun_component("utils.ecoh", [], "local_cwd")


def test_finder_refuses_an_invalid_component(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "comp.py"
    path.write_text("def broken(a) -> 'AppDef':\n    return None\n")
    with pytest.raises(ComponentValidationException):
        get_component(f"{path}:broken")


def test_argparse_is_used_as_torchx_does() -> None:
    assert isinstance(create_args_parser(mixed), argparse.ArgumentParser)


def test_module_relname() -> None:
    import jupyter_sched.components as c
    import jupyter_sched.components.dist as d
    from jupyter_sched.specs.finder import module_relname

    assert (module_relname(d, relative_to=c), module_relname(c, relative_to=c)) == ("dist", "")
    with pytest.raises(ValueError, match="not a submodule"):
        module_relname(c, relative_to=d)


def test_a_builtin_copied_from_its_source_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from jupyter_sched.specs.finder import get_builtin_source

    copy = tmp_path / "echo_copy.py"
    copy.write_text(get_builtin_source("utils.echo"))
    assert "def echo(" in copy.read_text()
    with Runner("s", {"local_cwd": create_cwd_scheduler}) as runner:
        handle = runner.run_component(
            f"{copy}:echo", ["--msg", "from a copy"], "local_cwd", cfg={"log_dir": str(tmp_path)}
        )
        status = runner.wait(handle, wait_interval=0.1, timeout=60)
        assert status is not None and status.state == specs.AppState.SUCCEEDED
        assert list(runner.log_lines(handle, "echo", 0)) == ["from a copy\n"]
