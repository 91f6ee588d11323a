"""The utils.* built-ins, each run for real on local_cwd."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.components import ComponentArgError, MisplacedFlagError, materialize
from jupyter_sched.specs import AppState, BindMount, VolumeMount, named_resources

RunLocal = Any  # the run_local fixture of conftest.py


def test_echo(run_local: RunLocal) -> None:
    _, status, logs = run_local("utils.echo", ["--msg", "hello  there", "--num_replicas", "2"])
    assert status.state == AppState.SUCCEEDED
    assert logs == {("echo", 0): "hello  there\n", ("echo", 1): "hello  there\n"}


def test_echo_default_message(run_local: RunLocal) -> None:
    assert run_local("utils.echo", [])[2] == {("echo", 0): "hello world\n"}


def test_sh_quotes_each_argument_of_a_command(run_local: RunLocal) -> None:
    _, status, logs = run_local("utils.sh", ["printf", "[%s]\\n", "a  b", "$HOME", "*"])
    assert status.state == AppState.SUCCEEDED
    assert logs[("sh", 0)] == "[a  b]\n[$HOME]\n[*]\n"


def test_sh_runs_a_single_argument_as_a_script_with_macros_and_env(run_local: RunLocal) -> None:
    script = 'echo "r${replica_id} $GREETING" | tr a-z A-Z && exit ${replica_id}'
    _, status, logs = run_local("utils.sh", ["--num_replicas", "2", "--env", "GREETING=hi", script])
    assert logs == {("sh", 0): "R0 HI\n", ("sh", 1): "R1 HI\n"}
    assert status.state == AppState.FAILED  # replica 1 exited 1
    assert [r.exit_code for r in status.roles[0].replicas] == [0, 1]


def test_sh_needs_a_command() -> None:
    with pytest.raises(ComponentArgError, match=r"utils.sh: give the command to run"):
        materialize("utils.sh", ["--num_replicas", "2"])


def test_python_module_code_and_script(run_local: RunLocal, tmp_path: Path) -> None:
    _, status, logs = run_local("utils.python", ["-m", "json.tool", "--help"])
    assert status.state == AppState.SUCCEEDED and "usage:" in logs[("python", 0)]

    code = "import sys, os; print(sys.executable, sys.argv[1:], os.environ['PYTHONUNBUFFERED'])"
    handle, status, logs = run_local("utils.python", ["-c", code, "a", "b"])
    # on local_cwd "python3" is the interpreter running jupyter_sched, so the job sees the same packages
    assert logs[("python", 0)] == f"{sys.executable} ['a', 'b'] 1\n"
    assert handle.split("/")[-1].startswith("python-")

    script = tmp_path / "my-job.py"
    script.write_text("import sys\nprint('script', sys.argv[1:])\nsys.exit(3)\n")
    handle, status, logs = run_local("utils.python", ["--script", str(script), "x"])
    assert logs[("python", 0)] == "script ['x']\n"
    assert status.state == AppState.FAILED and status.roles[0].replicas[0].exit_code == 3
    assert handle.split("/")[-1].startswith("my-job-")


def test_python_takes_exactly_one_of_m_c_script() -> None:
    from jupyter_sched.components.utils import python

    with pytest.raises(
        ComponentArgError,
        match=r"give exactly one of -m MODULE, -c CODE or --script FILE \(none was given\)",
    ):
        materialize("utils.python", ["--num_replicas", "2", "x"])
    with pytest.raises(ValueError, match=r"\(got -m and -c\)"):
        python(m="a", c="b")
    with pytest.raises(ValueError, match=r"\(got -c and --script\)"):
        python(c="a", script="b")


def test_everything_after_m_c_or_script_belongs_to_the_program() -> None:
    assert materialize("utils.python", ["-m", "a", "-c", "b", "--help"]).roles[0].args == [
        "-m",
        "a",
        "-c",
        "b",
        "--help",
    ]
    # ... but a flag of utils.python there is most likely meant for it: refused, unless after -- (whose
    # leading -- is dropped, as TorchX does)
    with pytest.raises(MisplacedFlagError, match=r"utils.python --num_replicas 2 --num_replicas 3 --script t.py"):
        materialize("utils.python", ["--num_replicas", "2", "--script", "t.py", "--num_replicas", "3"])
    app = materialize(
        "utils.python", ["--num_replicas", "2", "--script", "t.py", "--", "--num_replicas", "3"]
    )
    assert app.roles[0].num_replicas == 2 and app.roles[0].args == ["t.py", "--num_replicas", "3"]


def test_python_in_an_image_is_python3() -> None:
    role = materialize("utils.python", ["-m", "pkg.train", "--lr", "1"]).roles[0]
    assert (role.entrypoint, role.args, role.name) == (
        "python3",
        ["-m", "pkg.train", "--lr", "1"],
        "python",
    )
    assert materialize("utils.python", ["-m", "pkg.train"]).name == "train"


def test_touch_creates_the_file_in_the_working_directory(
    run_local: RunLocal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, status, _ = run_local("utils.touch", ["--file", "made-by-touch"])
    assert status.state == AppState.SUCCEEDED
    assert (tmp_path / "made-by-touch").is_file()


def test_shared_flags_image_resources_retries_mounts() -> None:
    app = materialize(
        "utils.echo",
        ["--image", "busybox", "--h", "cpu.small", "--max_retries", "2", "--name", "greet",
         "--mounts", "type=bind,src=/data,dst=/d,readonly", "--mounts", "type=volume,src=v,dst=/v"],
    )  # fmt: skip
    role = app.roles[0]
    assert app.name == "greet" and role.image == "busybox" and role.max_retries == 2
    assert role.resource == named_resources["cpu.small"]
    assert role.mounts == [BindMount("/data", "/d", read_only=True), VolumeMount("v", "/v")]
    explicit = (
        materialize("utils.echo", ["--cpu", "4", "--gpu", "1", "--memMB", "2048"]).roles[0].resource
    )
    assert (explicit.cpu, explicit.gpu, explicit.memMB) == (4, 1, 2048)


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--h", "cpu.smal"],
            r"No named resource found for `cpu.smal`. Did you mean `cpu.small`\?",
        ),
        (["--mounts", "type=bind,src=/a"], r"bind mount of '/a' needs dst="),
        (["--num_replicas", "0"], r"--num_replicas must be 1 or more"),
        (["--max_retries", "-1"], r"--max_retries must be 0 or more"),
    ],
)
def test_shared_flag_errors(argv: list, message: str) -> None:
    with pytest.raises(ComponentArgError, match=message) as info:
        materialize("utils.echo", argv)
    assert "usage: utils.echo" in str(info.value)


def test_default_image_comes_from_the_environment() -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", "from jupyter_sched.components import materialize;"
         "print(materialize('utils.echo', []).roles[0].image)"],
        env={**os.environ, "JUPYTER_SCHED_IMAGE": "registry.local/img:1"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "registry.local/img:1"
