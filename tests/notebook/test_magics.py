"""Every magic, in an in-process IPython shell, in text mode (widgets: test_panes.py), with real local jobs."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from IPython.core.error import UsageError
from nbhelpers import py, wait_for

from jupyter_sched.cli.cmd_run import parse_run_args
from jupyter_sched.components.finder import materialize
from jupyter_sched.frontend.job import Job
from jupyter_sched.functions import FunctionError
from jupyter_sched.notebook.displays.record import JOB_MIME
from jupyter_sched.notebook.magics.sched_magics import Detached
from jupyter_sched.notebook.panes.job_view import mimebundle
from jupyter_sched.schedulers.api import DescribeAppResponse
from jupyter_sched.specs import AppDef, AppDryRunInfo, AppState, AppStatus, Role
from jupyter_sched.specs.output.labels import app_label


def run(ip: Any, line: str) -> Any:
    return ip.run_line_magic("sched_run", line)


# -- %sched_run: parsing --------------------------------------------------------------------------------------
def test_run_parses_exactly_like_the_cli(ip: Any, magics: Any) -> None:
    line = "--dryrun -s local_cwd --cfg prepend_cwd=true,cancel_grace=2 utils.sh --num_replicas 2 echo 'a  b'"
    info = run(ip, line)
    cli = parse_run_args(shlex.split(line))
    assert isinstance(info, AppDryRunInfo) and info.scheduler == cli.scheduler == "local_cwd"
    expected = materialize(cli.component, cli.component_args)
    assert [(r.entrypoint, r.args, r.num_replicas) for r in info.app.roles] == [
        (r.entrypoint, r.args, r.num_replicas) for r in expected.roles
    ]
    assert info.cfg["prepend_cwd"] is True and info.cfg["cancel_grace"] == 2.0
    assert [p.command_line for p in info.request.role_params["sh"]] == ["sh -c 'echo '\"'\"'a  b'\"'\"''"] * 2


@pytest.mark.parametrize(
    "line, needle",
    [
        ("--bogus utils.echo", "unknown option --bogus"),
        ("", "which component"),
        ("nosuch.component", "no component named"),
        ("--cfg nosuch=1 utils.echo", "nosuch"),
        ("-s nosuch utils.echo", "unknown scheduler"),
        ("utils.sh", "give the command"),
        ("utils.echo --nosuchflag 1", "nosuchflag"),
        ("utils.sh 'unclosed", "quotes"),
        ("--python utils.echo", "--python"),
        ("-s local_docker --detach --dryrun utils.echo", "--detach"),
    ],
)
def test_run_bad_arguments_raise_usage_error(ip: Any, magics: Any, line: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        run(ip, line)


def test_a_flag_after_the_command_is_refused_with_the_line_meant(ip: Any, magics: Any) -> None:
    """Issue 26: `%sched_run utils.sh "hostname; sleep 5" --num_replicas 2` ran one replica of a broken command."""
    with pytest.raises(UsageError) as info:
        run(ip, "-s local_cwd utils.sh \"hostname; sleep 5\" --num_replicas 2")
    text = str(info.value)
    assert text.startswith("%sched_run: --num_replicas is a flag of utils.sh") and "jupyter-sched" not in text
    assert "\n    %sched_run -s local_cwd utils.sh --num_replicas 2 'hostname; sleep 5'\n" in text
    assert text.endswith("\n    %sched_run -s local_cwd utils.sh -- 'hostname; sleep 5' --num_replicas 2")
    info = run(ip, "--dryrun -s local_cwd utils.sh -- \"hostname; sleep 5\" --num_replicas 2")  # the escape
    assert info.app.roles[0].args == ["-c", "'hostname; sleep 5' --num_replicas 2"]
    assert info.app.roles[0].num_replicas == 1


@pytest.mark.parametrize("line", ["--num_replicas 2 utils.sh hostname", "", "--json utils.echo"])
def test_usage_errors_speak_as_the_magic_and_list_its_own_flags(ip: Any, magics: Any, line: str) -> None:
    with pytest.raises(UsageError) as info:
        run(ip, line)
    text = str(info.value)
    assert text.startswith("%sched_run: ") and "jupyter-sched run " not in text, text
    if line.startswith("--num"):
        assert "Options are --quiet, --detach, --no-wait; run options -s, --cfg" in text
        assert "usage: %sched_run [--quiet] [--detach] [--no-wait]" in text
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("sched_run", "-s", "echo hi")
    text = str(info.value)
    assert text.startswith("%%sched_run: argument -s/--scheduler: expected one argument\n"), text
    assert "usage: %%sched_run [--quiet] [--detach] [--no-wait] [--python]" in text


def test_braces_are_never_expanded_and_a_dry_run_shows_what_dollars_became(ip: Any, magics: Any,
                                                                           capsys: Any) -> None:  # fmt: skip
    """Issue 26: IPython expanded `{i}` inside the code of `-c`; the magics expand only `$name`, as a shell
    does (not in single quotes, not names the notebook lacks), and a dry run says what the line became."""
    ip.user_ns.update(i=2, n=3, lr=0.5)
    result = ip.run_cell(
        "info = %sched_run --dryrun utils.python --num_replicas $n -c \"print(f'epoch {i}', '$lr', $lr, '$HOME')\""
    )
    assert result.error_in_exec is None
    info = ip.user_ns["info"]
    assert info.app.roles[0].num_replicas == 3
    assert info.app.roles[0].args == ["-c", "print(f'epoch {i}', '0.5', 0.5, '$HOME')"]
    out = capsys.readouterr().out
    assert out.startswith("the line after expanding $n, $lr:\n  %sched_run --dryrun utils.python --num_replicas 3")
    ip.run_cell("info = %sched_run --dryrun utils.sh 'echo $lr ${replica_id} {i}'")
    assert ip.user_ns["info"].app.roles[0].args == ["-c", "echo $lr ${replica_id} {i}"]
    assert capsys.readouterr().out == ""  # nothing was expanded: nothing to say
    ip.run_cell("%sched_logs --regex 'x{2}' nosuchapp")  # the other magics follow the same rule
    assert "x2" not in capsys.readouterr().err


def test_usage_error_shows_no_traceback(ip: Any, magics: Any, capsys: Any) -> None:
    result = ip.run_cell("%sched_run --bogus utils.echo")
    out = capsys.readouterr()
    assert isinstance(result.error_in_exec, UsageError)
    assert "unknown option --bogus" in out.err + out.out and "Traceback" not in out.err + out.out


def test_help_prints_usage_and_runs_nothing(ip: Any, magics: Any, capsys: Any) -> None:
    assert run(ip, "--help") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %sched_run [--quiet] [--detach] [--no-wait]") and "jupyter-sched run " not in out
    assert "memMB=1024" in out  # the default memory limit of the utils.* components is said
    assert run(ip, "utils.echo --help") is None
    assert "--msg" in capsys.readouterr().out


def test_appdef_variable_runs_as_is(ip: Any, magics: Any) -> None:
    ip.user_ns["myapp"] = AppDef("mine", [Role("worker", "img", entrypoint="echo", args=["from", "appdef"])])
    info = run(ip, "--dryrun myapp")
    assert info.app.name == "mine" and info.request.role_params["worker"][0].args == ["echo", "from", "appdef"]
    with pytest.raises(UsageError, match="takes no arguments"):
        run(ip, "--dryrun myapp --msg x")
    ip.user_ns["notapp"] = "a string"
    with pytest.raises(UsageError, match="notapp is a str variable, not an AppDef"):
        run(ip, "--dryrun notapp")


def test_a_bad_config_default_names_its_file_and_table(
    ip: Any, magics: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jupyter_sched.components."utils.echo"]\nnum_replicas = "two"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"pyproject\.toml \[tool\.jupyter_sched\.components\.\"utils\.echo\"\]"):
        run(ip, "--dryrun utils.echo")


def test_notebook_flags_are_taken_only_before_the_component(ip: Any, magics: Any) -> None:
    info = run(ip, "--dryrun utils.sh echo --quiet --detach")
    assert info.request.role_params["sh"][0].args[-1] == "echo --quiet --detach"
    assert info.cfg["outlive_owner"] is False
    info = run(ip, "--detach --dryrun utils.echo")
    assert info.cfg["outlive_owner"] is True and info.request.outlive_owner is True


def test_scheduler_cfg_trait_sits_between_config_and_cfg_flag(ip: Any, magics: Any) -> None:
    magics.scheduler_cfg = {"local_cwd": {"cancel_grace": "3", "prepend_cwd": True}}
    info = run(ip, "--dryrun utils.echo")
    assert info.cfg["cancel_grace"] == 3.0 and info.cfg["prepend_cwd"] is True
    assert run(ip, "--dryrun --cfg cancel_grace=5 utils.echo").cfg["cancel_grace"] == 5.0
    magics.scheduler_cfg = {"local_cwd": {"nosuch": 1}}
    with pytest.raises(UsageError, match="scheduler_cfg.*nosuch"):
        run(ip, "--dryrun utils.echo")


def test_default_scheduler_trait_is_used_unless_s_is_given(ip: Any, magics: Any) -> None:
    magics.default_scheduler = "local_dir"  # the default image is not a directory: local_dir refuses it
    with pytest.raises(UsageError, match="local_dir"):
        run(ip, "--dryrun utils.echo")
    assert run(ip, "--dryrun -s local_cwd utils.echo").scheduler == "local_cwd"


# -- %sched_run: running ---------------------------------------------------------------------------------------
def test_run_wait_in_text_mode_returns_the_ended_job(ip: Any, magics: Any, capsys: Any) -> None:
    job = run(ip, "--wait utils.sh 'echo hi; echo oops >&2'")
    assert isinstance(job, Job) and job.last_status.state == AppState.SUCCEEDED
    assert "launched" in capsys.readouterr().out
    bundle = mimebundle(job)
    assert set(bundle) == {"text/plain", "text/html", JOB_MIME}
    assert bundle[JOB_MIME] == {"handle": job.handle, "name": job.name, "state": "SUCCEEDED", "final": True,
                                "as_of": None}  # fmt: skip
    assert "SUCCEEDED" in bundle["text/plain"] and f"%sched_status {job.handle}" in bundle["text/plain"]
    assert job.logs() == ["sh/0 | hi", "sh/0 ! oops"]
    assert job.logs(streams="stdout") == ["hi"]
    assert job.status.state == AppState.SUCCEEDED and job.state == AppState.SUCCEEDED


def test_run_log_in_text_mode_streams_the_lines(ip: Any, magics: Any, capsys: Any) -> None:
    job = run(ip, "--log utils.sh --num_replicas 2 'echo hello $JUPYTER_SCHED_REPLICA_ID'")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("sh launched:") and sorted(out[1:]) == ["sh/0 hello 0", "sh/1 hello 1"]
    assert job.last_status.state == AppState.SUCCEEDED


def test_run_returns_at_once_and_the_job_can_be_cancelled(ip: Any, magics: Any) -> None:
    job = run(ip, "utils.sh 'sleep 30'")
    assert job.state == AppState.RUNNING
    text = mimebundle(job)["text/plain"]
    head = text.splitlines()[0]
    assert job.handle in head and "RUNNING" in head and "(as of " in head  # a state says when it was true
    assert "RUNNING" not in repr(job) and "RUNNING" not in repr([job])  # e.g. a list of jobs as a cell result
    job.cancel()
    assert job.wait(timeout=30).state == AppState.CANCELLED
    assert repr(job) == f"<Job {job.handle} CANCELLED>"  # a final state cannot go stale


def test_compact_display_is_only_for_the_launching_cell(ip: Any, magics: Any, capsys: Any) -> None:
    """``job = %sched_run --quiet ...`` displays nothing in its cell; showing ``job`` in a later cell is the
    full display (final state and how to re-attach), not the one-line summary meant for the launching cell."""
    capsys.readouterr()
    assert ip.run_cell("qjob = %sched_run --quiet --wait utils.echo --msg later", store_history=True).success
    job = ip.user_ns["qjob"]
    assert ip.run_cell("qjob", store_history=True).success
    out = capsys.readouterr().out
    assert "SUCCEEDED" in out and f"re-attach: %sched_status {job.handle}" in out


def test_quiet_shows_one_line_once(ip: Any, magics: Any) -> None:
    job = run(ip, "--quiet --wait utils.echo")
    assert mimebundle(job) == {
        "text/plain": job.summary(),
        "text/html": f"<div>{job.summary()}</div>",
    }
    assert "re-attach" in mimebundle(job)["text/plain"]


def test_wait_trait_blocks_unless_no_wait(ip: Any, magics: Any) -> None:
    magics.wait = True
    assert run(ip, "utils.echo").last_status.state == AppState.SUCCEEDED
    job = run(ip, "--no-wait utils.sh 'sleep 30'")
    assert job.state == AppState.RUNNING
    job.cancel()


def test_cell_magic_runs_the_cell_as_a_shell_script(ip: Any, magics: Any) -> None:
    job = ip.run_cell_magic(
        "sched_run", "--wait --num_replicas 2 --name cellsh", 'echo "a  b" | tr a A\necho $((1+2))\n'
    )
    assert job.name == "cellsh" and job.last_status.state == AppState.SUCCEEDED
    assert job.logs(role="sh", k=1, streams="stdout") == ["A  b", "3"]


def test_cell_magic_fills_in_macros_but_keeps_the_shells_dollar_dollar(ip: Any, magics: Any) -> None:
    script = 'echo "replica ${replica_id}"\necho "pid $$" | tr -d 0-9\necho "$$" | grep -qx "[0-9]*" && echo numeric\n'
    job = ip.run_cell_magic("sched_run", "--wait --num_replicas 2", script)
    assert job.logs(role="sh", k=1, streams="stdout") == ["replica 1", "pid ", "numeric"]


@pytest.mark.parametrize(
    "line, cell, needle",
    [
        ("--dryrun utils.python", "print(1)", "'utils.python'.*--python"),  # not silently part of the script
        ("--dryrun echo", "hi", "'echo'"),
        ("--dryrun --python -m mypkg", "print(1)", "-m mypkg"),  # would hand the cell to mypkg as argv
        ("--dryrun --python --script x.py", "print(1)", "--script x.py"),
        ("--dryrun", "  \n\t\n", "empty"),  # a blank cell is no script
    ],
)
def test_cell_magic_line_takes_only_flags(ip: Any, magics: Any, line: str, cell: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        ip.run_cell_magic("sched_run", line, cell)


def test_cell_magic_python(ip: Any, magics: Any) -> None:
    job = ip.run_cell_magic("sched_run", "--python --wait", "import sys\nprint('py', sys.version_info[0])\n")
    assert job.logs(streams="stdout") == ["py 3"]
    with pytest.raises(UsageError, match="nosuchflag"):
        ip.run_cell_magic("sched_run", "--nosuchflag 1", "echo hi")


def test_interrupting_wait_detaches_and_the_job_keeps_running(ip: Any, magics: Any, monkeypatch: Any) -> None:
    def interrupted(self: Job, timeout: Any = None) -> Any:
        self.fetch_status()
        raise KeyboardInterrupt

    monkeypatch.setattr(Job, "wait", interrupted)
    with pytest.raises(Detached) as info:
        run(ip, "--wait utils.sh 'sleep 30'")
    message = info.value._render_traceback_()
    assert len(message) == 1 and message[0].startswith("Interrupted: stopped waiting for")
    assert "not stopped" in message[0] and "://" not in message[0]  # no handle for JupyterLab to half-link
    app_id = message[0].split()[4]
    assert isinstance(info.value, KeyboardInterrupt)
    monkeypatch.undo()
    job = magics.session.job(magics.session.resolve(app_id))
    assert job.state == AppState.RUNNING
    magics.cancel_on_interrupt = True
    monkeypatch.setattr(Job, "wait", interrupted)
    with pytest.raises(Detached, match="cancelling"):
        run(ip, "--wait utils.sh 'sleep 30'")
    monkeypatch.undo()
    cancelled = next(reversed(magics.session.jobs.values()))
    assert cancelled.wait(timeout=30).state == AppState.CANCELLED
    job.cancel()


def test_detached_prints_one_line_in_a_cell(ip: Any, magics: Any, monkeypatch: Any, capsys: Any) -> None:
    monkeypatch.setattr(Job, "wait", lambda self, timeout=None: (_ for _ in ()).throw(KeyboardInterrupt))
    ip.run_cell("%sched_run --wait utils.sh 'sleep 30'")
    out = capsys.readouterr()
    lines = (out.out + out.err).strip().splitlines()
    app_id = lines[0].split()[-7]
    label = f"{app_id} on local_cwd"  # an app id, not a handle, in stream output: JupyterLab half-links handles
    assert lines[0] == f"sh launched: {label} (waiting; interrupt to detach)"
    assert lines[1] == f"Stopped waiting for sh (RUNNING): {label}"
    # the truth about a local app: it ends with the kernel unless --detach; how to get the Job back
    assert "restarting or shutting down the kernel ends its replicas" in lines[2] and "--detach" in lines[2]
    assert f"job = %sched_job {app_id}" in lines[3] and f"%sched_cancel {app_id}" in lines[3]
    assert lines[4] == f"Interrupted: stopped waiting for {label} (the app was not stopped)." and len(lines) == 5
    assert "://" not in out.out + out.err
    monkeypatch.undo()
    next(reversed(magics.session.jobs.values())).cancel()


# -- %sched_run: a notebook function launches, shows and waits as a component does ---------------------------
#: One run of each kind, as a component line and as a notebook function (defined by the fixture below). The
#: two used to have a launch-and-wait tail each, and the function's lacked what these tests check (issue 32).
RUNS = {
    "component": {
        "echo": "utils.sh 'echo said hi'",
        "fail": "utils.sh 'exit 3'",
        "one_fails": py(
            "import os, sys, time\nif os.environ['JUPYTER_SCHED_REPLICA_ID'] == '1': sys.exit(3)\ntime.sleep(60)",
            "--num_replicas 2",
        ),
    },
    "function": {"echo": "fn_echo", "fail": "fn_fail", "one_fails": "fn_one_fails --num_replicas 2"},
}
FUNCTIONS = (
    "def fn_echo(msg: str = 'hi'):\n"
    "    print('said', msg)\n"
    "    return msg\n"
    "def fn_fail():\n"
    "    raise RuntimeError('on purpose')\n"
    "def fn_one_fails():\n"
    "    import os, time\n"
    "    if os.environ['RANK'] == '1':\n"
    "        raise RuntimeError('rank 1 fails')\n"
    "    time.sleep(60)\n"
)


@pytest.fixture(params=sorted(RUNS))
def runs(request: pytest.FixtureRequest, ip: Any, magics: Any) -> Any:
    """The lines of :data:`RUNS` of one kind, with the notebook's functions defined."""
    assert ip.run_cell(FUNCTIONS).success
    return RUNS[request.param]


