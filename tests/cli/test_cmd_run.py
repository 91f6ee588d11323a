"""``jupyter-sched run`` end to end, as a real subprocess."""

from __future__ import annotations

import json
import shlex
import signal
from pathlib import Path

from cli_helpers import Cli  # type: ignore[import-not-found]

from tests.schedulers.helpers import pid_alive, wait_for_file, wait_until


def test_run_waits_on_local_and_streams_logs(cli: Cli) -> None:
    proc = cli("run", "utils.echo", "--msg", "hello from the cli", "--num_replicas", "2")
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    assert handle.startswith("local_cwd://default/echo-") and len(proc.stdout.splitlines()) == 1
    assert (
        "note: local_cwd replicas run as children of this command and end when it exits"
        in proc.stderr
    )
    assert (
        "echo/0 hello from the cli\n" in proc.stderr
        and "echo/1 hello from the cli\n" in proc.stderr
    )
    assert proc.stderr.rstrip().endswith(f"{handle}: SUCCEEDED")


def test_a_failed_app_exits_non_zero_with_its_status(cli: Cli) -> None:
    proc = cli("run", "--wait", "utils.sh", "echo oops >&2; exit 3")
    assert proc.returncode == 1, proc.stderr
    assert "note:" not in proc.stderr and "oops" not in proc.stderr  # --wait: wait quietly
    assert "State: FAILED" in proc.stderr and "*sh[0]:FAILED (exitcode: 3)" in proc.stderr


def test_log_streams_without_the_note(cli: Cli) -> None:
    proc = cli("run", "--log", "utils.sh", "echo out; echo err >&2")
    assert proc.returncode == 0 and "note:" not in proc.stderr
    assert "sh/0 out\n" in proc.stderr and "sh/0 err\n" in proc.stderr


def test_dryrun_prints_the_app_and_the_request_and_runs_nothing(cli: Cli) -> None:
    proc = cli("run", "--dryrun", "utils.sh", "--num_replicas", "2", "touch", "should-not-exist")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("=== APPLICATION ===\nname: sh\nroles:\n  - name: sh\n")
    assert "    num_replicas: 2\n" in out and "      - touch should-not-exist\n" in out
    assert "\n=== SCHEDULER REQUEST ===\nPopenRequest(app_id=sh-" in out
    assert "    [1] argv: sh -c 'touch should-not-exist'" in out
    assert not (cli.cwd / "should-not-exist").exists()
    assert "no apps on local_cwd" in cli("list").stdout


def test_docker_dryrun_adds_each_replica_by_hand_with_every_variable_it_gets(cli: Cli) -> None:
    """The request prints as TorchX's (our additions stated as a rule); the docker run lines after it
    carry each value, with secrets masked. Nothing needs an engine."""
    cli.env["MY_API_TOKEN"] = "s3cret-Value"
    proc = cli("run", "--dryrun", "-s", "local_docker", "--cfg", "copy_env=MY_API_TOKEN", "utils.sh",
               "--num_replicas", "2", "true")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    after_app = proc.stdout.split("\n=== SCHEDULER REQUEST ===\n")[1]
    request, by_hand = after_app.split("\n=== DOCKER RUN: EACH REPLICA BY HAND ===\n")
    app_id = request.split("app_id=", 1)[1].split(",", 1)[0]
    assert "Creating a container adds PYTHONUNBUFFERED=1" in request and "JUPYTER_SCHED_APP_ID=" not in request
    assert by_hand.startswith("# sh/0\ndocker run --detach \\\n    --name ") and "\n# sh/1\ndocker run " in by_hand
    for k, command in enumerate(by_hand.split("# sh/")[1:]):
        argv = shlex.split(command.split("\n", 1)[1])  # one command, its lines joined by the shell's rules
        assert argv[:3] == ["docker", "run", "--detach"] and argv[-3:] == ["sh", "-c", "true"]
        assert ("--network", "torchx") in zip(argv, argv[1:], strict=False)
        env = [b for a, b in zip(argv, argv[1:], strict=False) if a == "--env"]
        for var in (f"JUPYTER_SCHED_APP_ID={app_id}", f"JUPYTER_SCHED_REPLICA_ID={k}", "PYTHONUNBUFFERED=1",
                    "MY_API_TOKEN=********"):  # fmt: skip
            assert var in env, (var, env)
    assert "s3cret-Value" not in proc.stdout


