"""``jupyter-sched log`` end to end: prefixes, progress bars, selection, filters, colours and errors."""

from __future__ import annotations

import os
import subprocess

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

PROGRESS = "printf 'step 1\\r'; sleep 0.1; printf 'step 2\\r'; sleep 0.1; printf 'done\\n'"


@pytest.fixture(scope="module")
def three(module_cli: Cli) -> str:
    """A finished app with 3 replicas, each printing 2 lines and 1 error line; replica k exits k. Tests that
    read it use ``module_cli`` (the same state directory)."""
    cli = module_cli
    script = 'echo "r${replica_id} a"; echo "r${replica_id} b"; echo "r${replica_id} err" >&2; exit ${replica_id}'
    proc = cli("run", "utils.sh", "--num_replicas", "3", script)
    assert proc.returncode == 1, proc.stderr
    return proc.stdout.strip()


def test_all_replicas_every_line_prefixed_once(module_cli: Cli, three: str) -> None:
    cli = module_cli
    proc = cli("log", three)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == [
        f"sh/{k} r{k} {x}" for k in range(3) for x in ("a", "b", "err")
    ]
    for k in range(3):  # whole items interleave, but each replica's stdout lines keep their order
        mine = [
            line
            for line in proc.stdout.splitlines()
            if line.startswith(f"sh/{k} r{k} ") and "err" not in line
        ]
        assert mine == [f"sh/{k} r{k} a", f"sh/{k} r{k} b"]


def test_role_and_replica_selection(module_cli: Cli, three: str) -> None:
    cli = module_cli
    twice = cli("log", f"{three}/sh/1,1", "--streams", "stdout")
    assert twice.stdout == "sh/1 r1 a\nsh/1 r1 b\n"  # a replica named twice is read once
    assert cli("log", f"{three}/sh/1", "--streams", "stdout").stdout == "sh/1 r1 a\nsh/1 r1 b\n"
    two = cli("log", f"{three}/sh/0,2", "--streams", "stdout").stdout.splitlines()
    assert sorted(two) == ["sh/0 r0 a", "sh/0 r0 b", "sh/2 r2 a", "sh/2 r2 b"]
    assert len(cli("log", f"{three}/sh").stdout.splitlines()) == 9


def test_regex_and_streams(module_cli: Cli, three: str) -> None:
    cli = module_cli
    assert cli("log", f"{three}/sh/2", "--regex", "b$").stdout == "sh/2 r2 b\n"
    assert cli("log", f"{three}/sh/0", "--streams", "stdout").stdout == "sh/0 r0 a\nsh/0 r0 b\n"
    assert cli("log", f"{three}/sh/0", "--streams", "stderr").stdout == "sh/0 r0 err\n"


def test_since_and_until(module_cli: Cli, three: str) -> None:
    cli = module_cli
    assert (
        cli("log", f"{three}/sh/0", "--since", "1h", "--streams", "stdout").stdout
        == "sh/0 r0 a\nsh/0 r0 b\n"
    )
    assert cli("log", f"{three}/sh/0", "--since", "2999-01-01T00:00:00").stdout == ""
    assert cli("log", f"{three}/sh/0", "--until", "2000-01-01T00:00:00").stdout == ""
    bad = cli("log", three, "--since", "yesterday")
    assert bad.returncode == 2 and "--since 'yesterday': not a time" in bad.stderr
    backwards = cli("log", three, "--since", "2024-05-02T00:00", "--until", "2024-05-01T00:00")
    assert backwards.returncode == 2 and (
        "--since 2024-05-02T00:00 is after --until 2024-05-01T00:00; nothing could match" in backwards.stderr
    )


def test_progress_frames_keep_one_prefix_each(cli: Cli) -> None:
    handle = cli.run_app("utils.sh", PROGRESS)
    assert cli("log", handle).stdout == "sh/0 step 1\rsh/0 step 2\rsh/0 done\n"


def test_follow_a_running_app_until_it_ends_then_report_its_failure(cli: Cli) -> None:
    proc = cli(
        "run",
        "--cfg",
        "outlive_owner=true",
        "utils.sh",
        f"{PROGRESS}; sleep 0.2; echo last; exit 4",
    )
    handle = proc.stdout.strip()
    follow = cli("log", "-f", handle)
    assert follow.stdout == "sh/0 step 1\rsh/0 step 2\rsh/0 done\nsh/0 last\n"
    assert follow.returncode == 1 and f"{handle}: FAILED" in follow.stderr