def test_help_among_the_run_options_prints_the_usage(ip: Any, runs: Any, capsys: Any) -> None:
    """A function's ``--help`` was argparse's ParserExit traceback under the usage."""
    assert run(ip, f"--help {runs['echo']}") is None
    assert capsys.readouterr().out.startswith("usage: %sched_run [--quiet] [--detach] [--no-wait]")


def test_detach_is_refused_where_apps_do_not_depend_on_the_kernel(ip: Any, runs: Any) -> None:
    """A function's ``--detach`` there was an unknown run option ``outlive_owner``, which nobody typed."""
    with pytest.raises(UsageError, match="--detach: slurm apps do not depend on the kernel"):
        run(ip, f"--detach -s slurm --dryrun {runs['echo']}")


def test_a_wait_in_text_mode_says_it_launched_and_shows_the_ended_job(ip: Any, runs: Any, capsys: Any) -> None:
    """A function's wait in text mode said nothing while it waited, and its result was one line."""
    job = run(ip, f"--wait {runs['echo']}")
    assert job.last_status.state == AppState.SUCCEEDED
    assert f"{job.name} launched: " in capsys.readouterr().out
    assert JOB_MIME in mimebundle(job), "the full display: nothing above showed the job"


def test_log_in_text_mode_streams_the_lines(ip: Any, runs: Any, capsys: Any) -> None:
    """A function's ``--log`` in text mode printed nothing (as ``--wait`` did)."""
    job = run(ip, f"--log {runs['echo']}")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{job.name} launched:") and out[1:] == [f"{job.name}/0 said hi"]


