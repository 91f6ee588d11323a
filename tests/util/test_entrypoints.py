"""``jupyter_sched.util.entrypoints`` (TorchX's ``load``/``load_group``) over a real installed dist-info."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from jupyter_sched.util.entrypoints import load, load_group, select

MODULE = '''
def greet(who="world"):
    return f"hello {who}"


def bye():
    return "bye"
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "jsched_ep_mod.py").write_text(MODULE)
    info = tmp_path / "jsched_ep-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jsched-ep\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[jsched.test.fns]\ngreet = jsched_ep_mod:greet\nbye = jsched_ep_mod:bye\n"
        "[jsched.test.mod]\nmod = jsched_ep_mod\n"
        "[jsched.test.broken]\nattr = jsched_ep_mod:missing\nmodule = jsched_ep_no_such_module\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return tmp_path


def test_load_one_entry_point(installed: Path) -> None:
    assert load("jsched.test.fns", "greet")("you") == "hello you"
    with pytest.raises(KeyError, match="nope"):
        load("jsched.test.fns", "nope")
    fallback = load("jsched.test.fns", "nope", default=str.upper)
    assert fallback("x") == "X"
    assert load("jsched.test.no_such_group", "greet", default=str.upper) is str.upper


def test_load_group_defers_loading(installed: Path) -> None:
    fns = load_group("jsched.test.fns")
    assert fns is not None and sorted(fns) == ["bye", "greet"]
    assert fns["greet"]("there") == "hello there" and fns["bye"]() == "bye"  # a function is called
    mod = load_group("jsched.test.mod")["mod"]("ignored", also="ignored")  # type: ignore[index]
    assert isinstance(mod, ModuleType) and mod.__name__ == "jsched_ep_mod"
    assert load_group("jsched.test.no_such_group") is None
    assert load_group("jsched.test.no_such_group", default={"x": bytes}) == {"x": bytes}
    assert sorted(load_group("jsched.test.fns", default={"x": bytes}) or {}) == ["bye", "greet"]
    assert select("jsched.test.mod").names == {"mod"}


def test_a_broken_entry_point_fails_only_when_loaded(installed: Path) -> None:
    broken = load_group("jsched.test.broken")
    assert broken is not None
    with pytest.raises(AttributeError):
        broken["attr"]()
    with pytest.raises(ModuleNotFoundError):
        broken["module"]()
