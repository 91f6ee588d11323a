import copy

import pytest

from jupyter_sched.specs import (
    MISSING,
    NULL_RESOURCE,
    AppDef,
    InvalidAppError,
    RetryPolicy,
    Role,
    macros,
    named_resources,
    resource,
    validate_app,
)


def test_role_positional_fields_and_defaults() -> None:
    role = Role("trainer", "img")
    assert (role.name, role.image, role.entrypoint, role.num_replicas) == ("trainer", "img", MISSING, 1)
    assert role.resource == NULL_RESOURCE and role.retry_policy is RetryPolicy.APPLICATION
    assert role.args == [] and role.env == {} and role.mounts == []


def test_macros_substitute_args_env_and_nested_metadata_without_touching_the_role() -> None:
    role = Role(
        "r",
        "img",
        entrypoint="${img_root}/bin",
        args=["--id", macros.app_id, "--rank", macros.replica_id, "$$HOME", "${unknown}"],
        env={"HOST_VAR": macros.rank0_env},
        metadata={"a": [macros.app_id, {"b": macros.replica_id}], "n": 3},
    )
    before = copy.deepcopy(role)
    out = macros.Values(img_root="/root", app_id="app-1", replica_id="2", rank0_env="RANK0").apply(role)
    assert out.args == ["--id", "app-1", "--rank", "2", "$HOME", "${unknown}"]
    assert out.env == {"HOST_VAR": "RANK0"}
    assert out.metadata == {"a": ["app-1", {"b": "2"}], "n": 3}
    assert out.entrypoint == "${img_root}/bin"  # entrypoint is never substituted
    assert role == before


def test_named_resources_and_did_you_mean() -> None:
    assert named_resources["gpu.small"].gpu == 1
    named_resources["cpu.small"].capabilities["x"] = 1
    assert "x" not in named_resources["cpu.small"].capabilities  # callers get copies
    with pytest.raises(KeyError, match="Did you mean `gpu.small`"):
        named_resources["gpu.smal"]
    assert resource(cpu=0).cpu == 0  # an explicit 0 is kept
    assert resource(h="cpu.nano").memMB == 512


def _app(**role_kwargs) -> AppDef:  # type: ignore[no-untyped-def]
    kwargs = {"name": "r", "image": "img", "entrypoint": "echo"}
    kwargs.update(role_kwargs)
    return AppDef("app", [Role(**kwargs)])


@pytest.mark.parametrize(
    "app, field",
    [
        (AppDef("app", []), "roles"),
        (AppDef("", [Role("r", "i", entrypoint="e")]), "name"),
        (_app(num_replicas=0), "roles[0].num_replicas"),
        (_app(entrypoint=MISSING), "roles[0].entrypoint"),
        (_app(entrypoint=""), "roles[0].entrypoint"),
        (_app(name=""), "roles[0].name"),
        (_app(name="nul\0"), "roles[0].name"),
        (AppDef("app", [Role("a b", "i", entrypoint="e"), Role("a/b", "i", entrypoint="e")]), "roles[1].name"),
        (_app(max_retries=-1), "roles[0].max_retries"),
        (_app(args=["ok", 3]), "roles[0].args"),
        (_app(env={"A": 1}), "roles[0].env['A']"),
        (AppDef("app", [Role("r", "i", entrypoint="e"), Role("r", "i", entrypoint="e")]), "roles[1].name"),
    ],
)
def test_validate_names_the_field_and_the_fix(app: AppDef, field: str) -> None:
    with pytest.raises(InvalidAppError) as e:
        validate_app(app)
    assert e.value.field == field
    assert str(e.value).startswith(field) and e.value.fix in str(e.value)