def test_an_assigned_job_is_shown_once_then_one_line_in_its_cell(ip: Any, runs: Any, capsys: Any) -> None:
    """``job = %sched_run FUNCTION`` then ``job`` in the same cell showed the job twice."""
    capsys.readouterr()
    assert ip.run_cell(f"shown = %sched_run {runs['echo']}\nshown", store_history=True).success
    job, out = ip.user_ns["shown"], capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert out.count("re-attach: ") == 1 and last.startswith("Out[") and job.handle in last, out
    job.wait(timeout=60)


def test_a_failed_wait_still_assigns_the_job(ip: Any, runs: Any) -> None:
    """``job = %sched_run --wait FUNCTION`` that failed left ``job`` unset, so there was no Job to look into."""
    ip.user_ns.pop("failed", None)
    result = ip.run_cell(f"failed = %sched_run --wait {runs['fail']}")
    assert result.error_in_exec is not None
    job = ip.user_ns.get("failed")
    assert isinstance(job, Job) and job.last_status.state == AppState.FAILED


def test_a_functions_error_shows_its_traceback_once_in_text_mode(ip: Any, magics: Any, capsys: Any) -> None:
    """In a terminal (text mode) ``--log`` prints the replica's traceback, so the error is its line and how to
    debug it; without ``--log`` nothing showed the traceback, so the error keeps it (issue 35, point 19)."""
    assert ip.run_cell(FUNCTIONS).success
    capsys.readouterr()
    with pytest.raises(FunctionError) as logged:
        run(ip, "--wait --log fn_fail")
    printed = capsys.readouterr().out
    assert "RuntimeError: on purpose" in printed and "Traceback (most recent call last)" in printed, printed
    lines = logged.value._render_traceback_()
    assert "its traceback is in the job's log above" in lines[1] and "Traceback" not in "".join(lines), lines
    app_id = app_label(logged.value.handle).split()[0]
    assert lines[-1].startswith(f"to debug it here: job.exception().rerun_here() (after job = %sched_job {app_id})")
    named = ip.run_cell("named = %sched_run --wait --log fn_fail").error_in_exec
    assert isinstance(named, FunctionError), "the line's variable is named in its debug hint"
    assert named._render_traceback_()[-1].startswith("to debug it here: named.exception().rerun_here() raises it")
    with pytest.raises(FunctionError) as unlogged:
        run(ip, "--wait fn_fail")
    lines = unlogged.value._render_traceback_()
    assert any(line.startswith("Traceback (most recent call last)") for line in lines), "the only place it shows"


