"""``jupyter-sched top``: a snapshot table when piped, ``--json`` with one object per replica, for apps
owned by another process (the owner's samples, with its peak) and apps whose owner has left."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import Cli  # type: ignore[import-not-found]

from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role
from tests.schedulers.usage_programs import MB, hog_code

FIELDS = {"role", "replica", "cpu_percent", "cpu_seconds", "rss_bytes", "peak_rss_bytes", "mem_limit_bytes"}


def _until(fn, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_top_of_an_app_owned_by_another_process(cli: Cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stop = str(tmp_path / "stop")
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", cli.env["JUPYTER_SCHED_LOG_DIR"])
    try:
        with get_runner("default") as runner:
            role = Role("w", "x", entrypoint=sys.executable, args=["-c", hog_code(200, stop)], num_replicas=2)
            app = AppDef("hog", [role])
            handle = runner.run(app, "local_cwd")

            def big():  # type: ignore[no-untyped-def]
                proc = cli("top", handle, "--json")
                assert proc.returncode == 0, proc.stderr
                rows = json.loads(proc.stdout)
                return rows if len(rows) == 2 and all(r["rss_bytes"] >= 180 * MB for r in rows) else None
            rows = _until(big)
            assert [set(r) for r in rows] == [FIELDS, FIELDS]
            assert [(r["role"], r["replica"]) for r in rows] == [("w", 0), ("w", 1)]

            text = cli("top", handle)
            assert text.returncode == 0, text.stderr
            lines = text.stdout.splitlines()
            assert lines[0] == f"{handle}: RUNNING"
            assert lines[1].split() == ["REPLICA", "CPU%", "CPU", "TIME", "MEM", "PEAK", "LIMIT", "GPU"]
            assert lines[2].startswith("w[0] ") and "MiB" in lines[2] and "\x1b" not in text.stdout
            open(stop, "w").close()
            runner.wait(handle, timeout=60)
        ended = cli("top", handle, "--json")
        rows = json.loads(ended.stdout)
        assert all(r["peak_rss_bytes"] >= 180 * MB and r["cpu_percent"] == 0 for r in rows)
        assert "ended" in cli("top", handle).stdout
    finally:
        open(stop, "w").close()


def test_top_of_an_app_that_outlived_its_owner_samples_it_itself(cli: Cli, tmp_path: Path) -> None:
    stop = str(tmp_path / "stop")
    handle = cli.run_app("--cfg", "outlive_owner=true", "utils.python", "-c", hog_code(200, stop))
    try:
        def busy():  # type: ignore[no-untyped-def]
            rows = json.loads(cli("top", handle, "--json").stdout)
            return rows if rows and rows[0]["rss_bytes"] >= 180 * MB and rows[0]["cpu_percent"] >= 50 else None
        rows = _until(busy)
        assert rows[0]["peak_rss_bytes"] >= rows[0]["rss_bytes"]
    finally:
        open(stop, "w").close()


def test_top_bad_input(cli: Cli) -> None:
    proc = cli("top", "local_cwd://default/nope-123")
    assert proc.returncode == 1 and "no app local_cwd://default/nope-123" in proc.stderr
    handle = cli("run", "--wait", "utils.echo").stdout.strip()
    bad = cli("top", handle, "--interval", "0")
    assert bad.returncode == 2 and "--interval 0" in bad.stderr


def test_top_refreshes_in_a_terminal_until_the_app_ends(cli: Cli, tmp_path: Path) -> None:
    """Run under a real pseudo-terminal: the table is redrawn (screen cleared) and top returns when the
    app has ended."""
    stop = str(tmp_path / "stop")
    owner = cli.popen("run", "--wait", "utils.python", "-c", hog_code(50, stop))
    handle = owner.stdout.readline().strip()
    out = tmp_path / "tty.out"
    command = f"{cli.argv(('top', handle, '--interval', '0.2'))[0]} top {handle} --interval 0.2"
    script = ["script", "-qfc", command, str(out)]
    proc = subprocess.Popen(script, cwd=cli.cwd, env=cli.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        _until(lambda: out.exists() and out.read_bytes().count(b"\x1b[H\x1b[2J") >= 3)
        open(stop, "w").close()
        assert proc.wait(timeout=60) == 0
    finally:
        open(stop, "w").close()
        if proc.poll() is None:
            proc.kill()
        owner.wait(timeout=60)
    final = out.read_bytes().decode().rsplit("\x1b[H\x1b[2J", 1)[1]
    assert "SUCCEEDED" in final and "ended" in final
