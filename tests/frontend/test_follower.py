"""The one log follower (``frontend.logview.follower``) on real ``local_cwd`` replicas: every item in order
and then the end, a buffer that never holds more than its bound and loses nothing, a failure read as the
end, and a stop that ends the reader thread and closes the log file even while the replica is silent or the
reader waits for room. The notebook's pane, ``log -f`` and the server all stand on these.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

from jupyter_sched.frontend.logview.follower import LogFollower
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.specs import AppDef, Role

LINES = 1000


def sh(script: str, name: str = "follow") -> AppDef:
    return AppDef(name, [Role("sh", image="", entrypoint="sh", args=["-c", script])])


def until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.02)


def open_files(under: str) -> List[str]:
    """Files under ``under`` that this process holds open."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(under):
            out.append(target)
    return sorted(out)


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runner]:
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(tmp_path / "state"))
    with get_runner("follower") as r:
        yield r


def finished(runner: Runner, script: str) -> str:
    """A replica that ran ``script`` to its end: its whole log is written."""
    handle = runner.run(sh(script), "local_cwd")
    status = runner.wait(handle, wait_interval=0.1)
    assert status is not None and status.state.name == "SUCCEEDED", status
    return handle


def follower(runner: Runner, handle: str, **kw: object) -> "LogFollower[str]":
    return LogFollower(lambda: runner.log_lines(handle, "sh", 0, should_tail=True), "test-follower",
                       **kw).start()  # type: ignore[arg-type]  # fmt: skip


def read_all(f: "LogFollower[str]") -> List[str]:
    items: List[str] = []
    while True:
        assert f.wait(60), "no item and no end within 60 s"
        batch = f.read()
        items.extend(batch.items)
        if batch.ended:
            assert batch.error is None
            return items


def test_every_item_in_order_then_the_end_and_the_thread_ends(runner: Runner) -> None:
    handle = runner.run(sh(f"i=0; while [ $i -lt {LINES} ]; do echo line $i; i=$((i+1)); done"), "local_cwd")
    f = follower(runner, handle)  # follows while the replica writes
    assert read_all(f) == [f"line {i}\n" for i in range(LINES)]
    assert f.read().ended  # the end stays read
    until(lambda: not f.alive, "the reader thread to end")


def test_a_full_buffer_holds_its_bound_and_loses_nothing(runner: Runner, tmp_path: Path) -> None:
    """Nobody reads: the reader stops at ``max_items`` untaken items (not one more), holding the log open;
    taking them lets it read on, and every line comes out once, in order."""
    handle = finished(runner, f"i=0; while [ $i -lt {LINES} ]; do echo line $i; i=$((i+1)); done")
    f = follower(runner, handle, max_items=10)
    until(lambda: f.unread == 10, "the buffer to fill")
    for _ in range(50):  # the reader waits for room: the bound holds however often it is looked at
        assert f.unread == 10 and f.alive and not f.ended
        time.sleep(0.002)
    first = f.read(max_items=3)
    assert first.items == ["line 0\n", "line 1\n", "line 2\n"] and not first.ended
    assert first.items + read_all(f) == [f"line {i}\n" for i in range(LINES)]


def test_characters_are_bounded_too(runner: Runner) -> None:
    """Long lines: ``max_chars`` stops the reader before ``max_items`` would."""
    long = "x" * 1000
    handle = finished(runner, f"i=0; while [ $i -lt 50 ]; do echo {long}; i=$((i+1)); done")
    f = follower(runner, handle, max_items=1000, max_chars=5000)
    until(lambda: f.held_chars >= 5000, "the buffer to fill")
    for _ in range(50):
        assert f.unread == 5 and f.held_chars == 5 * 1001 and not f.ended
        time.sleep(0.002)
    assert read_all(f) == [long + "\n"] * 50


