import json
import os
from datetime import datetime

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
        (
            ["type=bind,src=/a,dst=/b,color=red"],
            KeyError,
            r"unknown mount option color, must be one of \[.*'type'\] \(in 'color=red'\)",
        ),
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
    err = json.dumps(
        {"message": {"message": "boom: CUDA out of memory", "errorCode": 1, "extraInfo": {"timestamp": 0}}}
    )
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
    when = datetime.fromtimestamp(0)
    assert status.format() == (
        "AppStatus:\n"
        "    State: FAILED\n"
        "    Num Restarts: 0\n"
        "    Roles: \n"
        " *trainer[0]:SUCCEEDED (exitcode: 0)\n"
        "  trainer[1]:FAILED (exitcode: 3)\n"  # the process's exit code; the error file's code if unknown
        f"        timestamp: {when}\n"
        "        hostname: localhost\n"
        "        error_msg: boom: CUDA out of memory\n"
        "    Msg: m\n"
        "    Structured Error Msg: <NONE>\n"
        "    UI URL: None\n"
        "    "
    )
    assert "!!python" not in repr(status) and "state: FAILED (5)" in repr(status)
    assert json.loads(json.dumps(status.to_json()))["roles"][0]["replicas"][1]["exit_code"] == 3
    with pytest.raises(AppStatusError) as e:
        status.raise_for_status()
    assert e.value.status is status
    with pytest.raises(AppStatusError):
        _status(AppState.RUNNING).raise_for_status()
    _status(AppState.SUCCEEDED).raise_for_status()
    assert "    Roles: \n    Msg: " in AppStatus(AppState.RUNNING).format()


def test_status_format_without_an_error_file_and_filtered() -> None:
    status = AppStatus(
        AppState.FAILED,
        roles=[
            RoleStatus(
                "a",
                [
                    ReplicaStatus(1, AppState.FAILED, "a", "h", exit_code=7),
                    ReplicaStatus(0, AppState.CANCELLED, "a", "h"),
                ],
            ),
            RoleStatus(
                "b", [ReplicaStatus(0, AppState.FAILED, "b", "h", structured_error_msg="plain text, not JSON")]
            ),
        ],
    )  # fmt: skip
    text = status.format()
    expected = (
        " *a[0]:CANCELLED (no reply file)\n  a[1]:FAILED (exitcode: 7)\n *b[0]:FAILED\n      plain text, not JSON"
    )
    assert expected in text
    assert "b[0]" not in status.format(filter_roles=["a"])


def test_status_repr_is_yaml_with_the_error_parsed() -> None:
    import yaml

    status = AppStatus(AppState.FAILED, structured_error_msg='{"message": "test error"}')
    assert yaml.safe_load(repr(status)) == {
        "AppStatus": {
            "msg": "", "num_restarts": 0, "roles": [], "state": "FAILED (5)",
            "structured_error_msg": {"message": "test error"}, "ui_url": None,
        }
    }  # fmt: skip
    assert "structured_error_msg: not json" in repr(AppStatus(AppState.FAILED, structured_error_msg="not json"))


def test_format_error_message_breaks_long_lines_at_spaces() -> None:
    from jupyter_sched.specs.status.state import format_error_message

    msg = " ".join(["word"] * 40)
    lines = format_error_message(msg, header="err: ", width=20).split("\n")
    assert lines[0].startswith("err: word") and all(line.startswith("     ") for line in lines[1:])
    assert "".join(line[5:] for line in lines) == msg
    rpc = (
        "RuntimeError('On WorkerInfo(id=1, name=t:0):\nValueError('bad')\n')\nTraceback (most recent call last):\n  x\n"
    )
    assert format_error_message(rpc, header="") == "RuntimeError('On WorkerInfo(id=1, name=t:0):\nValueError('bad')\n')"
    assert format_error_message("the message\nException: detail", header="") == "the message"
