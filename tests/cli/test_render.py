from jupyter_sched.cli.render import render, to_json
from jupyter_sched.specs import AppDef, BindMount, Resource, Role, VolumeMount


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
        '    env:\n      N: "2"\n      FLAG: "true"\n' in text
    )  # strings that look like numbers or bools are quoted
    assert "    num_replicas: 2\n    max_retries: 0\n    retry_policy: APPLICATION\n" in text
    assert (
        "    mounts:\n      - type: bind\n        src_path: /a\n        dst_path: /b\n        read_only: true\n"
        in text
    )
    assert "      - type: volume\n        src: v\n" in text
    assert "    port_map: {}\n" in text and text.endswith("metadata: {}")
    assert '"retry_policy": "APPLICATION"' in to_json(app)