def test_fail_fast_stops_the_other_replicas(ip: Any, magics: Any, runs: Any) -> None:
    """A function's ``--fail-fast`` was parsed and dropped: the cell waited for the other replica's minute."""
    with pytest.raises(Exception):  # noqa: B017 - JobFailed, or the function's own FunctionError
        run(ip, f"--wait --fail-fast {runs['one_fails']}")
    job = next(reversed(magics.session.jobs.values()))
    assert job.last_status.is_terminal() and "other replicas were stopped (fail_fast)" in job.last_status.msg


# -- %sched_logs ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def logged(ip: Any) -> Job:
    """A finished 2-replica job with stdout, stderr, ANSI colour and a \\r progress bar."""
    from jupyter_sched.notebook.extension import load

    code = (
        "import os, sys\n"
        "k = os.environ['JUPYTER_SCHED_REPLICA_ID']\n"
        "for i in range(5): print(f'line {i} of {k}')\n"
        "print(f'error {k}', file=sys.stderr)\n"
        "for p in (10, 50, 100): print(f'\\rprogress {p}%', end='')\n"
        "print()\n"
        "print('\\x1b[31m<b>red</b>\\x1b[0m')\n"
    )
    magics = load(ip)
    magics.interactive = False
    job = ip.run_line_magic("sched_run", "--wait " + py(code, "--num_replicas 2 --name logged"))
    assert job.last_status.state == AppState.SUCCEEDED
    return job


