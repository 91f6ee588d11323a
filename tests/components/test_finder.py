"""Finding components: built-ins, files, modules and entry-point plugins (a real dist-info on sys.path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.components import (
    ComponentArgError,
    ComponentNotFoundError,
    ComponentValidationError,
    get_component,
    list_builtins,
    list_components,
    materialize,
)

BUILTINS = ["dist.ddp", "dist.spmd", "utils.booth", "utils.echo", "utils.python", "utils.sh", "utils.touch"]

PLUGIN = '''
from jupyter_sched.specs import AppDef, Role


def hello(who: str = "plugin") -> AppDef:
    """Says hello from a plugin."""
    return AppDef("hello", [Role("hello", "img", entrypoint="echo", args=[who])])


def override(msg: str = "overridden") -> AppDef:
    """Replaces utils.echo."""
    return AppDef("override", [Role("o", "img", entrypoint="echo", args=[msg])])


def helper() -> int:
    return 1
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "jsched_test_plugin.py").write_text(PLUGIN)
    info = tmp_path / "jsched_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: jsched-test-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[jupyter_sched.components]\n"
        "plug = jsched_test_plugin\n"
        "solo = jsched_test_plugin:hello\n"
        "utils.echo = jsched_test_plugin:override\n"
        "broken = jsched_no_such_module_xyz\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_builtins_are_listed_with_their_first_docstring_line() -> None:
    comps = list_builtins()
    assert [c.name for c in comps] == BUILTINS
    summaries = {c.name: c.summary for c in comps}
    assert summaries["utils.sh"] == "Runs a shell command with ``sh -c``."
    assert all(c.origin == "builtin" and c.summary for c in comps)


def test_get_component_builtin_and_materialize() -> None:
    comp = get_component("utils.echo")
    assert comp.name == "utils.echo" and "msg" in comp.flags
    app = materialize("utils.echo", ["--msg", "hi"], {"num_replicas": "2"})
    assert app.roles[0].args == ["hi"] and app.roles[0].num_replicas == 2


def test_unknown_names_suggest_close_ones_and_list_what_exists() -> None:
    with pytest.raises(
        ComponentNotFoundError, match=r"no component named 'utils.ech'\. Did you mean utils.echo"
    ) as info:
        get_component("utils.ech")
    assert ", ".join(BUILTINS) in str(info.value)
    with pytest.raises(ComponentNotFoundError, match=r"write train.py:FUNCTION"):
        get_component("train.py")
    with pytest.raises(ComponentNotFoundError, match=r"no component given"):
        get_component("")


def test_file_components(tmp_path: Path) -> None:
    path = tmp_path / "my comps.py"
    path.write_text(PLUGIN.replace("plugin", "file"))
    app = materialize(f"{path}:hello", ["--who", "you"])
    assert app.roles[0].args == ["you"]
    assert get_component(f"{path}:hello").origin == str(path)
    with pytest.raises(
        ComponentNotFoundError, match=r"has no function 'nope'; .* there: hello, override"
    ):
        get_component(f"{path}:nope")
    with pytest.raises(
        ComponentNotFoundError, match=r"component file '.*missing.py' does not exist"
    ):
        get_component(f"{tmp_path}/missing.py:hello")
    with pytest.raises(ComponentValidationError, match=r"must be annotated `-> AppDef`"):
        get_component(f"{path}:helper")


def test_file_components_are_reloaded_so_edits_take_effect(tmp_path: Path) -> None:
    path = tmp_path / "comp.py"
    path.write_text(PLUGIN)
    assert materialize(f"{path}:hello", []).roles[0].args == ["plugin"]
    path.write_text(PLUGIN.replace('who: str = "plugin"', 'who: str = "edited"'))
    assert materialize(f"{path}:hello", []).roles[0].args == ["edited"]


def test_file_that_raises_on_import(tmp_path: Path) -> None:
    path = tmp_path / "boom.py"
    path.write_text("raise RuntimeError('kaboom')\n")
    with pytest.raises(
        ComponentValidationError, match=r"raised while loading: RuntimeError: kaboom"
    ):
        get_component(f"{path}:fn")


def test_module_components() -> None:
    comp = get_component("jupyter_sched.components.utils:sh")
    assert comp.materialize(["echo", "hi"]).roles[0].args == ["-c", "echo hi"]
    with pytest.raises(ComponentNotFoundError, match=r"cannot import module 'no_such_mod_xyz'"):
        get_component("no_such_mod_xyz:fn")


def test_entry_point_plugins(plugin: Path) -> None:
    assert materialize("solo", []).roles[0].args == ["plugin"]
    assert materialize("plug.hello", ["--who", "x"]).roles[0].args == ["x"]
    assert get_component("plug.hello").origin == "entry point plug = jsched_test_plugin"
    # a plugin may override a built-in of the same name
    assert materialize("utils.echo", []).name == "override"
    with pytest.warns(UserWarning, match=r"skipping component plugin entry point broken"):
        names = [c.name for c in list_components()]
    assert {"solo", "plug.hello", "plug.override", "utils.sh"} <= set(names)
    assert "plug.helper" not in names  # not annotated -> AppDef: not a component
    with pytest.raises(
        ComponentValidationError, match=r"cannot load component plugin entry point broken"
    ):
        get_component("broken")


def test_materialize_reports_bad_flags_of_builtins() -> None:
    with pytest.raises(ComponentArgError, match=r"utils.touch: missing required flag --file"):
        materialize("utils.touch", [])


NOPREFIX = {
    "jsched_np_pkg/__init__.py": "",
    "jsched_np_pkg/top.py": PLUGIN,
    "jsched_np_pkg/sub/__init__.py": "",
    "jsched_np_pkg/sub/deep.py": PLUGIN.replace("def hello", "def deep_hello"),
    "jsched_np_pkg/_private.py": PLUGIN.replace("def hello", "def hidden"),
}


def test_underscore_entry_points_add_components_without_a_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TorchX's rule: ``_ = pkg`` adds pkg's components (and its public submodules') with no group."""
    for rel, text in NOPREFIX.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    info = tmp_path / "jsched_np-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jsched-np\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[jupyter_sched.components]\n_ = jsched_np_pkg\ngrp = jsched_np_pkg.sub\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert materialize("top.hello", ["--who", "np"]).roles[0].args == ["np"]
    assert materialize("sub.deep.deep_hello", []).roles[0].args == ["plugin"]
    assert materialize("grp.deep.deep_hello", []).roles[0].args == ["plugin"]
    names = {c.name for c in list_components()}
    assert {"top.hello", "sub.deep.deep_hello", "grp.deep.deep_hello", "dist.ddp"} <= names
    assert not any("hidden" in n for n in names)  # _private.py is not searched
