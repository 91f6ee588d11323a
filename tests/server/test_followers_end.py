"""A replica's log followed for the browser is let go when nobody watches it, even while the replica stays
silent: its reader thread ends and its log file is closed, after ``linger`` seconds, or at once when it is
evicted to make room; and a server whose job views were opened and closed 100 times is back to the threads,
files and idle CPU it had before.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable, List, Union

import psutil
import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.server.logs import Followers, ReplicaLog
from jupyter_sched.specs import AppDef, Role
from tests.server.conftest import JobsServer, quote, start_server, stop_server
from tests.server.test_api import launch

WORKERS = 4
"""The extension's thread pool for blocking calls (its default, set explicitly for the views test)."""


def silent(replicas: int = 1) -> AppDef:
    """Prints one line, then nothing for ten minutes."""
    return AppDef("silent", [Role("sh", image="", entrypoint="sh", args=["-c", "echo up; sleep 600"],
                                  num_replicas=replicas)])  # fmt: skip


def until(condition: Callable[[], bool], what: Union[str, Callable[[], str]], timeout: float = 30.0) -> None:
    """Waits for ``condition``; ``what`` (or what it returns, asked at the failure) says what was awaited."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what() if callable(what) else what}: not within {timeout} s"
        time.sleep(0.05)


def open_logs(pid: int, under: str) -> List[str]:
    """Files under ``under`` that process ``pid`` holds open."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(under):
            out.append(target)
    return out


def reader_threads() -> List[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("jsched-server-log")]


def seen_up(log: ReplicaLog) -> bool:
    with log.lock:
        return any(line.text == "up" for line in log.term.lines)


def test_a_follower_nobody_watches_lets_go_of_its_thread_and_file_while_the_replica_is_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(tmp_path / "state"))
    followers = Followers(max_followers=8, linger=1.0)
    with get_runner("followers-linger") as runner:
        handle = runner.run(silent(), "local_cwd")
        state = str(tmp_path / "state")
        until(lambda: "up" in "".join(runner.log_lines(handle, "sh", 0)), "the replica's first line written")
        owners = sorted(open_logs(os.getpid(), state))  # this process owns the app: it writes the logs
        log = followers.attach(runner, handle, "sh", 0)
        until(lambda: seen_up(log), "the replica's first line followed")
        assert log.alive and len(open_logs(os.getpid(), state)) > len(owners)
        followers.detach(log)
        # the replica prints nothing more: only closing the iterator can end the reader
        until(lambda: not log.alive, "the unwatched follower's thread ended")
        assert log.stopped and len(followers) == 0
        until(lambda: sorted(open_logs(os.getpid(), state)) == owners, "its log file closed")
        until(lambda: not reader_threads(), "the janitor ended too (no follower left)")
        assert runner.status(handle).state.name == "RUNNING"  # letting go of a log stops nothing
        runner.cancel(handle)


def test_an_evicted_follower_lets_go_at_once_and_a_watched_one_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(tmp_path / "state"))
    followers = Followers(max_followers=2, linger=3600.0)  # only eviction can stop one here
    with get_runner("followers-evict") as runner:
        handle = runner.run(silent(replicas=3), "local_cwd")
        state = str(tmp_path / "state")
        for k in range(3):
            until(lambda k=k: "up" in "".join(runner.log_lines(handle, "sh", k)), "each replica's first line written")
        owners = sorted(open_logs(os.getpid(), state))
        first = followers.attach(runner, handle, "sh", 0)
        watched = followers.attach(runner, handle, "sh", 1)
        until(lambda: seen_up(first) and seen_up(watched), "both replicas followed")
        followers.detach(first)
        third = followers.attach(runner, handle, "sh", 2)  # makes room: the unwatched one goes
        until(lambda: not first.alive, "the evicted follower's thread ended")
        assert watched.alive and third.alive and len(followers) == 2
        followers.detach(watched)
        followers.detach(third)
        followers.stop_all()  # the server stops: every reader and the janitor end
        until(lambda: not (watched.alive or third.alive or reader_threads()), "every reader ended")
        until(lambda: sorted(open_logs(os.getpid(), state)) == owners, "every log file closed")
        runner.cancel(handle)


def stream_once(server: JobsServer, handle: str, k: int) -> None:
    """Opens replica ``k``'s live log as a job view does, reads its first event, and closes it."""
    req = urllib.request.Request(server.url(f"jupyter-sched/api/jobs/{quote(handle)}/logs/stream?role=sh&k={k}"),
                                 headers={"Authorization": f"token {server.token}"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=60) as resp:
        for raw in resp:
            if raw.startswith(b"data: "):
                break


def usage(pid: int) -> tuple:
    proc = psutil.Process(pid)
    return proc.num_threads(), proc.num_fds()


def test_a_hundred_job_views_opened_and_closed_leave_the_server_as_it_was(tmp_path: Path) -> None:
    """8 silent replicas, each view opened and closed in turn, 100 times: afterwards the server holds the
    files it held before and its threads but for its thread pool's growth, and idles (at most 1% of a core)."""
    from tests.server.conftest import Cli

    server = start_server(tmp_path / "server",
                          argv=["--JobsServer.log_stream_linger=1", f"--JobsServer.workers={WORKERS}"],
                          log_name="jupyter-server-views.log")  # fmt: skip
    env = dict(os.environ, JUPYTER_SCHED_LOG_DIR=str(server.log_dir), NO_COLOR="1")
    cli = Cli(env, tmp_path, [])
    try:
        handle = launch(cli, "silent", "echo up; sleep 600", "--num_replicas", "8")
        pid = server.proc.pid
        stream_once(server, handle, 0)  # the thread pool's workers and the first imports, once
        time.sleep(2.0)  # past the linger: the warm-up's follower is let go
        threads, fds = usage(pid)
        for i in range(100):
            stream_once(server, handle, i % 8)
        # every follower's thread and log file goes; the extension's thread pool may have grown to its size
        # during the views (a pool never shrinks), which leaks nothing: a follower leak is 8 threads and files
        pool_growth = WORKERS - 1
        until(lambda: usage(pid)[1] <= fds and usage(pid)[0] <= threads + pool_growth,
              lambda: f"back to {threads} threads (+ {pool_growth} pool workers at most) and {fds} files"
                      f" (now {usage(pid)}, holding {sorted(open_logs(pid, str(server.log_dir)))})")  # fmt: skip
        proc = psutil.Process(pid)
        before = proc.cpu_times()
        time.sleep(5.0)
        after = proc.cpu_times()
        busy = (after.user + after.system) - (before.user + before.system)
        print(f"server after 100 views: {usage(pid)} (threads, files) vs {threads, fds};"
              f" CPU {busy / 5.0:.2%} of a core")  # fmt: skip
        assert busy / 5.0 <= 0.01, f"the idle server used {busy / 5.0:.1%} of a core"
        server.api("POST", f"jobs/{quote(handle)}/cancel")
    finally:
        stop_server(server)