def logs(ip: Any, capsys: Any, line: str) -> str:
    assert ip.run_line_magic("sched_logs", line) is None
    return capsys.readouterr().out


def test_logs_snapshot_prints_all_replicas(ip: Any, magics: Any, logged: Job, capsys: Any) -> None:
    out = logs(ip, capsys, logged.handle).splitlines()
    assert "python/0 | line 0 of 0" in out and "python/1 | line 4 of 1" in out
    assert "python/0 ! error 0" in out and "python/1 | progress 100%" in out
    assert "python/0 | <b>red</b>" in out  # colours stripped, text kept as text
    assert not any("\x1b" in line or "\r" in line for line in out)


def test_logs_selection_forms(ip: Any, magics: Any, logged: Job, capsys: Any) -> None:
    assert logs(ip, capsys, f"{logged.handle} python -r 1 --streams stdout --regex 'line [34]'").splitlines() == [
        "line 3 of 1",
        "line 4 of 1",
    ]
    assert logs(ip, capsys, f"{logged.handle}/python/1 --streams stderr").splitlines() == ["error 1"]
    assert logs(ip, capsys, f"{logged.app_id}/python/0 --streams stderr").splitlines() == ["error 0"]
    ip.user_ns["logged_job"] = logged
    assert logs(ip, capsys, "logged_job python -r 0 --streams stderr").splitlines() == ["error 0"]
    tail = logs(ip, capsys, f"{logged.app_id[:-3]} python -r 0 --streams stdout -n 2").splitlines()
    assert tail == ["... 5 earlier lines not shown (use --tail N)", "progress 100%", "<b>red</b>"]
    assert logs(ip, capsys, f"{logged.handle} --since 1h --streams stderr -r 0 python").splitlines() == ["error 0"]
    assert logs(ip, capsys, f"{logged.handle} --until 1h --streams stderr -r 0 python").strip() == ""


