"""Names are free text as in TorchX; where one becomes a path, container or job name it is made safe."""

from __future__ import annotations

import os

import pytest

from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, InvalidAppError, Role, validate_app
from jupyter_sched.specs.output.names import safe_name


@pytest.mark.parametrize(
    "name, safe",
    [
        ("../x", "x"),
        ("../../etc/passwd", "etc-passwd"),
        ("_ignored_", "ignored_"),
        ("my app", "my-app"),
        ("..", "app"),
        (".hidden", "hidden"),
        ("-rf", "rf"),
        ("a\0b", "a-b"),
        ("☃", "app"),
        ("x" * 100, "x" * 63),
        ("train.v2", "train.v2"),
    ],
)
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe
    assert safe_name(safe_name(name)) == safe_name(name)


@pytest.mark.parametrize("name", ["_ignored_", "my app", "../x", "<b>x</b>", "a:b"])
def test_names_torchx_accepts_are_accepted(name: str) -> None:
    validate_app(AppDef(name, [Role(name, "img", entrypoint="echo")]))


def test_roles_that_would_share_a_directory_are_refused() -> None:
    app = AppDef("a", [Role("x y", "i", entrypoint="e"), Role("x/y", "i", entrypoint="e")])
    with pytest.raises(InvalidAppError) as e:
        validate_app(app)
    assert e.value.field == "roles[1].name" and "'x-y'" in str(e.value)


def test_an_app_named_dot_dot_stays_in_the_log_dir(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log_dir = tmp_path / "logs"
    app = AppDef("../../x", [Role("../r", "", entrypoint="sh", args=["-c", "echo hi"])])
    with Runner("s", {"local_cwd": create_cwd_scheduler}) as runner:
        handle = runner.run(app, "local_cwd", cfg={"log_dir": str(log_dir)})
        status = runner.wait(handle, wait_interval=0.1, timeout=60)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert "".join(runner.log_lines(handle, "../r", 0)) == "hi\n"
        app_id = handle.rsplit("/", 1)[1]
        assert app_id.startswith("x-") and "/" not in app_id
        described = runner.describe(handle)
        assert described is not None and described.roles[0].name == "../r"  # the original name is kept
    app_dir = os.path.join(str(log_dir), "s", app_id)
    written = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    replica_files = [p for p in written if p.endswith("stdout.log")]
    assert replica_files == [os.path.join(app_dir, "r", "0", "stdout.log")]
    assert written and all(p.startswith(str(log_dir) + os.sep) for p in written)
    assert sorted(os.listdir(tmp_path)) == ["logs"]
