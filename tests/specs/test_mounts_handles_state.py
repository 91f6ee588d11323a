import json
import os

import pytest

from jupyter_sched.specs import (
    AppState,
    AppStatus,
    AppStatusError,
    BindMount,
    DeviceMount,
    MalformedAppHandleException,
    ReplicaStatus,
    RoleStatus,
    VolumeMount,
    is_started,
    is_terminal,
    make_app_handle,
    make_unique,
    parse_app_handle,
    parse_mounts,
)


def test_parse_mounts_all_kinds_and_aliases() -> None:
    mounts = parse_mounts(
        ["type=bind", "src=~/data", "dst=/data", "readonly", "type=volume,source=cache,target=/c",
         "type=device,src=/dev/fuse,perm=rw", "type=device,src=/dev/null,dst=/dev/x"]
    )  # fmt: skip
    assert mounts == [
        BindMount(os.path.expanduser("~/data"), "/data", read_only=True),
        VolumeMount("cache", "/c", read_only=False),
        DeviceMount("/dev/fuse", "/dev/fuse", "rw"),
        DeviceMount("/dev/null", "/dev/x", "rwm"),
    ]


@pytest.mark.parametrize(
    "tokens, error, match",
    [
        (["src=/a"], KeyError, "type must be specified first"),
        (["type=bind,src=/a,dst=/b,color=red"], KeyError, "unknown mount option 'color'"),
        (["type=nfs,src=/a,dst=/b"], ValueError, "invalid mount type 'nfs'"),
        (["type=device,src=/dev/x,perm=rwx"], ValueError, "only the letters r, w and m"),
        (["type=bind,src=/a"], KeyError, "needs dst"),
        (["type=bind,dst=/a"], KeyError, "needs src"),
        (["type=bind,src=,dst=/a"], ValueError, "needs a value"),
    ],
)
def test_bad_mounts_say_what_and_how(tokens, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        parse_mounts(tokens)


def test_app_handles_round_trip_and_errors() -> None:
    handle = make_app_handle("local_cwd", "sess", "app-1")
    assert handle == "local_cwd://sess/app-1"
    assert parse_app_handle(handle) == ("local_cwd", "sess", "app-1")
    assert parse_app_handle("a://b/c/d") == ("a", "b/c", "d")
    with pytest.raises(MalformedAppHandleException, match="not of the form"):
        parse_app_handle("local_cwd/app")


def test_unique_ids_are_dns_safe_and_distinct() -> None:
    ids = {make_unique("echo") for _ in range(500)}
    assert len(ids) == 500
    for app_id in ids:
        suffix = app_id.split("-", 1)[1]
        assert suffix[0].isalpha() and suffix.isalnum() and suffix.lower() == suffix


def test_app_state_str_repr_and_sets() -> None:
    assert str(AppState.FAILED) == "FAILED" and repr(AppState.FAILED) == "FAILED (5)"
    assert [s for s in AppState if is_terminal(s)] == [AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED]
    assert is_started(AppState.RUNNING) and not is_started(AppState.PENDING)


def _status(state: AppState) -> AppStatus:
    err = json.dumps({"message": {"message": "boom: CUDA out of memory", "errorCode": 1}})
    return AppStatus(
        state=state,
        msg="m",
        roles=[
            RoleStatus("trainer", [
                ReplicaStatus(0, AppState.SUCCEEDED, "trainer", "localhost", exit_code=0),
                ReplicaStatus(1, AppState.FAILED, "trainer", "localhost", structured_error_msg=err, exit_code=3),
            ])
        ],
    )  # fmt: skip


def test_status_format_repr_json_and_raise() -> None:
    status = _status(AppState.FAILED)
    text = status.format()
    assert "State: FAILED" in text and "*trainer[0]:SUCCEEDED (exitcode: 0)" in text
    assert " trainer[1]:FAILED (exitcode: 3)" in text and "boom: CUDA out of memory" in text
    assert "!!python" not in repr(status) and "state: FAILED (5)" in repr(status)
    assert json.loads(json.dumps(status.to_json()))["roles"][0]["replicas"][1]["exit_code"] == 3
    with pytest.raises(AppStatusError) as e:
        status.raise_for_status()
    assert e.value.status is status
    with pytest.raises(AppStatusError):
        _status(AppState.RUNNING).raise_for_status()
    _status(AppState.SUCCEEDED).raise_for_status()
    assert "  Roles:\n  Msg: " in AppStatus(AppState.RUNNING).format()