ORDERED = "echo out 1; sleep 0.2; echo err >&2; sleep 0.2; echo out 2"


@pytest.mark.parametrize("backend", ["local_cwd", "local_docker"])
def test_snapshots_keep_stdout_and_stderr_in_write_order(
    request: pytest.FixtureRequest, ip: Any, magics: Any, capsys: Any, backend: str
) -> None:
    if backend == "local_docker":
        request.getfixturevalue("docker_engine")
    image = "--image jupyter-sched/busybox:local " if backend == "local_docker" else ""
    job = run(ip, f"--wait -s {backend} utils.sh {image}{shlex.quote(ORDERED)}")
    assert job.state == AppState.SUCCEEDED
    ordered = ["sh/0 | out 1", "sh/0 ! err", "sh/0 | out 2"]  # stderr still marked "!"
    assert job.logs() == ordered
    capsys.readouterr()
    assert logs(ip, capsys, job.handle).splitlines() == ordered


def test_logs_follow_in_text_mode_prints_until_the_end(ip: Any, magics: Any, capsys: Any) -> None:
    job = run(ip, "utils.sh 'for i in 1 2 3; do echo tick $i; sleep 0.1; done'")
    out = logs(ip, capsys, f"{job.handle} -f")
    assert [line.split(None, 1)[1] for line in out.splitlines()] == ["tick 1", "tick 2", "tick 3"]
    assert job.state == AppState.SUCCEEDED
    out = logs(ip, capsys, f"{job.handle} -f -n 1")  # -n: each replica's last N lines, then follow
    assert [line.split(None, 1)[1] for line in out.splitlines()] == ["tick 3"]


