from typing import Dict, List

import pytest

from jupyter_sched.specs import InvalidRunConfigException, runopts


@pytest.fixture
def opts() -> runopts:
    o = runopts()
    o.add("log_dir", str, "where logs go")
    o.add("copy_env", List[str], "env globs")
    o.add("env", Dict[str, str], "extra env")
    o.add("privileged", bool, "run privileged", default=False)
    o.add("grace", float, "seconds", default=10.0)
    o.add("count", int, "how many", default=1)
    o.add("queue", str, "a required queue", required=True)
    return o


def test_cfg_from_str_typed_values_and_last_separator_rule(opts: runopts) -> None:
    cfg = opts.cfg_from_str("copy_env=FOO_*,BAR_*,privileged=true;env=A:1;B:x:y,grace=0.5,count=3,queue=q")
    assert cfg == {
        "copy_env": ["FOO_*", "BAR_*"],
        "privileged": True,
        "env": {"A": "1", "B": "x:y"},
        "grace": 0.5,
        "count": 3,
        "queue": "q",
    }


def test_empty_string_forms(opts: runopts) -> None:
    assert opts.cfg_from_str("") == {}
    assert opts.cfg_from_str("log_dir=''") == {"log_dir": ""}
    assert opts.cfg_from_str('log_dir=""') == {"log_dir": ""}
    with pytest.raises(ValueError, match="log_dir.*no value"):
        opts.cfg_from_str("log_dir=")


@pytest.mark.parametrize("word", ["yes", "1", "no", "0", "True!"])
def test_ambiguous_boolean_is_an_error_not_false(opts: runopts, word: str) -> None:
    with pytest.raises(InvalidRunConfigException, match=r"privileged=.*true or .*false"):
        opts.cfg_from_str(f"privileged={word}")


def test_boolean_case_insensitive(opts: runopts) -> None:
    assert opts.cfg_from_str("privileged=TRUE") == {"privileged": True}
    assert opts.cfg_from_str("privileged=False") == {"privileged": False}


def test_unknown_key_names_valid_keys_and_suggests(opts: runopts) -> None:
    with pytest.raises(InvalidRunConfigException) as e:
        opts.cfg_from_str("log_dri=/tmp")
    assert "log_dri" in str(e.value) and "Did you mean 'log_dir'" in str(e.value)
    assert "copy_env" in str(e.value)
    assert e.value.cfg_key == "log_dri"
    with pytest.raises(InvalidRunConfigException, match="Unknown run option 'nope'"):
        opts.resolve({"queue": "q", "nope": 1})


def test_value_with_equals_and_bad_dict_item(opts: runopts) -> None:
    with pytest.raises(ValueError):
        opts.cfg_from_str("env=A:x=y")
    with pytest.raises(InvalidRunConfigException, match="KEY:VALUE"):
        opts.cfg_from_str("env=A")
    with pytest.raises(InvalidRunConfigException, match="not a valid int"):
        opts.cfg_from_str("count=three")


def test_resolve_fills_defaults_and_checks_types(opts: runopts) -> None:
    resolved = opts.resolve({"queue": "q"})
    assert resolved["privileged"] is False and resolved["grace"] == 10.0 and resolved["log_dir"] is None
    with pytest.raises(InvalidRunConfigException, match="Required run option 'queue'"):
        opts.resolve({})
    with pytest.raises(InvalidRunConfigException, match="should be of type bool"):
        opts.resolve({"queue": "q", "privileged": "true"})
    with pytest.raises(InvalidRunConfigException, match=r"List\[str\]"):
        opts.resolve({"queue": "q", "copy_env": "FOO"})
    assert opts.resolve({"queue": "q", "grace": 1})["grace"] == 1  # an int is a fine float


def test_add_rejects_bad_declarations() -> None:
    o = runopts()
    with pytest.raises(ValueError):
        o.add("x", str, "h", default="d", required=True)
    with pytest.raises(TypeError):
        o.add("x", int, "h", default="not an int")


def test_is_type() -> None:
    assert runopts.is_type(["a"], List[str]) and not runopts.is_type([1], List[str])
    assert runopts.is_type({"a": "b"}, Dict[str, str]) and not runopts.is_type({"a": 1}, Dict[str, str])
    assert not runopts.is_type(True, int)


def test_repr_is_a_help_text(opts: runopts) -> None:
    text = repr(opts)
    assert "usage:" in text and "queue=QUEUE" in text and "[log_dir=LOG_DIR]" in text
    assert "required arguments:" in text and "optional arguments:" in text
    assert "privileged=PRIVILEGED (bool, False)" in text and "run privileged" in text