def test_follow_says_so_and_fails_when_the_app_directory_is_deleted(cli: Cli) -> None:
    """``log -f`` on an app whose records vanish (its directory removed by hand) cannot know how the app
    ended: it says what happened and exits 1, instead of ending quietly with 0."""
    gate = cli.cwd / "gate"
    script = f"echo ready; for i in $(seq 600); do [ -e {gate} ] && break; sleep 0.1; done; echo after"
    handle = cli.run_app("--cfg", "outlive_owner=true", "utils.sh", script)
    app_dir = cli.cwd.parent / "state" / "default" / handle.rsplit("/", 1)[-1]
    assert (app_dir / "state.json").exists()
    follow = cli.popen("log", "-f", handle)
    try:
        assert follow.stdout is not None and follow.stdout.readline() == "sh/0 ready\n"
        subprocess.run(["rm", "-rf", str(app_dir)], check=True)
        out, err = follow.communicate(timeout=60)
    finally:
        gate.touch()  # the replica ends (its owner had let it outlive the run)
    assert follow.returncode == 1, (out, err)
    assert f"{handle}: its records were removed while its logs were followed" in err
    assert "how the app ended is unknown" in err


def test_last_n_lines_of_each_replica(module_cli: Cli, three: str) -> None:
    cli = module_cli
    assert cli("log", f"{three}/sh/1", "-n", "1", "--streams", "stdout").stdout == "sh/1 r1 b\n"
    assert sorted(cli("log", f"{three}/sh", "--lines", "1", "--streams", "stdout").stdout.splitlines()) == [
        "sh/0 r0 b", "sh/1 r1 b", "sh/2 r2 b"
    ]  # fmt: skip
    assert cli("log", f"{three}/sh/1", "-n", "99", "--streams", "stdout").stdout == "sh/1 r1 a\nsh/1 r1 b\n"
    bad = cli("log", three, "-n", "0")
    assert bad.returncode == 2 and "-n/--lines 0: give 1 or more" in bad.stderr


def test_follow_from_the_last_n_lines_continues_without_gap_or_repeat(cli: Cli) -> None:
    gate = cli.cwd / "gate"
    script = f"for i in 1 2 3 4 5; do echo line $i; done; while [ ! -e {gate} ]; do sleep 0.05; done; echo line 6"
    handle = cli("run", "--cfg", "outlive_owner=true", "utils.sh", script).stdout.strip()
    for _ in range(200):  # until all five lines are in the log (the app then waits for the gate)
        if len(cli("log", handle).stdout.splitlines()) == 5:
            break
    follow = cli.popen("log", "-f", "-n", "2", handle)
    assert follow.stdout is not None
    first = [follow.stdout.readline(), follow.stdout.readline()]  # printed after its snapshot was taken
    gate.touch()
    rest, err = follow.communicate(timeout=60)
    assert first + [rest] == ["sh/0 line 4\n", "sh/0 line 5\n", "sh/0 line 6\n"], err
    assert follow.returncode == 0, err