def test_outlive_owner_returns_at_once_and_log_follows_from_another_process(cli: Cli) -> None:
    script = "for i in 1 2 3; do echo line $i; sleep 0.2; done"
    proc = cli("run", "--cfg", "outlive_owner=true", "utils.sh", script)
    assert proc.returncode == 0, proc.stderr
    handle = proc.stdout.strip()
    assert (
        "note:" not in proc.stderr
        and f"Follow it with `jupyter-sched log -f {handle}`" in proc.stderr
    )
    follow = cli("log", "-f", handle)
    assert follow.returncode == 0, follow.stderr
    assert follow.stdout == "sh/0 line 1\nsh/0 line 2\nsh/0 line 3\n"
    assert "State: SUCCEEDED" in cli("status", handle).stdout


def test_python_m_jupyter_sched_is_the_same_command(cli: Cli) -> None:
    proc = cli("run", "utils.python", "-c", "print('via -m')", module=True)
    assert proc.returncode == 0 and "python/0 via -m\n" in proc.stderr


def test_file_components_and_config_defaults(cli: Cli) -> None:
    (cli.cwd / "comps.py").write_text(
        "from jupyter_sched.specs import AppDef, Role\n\n"
        "def greet(who: str = 'nobody', times: int = 1) -> AppDef:\n"
        "    '''Greets.'''\n"
        "    return AppDef('greet', [Role('greet', 'img', entrypoint='echo', args=['hi', who], num_replicas=times)])\n"
    )
    (cli.cwd / "pyproject.toml").write_text(
        '[tool.jupyter_sched.components."comps.py:greet"]\nwho = "config"\ntimes = 2\n'
    )
    proc = cli("run", "comps.py:greet", "--times", "1")
    assert proc.returncode == 0, proc.stderr
    assert "greet/0 hi config\n" in proc.stderr and "greet/1" not in proc.stderr


def test_component_help_exits_zero(cli: Cli) -> None:
    proc = cli("run", "utils.sh", "--help")
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout.startswith("usage: utils.sh ")
        and "Runs a shell command with ``sh -c``." in proc.stdout
    )


