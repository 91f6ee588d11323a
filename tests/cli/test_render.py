import json

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.cli.render import render, to_json, to_plain
from jupyter_sched.specs import AppDef, BindMount, Resource, Role, VolumeMount
from jupyter_sched.specs.output.masking import mask_tree


def test_appdef_renders_as_readable_indented_text() -> None:
    app = AppDef(
        "train",
        [
            Role(
                "trainer", "img:1", entrypoint="python3", args=["-c", "print('x: y')", "", "3"],
                env={"N": "2", "FLAG": "true"}, num_replicas=2, resource=Resource(1, 0, 512),
                mounts=[BindMount("/a", "/b", read_only=True), VolumeMount("v", "/v")],
            )
        ],
    )  # fmt: skip
    text = render(app)
    assert text.startswith('name: train\nroles:\n  - name: trainer\n    image: "img:1"\n')
    assert '    args:\n      - -c\n      - "print(\'x: y\')"\n      - ""\n      - "3"\n' in text
    assert (
        '    env:\n      "N": "2"\n      FLAG: "true"\n' in text
    )  # strings that look like numbers or bools (N is one in YAML 1.1) are quoted
    assert "    num_replicas: 2\n    max_retries: 0\n    retry_policy: APPLICATION\n" in text
    assert (
        "    mounts:\n      - type: bind\n        src_path: /a\n        dst_path: /b\n        read_only: true\n"
        in text
    )
    assert "      - type: volume\n        src: v\n" in text
    assert "    port_map: {}\n" in text and text.endswith("metadata: {}")
    assert '"retry_policy": "APPLICATION"' in to_json(app)

# -- the text is YAML: what YAML reads back is exactly the (masked) data --------------------------------------------


SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
    | st.sampled_from(["@x", "%p", "- y", "-c", "yes", "No", "~", "0x1F", "2026-01-01", "1e3", "a: b", "a #b",
                       ".inf", "*x", "&a", "!t", "|", ">", "'q'", '"d"', "[a]", "{b}", "`c`", "?", ",", "\x85", "é"])
)  # fmt: skip
KEYS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | st.sampled_from(["@k", "- k", "true", "1"])
TREES = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=4),
                     max_leaves=20)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(TREES)
def test_text_output_is_yaml_that_reads_back_the_same(tree: object) -> None:
    assert yaml.safe_load(render(tree)) == mask_tree(to_plain(tree))


def test_the_strings_yaml_would_misread_are_quoted() -> None:
    text = render({"a": "@x", "b": "%p", "c": "- y", "d": "yes", "e": "2026-01-01", "f": 1e20, "g": float("inf")})
    assert text.splitlines() == [
        'a: "@x"', 'b: "%p"', 'c: "- y"', 'd: "yes"', 'e: "2026-01-01"', "f: 1.0e+20", "g: .inf",
    ]  # fmt: skip
    assert yaml.safe_load(render({"a": "A\n", "b": ["x\n"]})) == {"a": "A\n", "b": ["x\n"]}  # found by the property
    app = AppDef("train", [Role("t", "img:1", entrypoint="python", args=["-c", "x"], env={"A": "1"})])
    assert yaml.safe_load(render(app)) == json.loads(to_json(app))