def test_a_log_that_cannot_be_read_ends_with_its_error(runner: Runner) -> None:
    handle = finished(runner, "echo hi")
    f = LogFollower(lambda: runner.log_lines(handle, "no-such-role", 0, should_tail=True), "test-follower").start()
    assert f.wait(60)
    batch = f.read()
    assert batch.ended and batch.items == [] and batch.error is not None and "no-such-role" in str(batch.error)
    until(lambda: not f.alive, "the reader thread to end")


def test_stop_ends_the_thread_and_closes_the_file_while_the_replica_is_silent(runner: Runner, tmp_path: Path) -> None:
    handle = runner.run(sh("echo up; sleep 600"), "local_cwd")
    state = str(tmp_path / "state")
    until(lambda: "up" in "".join(runner.log_lines(handle, "sh", 0)), "the replica's first line written")
    before = open_files(state)  # this process owns the app: it writes the logs
    f = follower(runner, handle)
    assert f.wait(60) and f.read().items == ["up\n"]
    assert len(open_files(state)) > len(before) and not f.wait(0.05)  # silent now: nothing to wait for
    f.stop()  # only closing the log iterator can wake the reader: the replica prints nothing for 10 minutes
    until(lambda: not f.alive, "the stopped follower's thread to end", timeout=30)
    until(lambda: open_files(state) == before, "its log file to close", timeout=30)
    assert f.read().ended and runner.status(handle).state.name == "RUNNING"  # stopping a follow stops no job
    runner.cancel(handle)


def test_stop_ends_a_reader_that_waits_for_room(runner: Runner, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    handle = finished(runner, f"i=0; while [ $i -lt {LINES} ]; do echo line $i; i=$((i+1)); done")
    before = open_files(state)
    f = follower(runner, handle, max_items=5)
    until(lambda: f.unread == 5, "the buffer to fill")
    f.stop()
    until(lambda: not f.alive, "the stopped follower's thread to end", timeout=30)
    until(lambda: open_files(state) == before, "its log file to close", timeout=30)
    batch = f.read()
    assert batch.items == [f"line {i}\n" for i in range(5)] and batch.ended  # what was read stays readable


def test_on_change_wakes_a_consumer_of_several_followers_and_a_sink_takes_every_item(runner: Runner) -> None:
    """``log -f``'s way (one event for every follower, set when a buffer stops being empty and at the end)
    and the server's (a sink fed on the reader thread, the end read)."""
    handle = runner.run(sh("for i in 1 2 3; do echo a$i; sleep 0.1; done"), "local_cwd")
    changed = threading.Event()
    sunk: List[str] = []
    watched = follower(runner, handle, on_change=changed.set)
    sinking = follower(runner, handle, sink=sunk.append, on_change=changed.set)
    got: List[str] = []
    while not (watched.ended and sinking.ended and not watched.unread):
        assert changed.wait(60), "no change within 60 s"
        changed.clear()
        got.extend(watched.read().items)
    got.extend(watched.read().items)
    assert got == sunk == ["a1\n", "a2\n", "a3\n"]
    end = sinking.read()
    assert end.ended and end.items == [] and end.error is None


def test_stop_ends_a_follow_of_timed_items_too(runner: Runner, tmp_path: Path) -> None:
    """The pane and ``log -f`` follow ``log_items(timed=True)``: the backend's timed iterator closes from
    another thread as its plain one does, so their followers let go of a silent replica's log at once too."""
    handle = runner.run(sh("echo up; sleep 600"), "local_cwd")
    state = str(tmp_path / "state")
    until(lambda: "up" in "".join(runner.log_lines(handle, "sh", 0)), "the replica's first line written")
    before = open_files(state)
    f = LogFollower(lambda: runner.log_items(handle, "sh", 0, should_tail=True, timed=True), "test-timed").start()
    assert f.wait(60)
    assert [item for _, item in f.read().items] == ["up\n"]
    f.stop()
    until(lambda: not f.alive, "the stopped follower's thread to end", timeout=30)
    until(lambda: open_files(state) == before, "its log files to close", timeout=30)
    runner.cancel(handle)