def test_bad_input_exits_2_at_once_saying_what_exists(cli: Cli) -> None:
    cases = {
        (
            "run",
            "utils.echo",
            "--nmu_replicas",
            "2",
        ): "utils.echo: unknown flag --nmu_replicas. Did you mean --num_replicas?",
        (
            "run",
            "utils.echo",
            "--num_replicas",
            "two",
        ): "flag --num_replicas (int): 'two' is not a valid int",
        (
            "run",
            "-s",
            "slurmm",
            "utils.echo",
        ): "unknown scheduler 'slurmm'; available: local_cwd, local_dir",
        ("run", "utils.ehco"): "no component named 'utils.ehco'. Did you mean utils.echo",
        (
            "run",
            "--cfg",
            "log_dri=/x",
            "utils.echo",
        ): "Unknown run option 'log_dri'. Did you mean 'log_dir'?",
        ("run", "--verbose", "utils.echo"): "unknown option --verbose",
        ("run", "-s", "local_cwd", "utils.sh", "hostname; sleep 5", "--num_replicas", "2"): (
            "jupyter-sched run: error: --num_replicas is a flag of utils.sh, but here it comes after"
            " 'hostname; sleep 5', from where every word is passed on as args (the command and its arguments,"
            " or one shell script). Meant for utils.sh? Put it first:\n"
            "    jupyter-sched run -s local_cwd utils.sh --num_replicas 2 'hostname; sleep 5'\n"
            "or, to pass it on as written, end the flags with --:\n"
            "    jupyter-sched run -s local_cwd utils.sh -- 'hostname; sleep 5' --num_replicas 2"
        ),
        ("run",): "which component?",
        (
            "run",
            "utils.touch",
        ): "utils.touch: missing required flag --file\nusage: utils.touch --file STR",
    }
    for argv, message in cases.items():
        proc = cli(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert message in proc.stderr, (argv, proc.stderr)
        assert proc.stdout == ""


def test_an_app_whose_program_does_not_exist_is_refused_before_launch_exit_2(cli: Cli) -> None:
    (cli.cwd / "bad.py").write_text(
        "from jupyter_sched.specs import AppDef, Role\n\n"
        "def bad() -> AppDef:\n"
        "    return AppDef('bad', [Role('bad', 'img', entrypoint='no-such-program-xyz')])\n"
    )
    proc = cli("run", "bad.py:bad")
    assert proc.returncode == 2, proc.stderr
    assert "'no-such-program-xyz' is not an executable file on PATH" in proc.stderr
    assert not (cli.cwd.parent / "state").exists() or not list((cli.cwd.parent / "state").rglob("state.json"))


def test_ctrl_c_cancels_the_local_app(cli: Cli) -> None:
    proc = cli.popen("run", "utils.sh", "echo started; sleep 60")
    assert proc.stdout is not None and proc.stderr is not None
    handle = proc.stdout.readline().strip()
    for line in proc.stderr:
        if "sh/0 started" in line:
            break
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    assert f"interrupted: cancelled {handle}" in proc.stderr.read()
    assert "State: CANCELLED" in cli("status", handle).stdout


def test_sigterm_stops_the_local_app_says_so_in_one_line_and_exits_143(cli: Cli) -> None:
    """SIGTERM (a service manager, `kill`, a batch system's time limit) ends the app FAILED as its owner's
    exit does, and the command says so in one line, exit 143 as a shell reports it. It printed a Python
    traceback (SignalException ... got signal: 15) and exited 1."""
    started = cli.cwd / "started"
    proc = cli.popen("run", "--wait", "utils.sh", f"touch {started}; exec sleep 60")
    assert proc.stdout is not None and proc.stderr is not None
    handle = proc.stdout.readline().strip()
    wait_for_file(str(started), timeout=60)
    replica = json.loads(cli("status", "--json", handle).stdout)["roles"][0]["replicas"][0]["pid"]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    err = proc.stderr.read()
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err == f"jupyter-sched: stopped {handle} (SIGTERM): its replicas were ended; it is FAILED\n"
    status = cli("status", handle).stdout
    assert "State: FAILED" in status and "*sh[0]:FAILED (exitcode: -15)" in status, status
    wait_until(lambda: not pid_alive(replica), timeout=30, what=f"replica {replica} gone")


def test_bad_workspaces_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    proc = cli("run", "--workspace", str(tmp_path), "utils.echo")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        f"jupyter-sched: error: --workspace {str(tmp_path)!r}: the local_cwd scheduler does not support"
        " workspaces; drop --workspace or use local_docker"
    )
    missing = cli("run", "-s", "local_docker", "--workspace", "no-such-dir", "utils.echo")
    assert missing.returncode == 2, missing.stderr
    assert (
        f"--workspace 'no-such-dir': not a directory (looked at {cli.cwd / 'no-such-dir'})"
        in missing.stderr
    )
    as_url = cli("run", "-s", "local_docker", "--workspace", f"file://{cli.cwd}/no-such-dir", "utils.echo")
    assert as_url.returncode == 2 and f"not a directory (looked at {cli.cwd / 'no-such-dir'})" in as_url.stderr
    # an fsspec URL is checked on its own filesystem (no engine needed: nothing is built)
    remote = cli("run", "-s", "local_docker", "--workspace", "memory://no-such-dir/", "utils.echo")
    assert remote.returncode == 2, remote.stderr
    assert remote.stderr.startswith(
        "jupyter-sched: error: --workspace 'memory://no-such-dir/': workspace='memory://no-such-dir/' does not"
        " exist on its memory filesystem"
    )


def test_component_errors_name_the_component_or_the_config_file(cli: Cli) -> None:
    (cli.cwd / "comps.py").write_text(
        "from jupyter_sched.specs import AppDef\n\n"
        "def crash(n: int = 1) -> AppDef:\n"
        "    return None.roles\n"
    )
    crash = cli("run", "comps.py:crash")
    assert crash.returncode == 2, crash.stderr
    assert "Traceback" not in crash.stderr
    assert crash.stderr.startswith(
        "jupyter-sched: error: component comps.py:crash failed: AttributeError: 'NoneType' object has no"
    )
    assert f"raised at {cli.cwd / 'comps.py'}:4)" in crash.stderr
    (cli.cwd / "pyproject.toml").write_text(
        '[tool.jupyter_sched.components."utils.echo"]\nnum_replicas = "two"\n'
    )
    bad = cli("run", "utils.echo")
    assert bad.returncode == 2, bad.stderr
    assert (
        f"utils.echo: {cli.cwd / 'pyproject.toml'} [tool.jupyter_sched.components.\"utils.echo\"]:"
        " num_replicas = 'two': 'two' is not a valid int\nusage: utils.echo" in bad.stderr
    )
