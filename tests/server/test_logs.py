"""The server's log followers against real local jobs: one bounded buffer per replica shared by viewers,
diffs that say what changed (a reset when more arrived than is kept), ``\\r`` frames as the open line,
and a bounded number of followers."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.server.logs import Cursor, Followers, ReplicaLog, TooManyFollowers, snapshot
from jupyter_sched.specs import AppDef, Role


def sh(script: str, name: str = "logs") -> AppDef:
    return AppDef(name, [Role("sh", image="", entrypoint="sh", args=["-c", script])])


def drain(log: ReplicaLog, cursor: Cursor, timeout: float = 60.0) -> List[Dict[str, Any]]:
    """Every diff until the log has ended."""
    events: List[Dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = log.diff(cursor)
        if event is not None:
            events.append(event)
            if event["ended"]:
                return events
        time.sleep(0.05)
    raise AssertionError(f"the log did not end within {timeout} s: {events}")


def test_a_followed_log_sends_new_lines_and_the_open_line(tmp_path: Path) -> None:
    go = tmp_path / "go"
    with get_runner("server-logs") as runner:
        handle = runner.run(sh(f"echo one; printf 'bar 50%%\\r'; while [ ! -e {go} ]; do sleep 0.05; done;"
                               " printf 'bar 100%%\\n'; echo two"), "local_cwd")  # fmt: skip
        log = ReplicaLog(runner, handle, "sh", 0, "combined", keep_lines=100, max_line_chars=4000)
        cursor = Cursor()
        deadline = time.monotonic() + 60
        seen: List[Dict[str, Any]] = []
        while not seen or seen[-1]["current"] != "bar 50%":  # the bar's frame is the open line
            assert time.monotonic() < deadline, seen
            event = log.diff(cursor)
            if event is not None:
                seen.append(event)
            time.sleep(0.05)
        assert seen[0]["reset"] and not any(e["reset"] for e in seen[1:]) and not seen[-1]["ended"]
        assert [line for e in seen for line in e["html"]] == ["one"]
        assert log.diff(cursor) is None  # nothing new: nothing sent
        go.touch()
        rest = drain(log, cursor)
        assert not any(e["reset"] for e in rest)
        assert [line for e in rest for line in e["html"]] == ["bar 100%", "two"]
        assert rest[-1]["ended"] and rest[-1]["current"] == "" and rest[-1]["total"] == 3
        snap = snapshot(runner, handle, "sh", 0, lines=2)
        assert snap["text"] == ["bar 100%", "two"] and snap["total"] == 3 and snap["dropped"] == 1


def test_a_viewer_behind_by_more_than_is_kept_gets_a_reset_with_the_tail() -> None:
    with get_runner("server-logs") as runner:
        handle = runner.run(sh("seq 1 500"), "local_cwd")
        runner.wait(handle, wait_interval=1)
        log = ReplicaLog(runner, handle, "sh", 0, "combined", keep_lines=50, max_line_chars=4000)
        events = drain(log, Cursor())
        lines = [line for e in events for line in e["html"]]
        assert events[-1]["total"] == 500 and events[-1]["dropped"] == 450
        assert lines[-50:] == [str(i) for i in range(451, 501)]
        late = Cursor(total=10, version=0)  # a viewer that saw 10 lines, long ago
        event = log.diff(late)
        assert event is not None and event["reset"] and len(event["html"]) == 50


def test_followers_are_shared_and_bounded() -> None:
    with get_runner("server-logs") as runner:
        a = runner.run(sh("echo a; sleep 600", "a"), "local_cwd")
        b = runner.run(sh("echo b; sleep 600", "b"), "local_cwd")
        try:
            followers = Followers(max_followers=1, keep_lines=10)
            first = followers.attach(runner, a, "sh", 0)
            assert followers.attach(runner, a, "sh", 0) is first and first.viewers == 2  # one reader for both
            with pytest.raises(TooManyFollowers, match="max_log_streams"):
                followers.attach(runner, b, "sh", 0)
            followers.detach(first)
            followers.detach(first)
            second = followers.attach(runner, b, "sh", 0)  # an unwatched one made room
            assert first.stopped and not second.stopped and len(followers) == 1
            followers.stop_all()
        finally:
            runner.cancel(a)
            runner.cancel(b)


def test_the_marked_metric_lines_are_not_shown_and_their_records_are_stored() -> None:
    """The browser's live log and snapshot leave out ``@@jupyter_sched:metrics`` lines; the follower stores
    the records where the metrics route and job.metrics() read them."""
    from jupyter_sched.frontend.jobs.metrics import read_all

    record = '{\\"v\\":1,\\"w\\":\\"sh\\",\\"seq\\":$i,\\"t\\":1700000000,\\"step\\":$i,\\"metrics\\":{\\"loss\\":$i}}'
    script = f'for i in 0 1; do echo "line $i"; echo "@@jupyter_sched:metrics {record}" >&2; done'
    with get_runner("server-logs") as runner:
        handle = runner.run(sh(script), "local_cwd")
        log = ReplicaLog(runner, handle, "sh", 0, "combined", keep_lines=100, max_line_chars=4000)
        events = drain(log, Cursor())
        assert [line for e in events for line in e["html"]] == ["line 0", "line 1"]
        snap = snapshot(runner, handle, "sh", 0, lines=10, stream="stderr")
        assert snap["text"] == [] and snap["total"] == 0
        (replica,) = read_all(runner.metrics_dir(handle))
        assert [(r.step, r.metrics) for r in replica.records] == [(0, {"loss": 0.0}), (1, {"loss": 1.0})]