def test_prefixes_are_coloured_only_on_a_terminal(module_cli: Cli, three: str) -> None:
    cli = module_cli
    piped = cli("log", f"{three}/sh/1", "--streams", "stdout")
    assert "\033[" not in piped.stdout
    out = cli.on_terminal("log", f"{three}/sh/1", "--streams", "stdout").decode()
    assert "\033[32msh/1\033[0m r1 a" in out
    no_color = subprocess.run(
        cli.argv(("log", f"{three}/sh/1", "--streams", "stdout")),
        cwd=cli.cwd,
        env={**cli.env, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
    )
    assert no_color.stdout == "sh/1 r1 a\nsh/1 r1 b\n"


def test_unknown_app_role_or_replica_fails_at_once_listing_what_exists(
    module_cli: Cli, three: str
) -> None:
    cli = module_cli
    app_id = three.rsplit("/", 1)[1]
    cases = {
        ("local_cwd://default/nope-123",): (
            1,
            "no app local_cwd://default/nope-123: it was never submitted, or its records were removed. "
            f"Known apps on local_cwd: {three}.",
        ),
        (f"{three}/trainer",): (1, f"app {three} has no role 'trainer'; its roles are: sh"),
        (f"{three}/sh/7",): (
            1,
            f"role 'sh' of app {three} has no replica 7; its replicas are: 0, 1, 2",
        ),
        ("not-a-handle",): (2, "'not-a-handle' is not SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]"),
        (f"slurmm://default/{app_id}",): (
            2,
            "unknown scheduler 'slurmm'; available: local_cwd, local_dir",
        ),
        (three, "--regex", "("): (2, "--regex '(' is not a valid regular expression"),
    }
    for argv, (code, message) in cases.items():
        proc = cli("log", *argv)
        assert proc.returncode == code, (argv, proc.stderr)
        assert message in proc.stderr, (argv, proc.stderr)


def test_empty_session_means_default(module_cli: Cli, three: str) -> None:
    cli = module_cli
    app_id = three.rsplit("/", 1)[1]
    assert (
        cli("log", f"local_cwd:///{app_id}/sh/0", "--streams", "stderr").stdout == "sh/0 r0 err\n"
    )


def test_progress_bars_of_several_replicas_update_in_place_on_a_terminal(cli: Cli) -> None:
    """On a terminal each replica's ``\\r`` bar is one footer row redrawn in place (a VT100 screen shows the
    final frames once, and no intermediate frame as a line); piped, every frame is kept in the text."""
    import pty

    import pyte

    gate = cli.cwd / "gate"
    bar = (
        f"echo ready; while [ ! -e {gate} ]; do sleep 0.05; done;"
        ' for i in 1 2 3 4 5 6; do printf "\\rstep %d/6" $i; sleep 0.1; done; echo; echo done $JUPYTER_SCHED_REPLICA_ID'
    )
    handle = cli("run", "--cfg", "outlive_owner=true", "utils.sh", "--num_replicas", "3", bar).stdout.strip()
    primary, secondary = pty.openpty()
    env = {**cli.env, "TERM": "xterm", "COLUMNS": "80", "NO_COLOR": "1"}
    follow = subprocess.Popen(cli.argv(("log", "-f", handle)), cwd=cli.cwd, env=env, stdout=secondary,
                              stderr=subprocess.PIPE)  # fmt: skip
    os.close(secondary)
    raw = b""
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:  # EIO: the command exited
            break
        if not data:
            break
        raw += data
        if raw.count(b"ready") == 3 and not gate.exists():  # following: now the bars start
            gate.touch()
    os.close(primary)
    assert follow.wait(timeout=60) == 0, follow.stderr.read() if follow.stderr else ""
    text = raw.decode()
    screen = pyte.Screen(80, 24)
    pyte.Stream(screen).feed(text)
    shown = [line.rstrip() for line in screen.display if line.strip()]
    expected = [f"sh/{k} {text}" for k in range(3) for text in ("ready", "step 6/6", f"done {k}")]
    assert sorted(shown) == sorted(expected), text
    assert "\x1b[J" in text  # the footer was redrawn in place
    piped = cli("log", handle).stdout
    assert [line.count("\r") for line in piped.split("\n") if "step" in line] == [6, 6, 6]


MARKED = (
    'for i in 0 1 2; do echo "epoch $i"; '
    'echo "@@jupyter_sched:metrics {\\"v\\":1,\\"w\\":\\"sh\\",\\"seq\\":$i,\\"t\\":1700000000,\\"step\\":$i,'
    '\\"metrics\\":{\\"loss\\":0.$((9 - i))}}" >&2; done; '
    'echo "@@jupyter_sched:metrics {not json" >&2; echo "not @@jupyter_sched:metrics {} mid-line" >&2'
)


def test_marked_metric_lines_are_not_printed_but_stored_once_and_raw_prints_them(cli: Cli) -> None:
    """A program printing records as marked stderr lines: ``run`` (which follows the logs) and ``log`` leave
    every marked line out (a torn one too) and store the valid records with the app's metrics, where
    ``metrics`` reads them; each later follower stores nothing again (each writer's seq counts once);
    ``log --raw`` prints the lines as written."""
    proc = cli("run", "utils.sh", MARKED)
    assert proc.returncode == 0, proc.stderr
    assert "sh/0 epoch 2" in proc.stderr and "sh/0 @@jupyter_sched:metrics" not in proc.stderr
    handle = proc.stdout.strip()
    shown = cli("log", handle)
    assert shown.returncode == 0, shown.stderr
    assert sorted(shown.stdout.splitlines()) == [
        "sh/0 epoch 0", "sh/0 epoch 1", "sh/0 epoch 2", "sh/0 not @@jupyter_sched:metrics {} mid-line"
    ]  # fmt: skip
    stored = cli("metrics", handle, "--format", "csv").stdout.splitlines()
    assert [line.split(",")[::2] for line in stored[1:]] == [["0", "loss", "sh"], ["1", "loss", "sh"],
                                                             ["2", "loss", "sh"]]  # fmt: skip
    assert [float(line.split(",")[3]) for line in stored[1:]] == [0.9, 0.8, 0.7]
    assert cli("log", handle, "--streams", "stderr", "-f").stdout == "sh/0 not @@jupyter_sched:metrics {} mid-line\n"
    assert len(cli("metrics", handle, "--format", "jsonl").stdout.splitlines()) == 3, "stored once"
    raw = cli("log", handle, "--streams", "stderr", "--raw").stdout.splitlines()
    assert len(raw) == 5 and raw[0].startswith('sh/0 @@jupyter_sched:metrics {"v":1,"w":"sh","seq":0,')