@pytest.mark.parametrize(
    "args, needle",
    [
        ("{h} nosuchrole", "no role 'nosuchrole'"),
        ("{h} python -r 7", "replicas"),
        ("{h} --regex '('", "regular expression"),
        ("{h} --since yesterday", "not a time"),
        ("{h} -n 0", "--tail"),
        ("{h} -r x", "replica numbers"),
        ("{h} --streams both", "invalid choice"),
        ("nosuchapp-123", "no app 'nosuchapp-123'"),
        ("bad://", "not"),
        ("{h}/python/0 other", "two roles"),
        ("{h} -r 3-1", "'3-1'.*1-3"),  # an empty range would silently show nothing
        ("{h} -r ,", "replica numbers"),
        ("{h} -r=-1", "replica numbers"),
        ("{h} --snapshot -f", "--snapshot.*--follow"),
    ],
)
def test_logs_errors_are_usage_errors(ip: Any, magics: Any, logged: Job, args: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        ip.run_line_magic("sched_logs", args.format(h=logged.handle))


# -- %sched_status / %sched_describe / %sched_list / %sched_cancel ---------------------------------------------------
def test_status_and_describe(ip: Any, magics: Any, logged: Job) -> None:
    status = ip.run_line_magic("sched_status", logged.app_id)
    assert isinstance(status, AppStatus) and status.state == AppState.SUCCEEDED
    assert [r.exit_code for role in status.roles for r in role.replicas] == [0, 0]
    desc = ip.run_line_magic("sched_describe", logged.handle)
    assert isinstance(desc, DescribeAppResponse) and desc.app_id == logged.app_id
    assert desc.roles[0].name == "python" and desc.roles[0].num_replicas == 2
    with pytest.raises(UsageError, match="no app"):
        ip.run_line_magic("sched_status", "local_cwd://default/nosuch-000")
    with pytest.raises(UsageError, match="no app"):
        ip.run_line_magic("sched_describe", "local_cwd://default/nosuch-000")
    with pytest.raises(UsageError, match="usage: %sched_status"):
        ip.run_line_magic("sched_status", "a b")


def test_status_without_target_is_the_last_job(ip: Any, magics: Any) -> None:
    job = run(ip, "--wait utils.echo --msg last")
    assert ip.run_line_magic("sched_status", "").state == AppState.SUCCEEDED
    assert magics.session.resolve("") == job.handle


def test_list_in_text_mode(ip: Any, magics: Any, logged: Job, capsys: Any) -> None:
    ip.run_line_magic("sched_list", "")
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if logged.handle in line)
    assert row.split()[:3] == [logged.handle, "logged", "SUCCEEDED"] and row.split()[4] == "took"
    ip.run_line_magic("sched_list", "-s nosuch")
    assert "nosuch" in capsys.readouterr().out
    with pytest.raises(UsageError, match=r"unrecognized arguments: --nope\nusage: %sched_list \[-s SCHEDULER\]"):
        ip.run_line_magic("sched_list", "--nope")


def test_cancel(ip: Any, magics: Any, logged: Job, capsys: Any) -> None:
    job = run(ip, "utils.sh 'sleep 30'")
    ip.run_line_magic("sched_cancel", f"{job.app_id} --wait")
    out = capsys.readouterr().out
    assert f"cancelling {job.app_id} on local_cwd" in out and f"{job.app_id} on local_cwd: CANCELLED" in out
    ip.run_line_magic("sched_cancel", logged.handle)
    assert "already ended (SUCCEEDED)" in capsys.readouterr().out
    with pytest.raises(UsageError, match="no app"):
        ip.run_line_magic("sched_cancel", "local_cwd://default/nosuch-000")


def test_lookup_by_name_prefix_and_ambiguity(ip: Any, magics: Any) -> None:
    first = run(ip, "--wait utils.echo --name twin")
    second = run(ip, "--wait utils.echo --name twin")
    assert magics.session.resolve("twin") == second.handle  # a name means its latest launch
    assert magics.session.resolve(first.app_id[:-2]) == first.handle
    with pytest.raises(UsageError, match="several apps"):
        ip.run_line_magic("sched_status", "twin-")
    with pytest.raises(UsageError, match="malformed|not of the form"):
        ip.run_line_magic("sched_status", "x://")
    wait_for(lambda: first.state.is_terminal)
