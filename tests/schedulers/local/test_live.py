"""Live text: a frame or prompt without a line end reaches a follower while the replica still runs."""

from __future__ import annotations

from typing import List

import pytest

from jupyter_sched.schedulers.local_scheduler import LocalScheduler, create_cwd_scheduler
from jupyter_sched.specs import AppState

from ..helpers import sh_app, wait_until


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


@pytest.mark.parametrize("reader", ["owner", "another scheduler"])
def test_an_unterminated_frame_arrives_before_the_process_ends(
    sched: LocalScheduler, log_dir: str, reader: str
) -> None:
    app_id = sched.submit(sh_app("printf '\\r10%%'; sleep 2"), {"log_dir": log_dir})
    follower = sched if reader == "owner" else create_cwd_scheduler("test", log_dir=log_dir)
    try:
        it = iter(follower.log_iter(app_id, "main", 0, should_tail=True))
        assert next(it) == "\r"
        assert next(it) == "10%"  # without live text this would come only once the replica ended...
        assert sched.describe(app_id).state == AppState.RUNNING  # ...so it came while it ran
        assert list(it) == []
    finally:
        if follower is not sched:
            follower.close()
    wait_until(lambda: sched.describe(app_id).state.is_terminal, what="the app to end")
    assert list(sched.log_iter(app_id, "main", 0)) == ["\r", "10%"]  # a snapshot: the same text, resolved


def test_live_items_concatenate_to_exactly_what_was_written(sched: LocalScheduler, log_dir: str) -> None:
    script = "printf 'a'; sleep 0.3; printf 'b\\n'; printf 'c\\r'; printf 'd'; sleep 0.3; printf 'é\\ne'"
    app_id = sched.submit(sh_app(script), {"log_dir": log_dir})
    items: List[str] = list(sched.log_iter(app_id, "main", 0, should_tail=True))
    assert "".join(items) == "ab\nc\rdé\ne"
    assert items[0] == "a" and "b\n" in items  # the quiet "a" came alone; the rest of its line later
    assert "c\r" in items and "d" in items
    assert list(sched.log_iter(app_id, "main", 0)) == ["ab\n", "c\r", "dé\n", "e"]  # snapshots never cut a line


def test_torchx_style_log_iterator_follows_until_the_app_ends(sched: LocalScheduler, log_dir: str) -> None:
    from jupyter_sched.schedulers.local_scheduler import LogIterator

    app_id = sched.submit(sh_app("echo a; sleep 0.3; echo b"), {"log_dir": log_dir})
    path = f"{log_dir}/test/{app_id}/main/0/stdout.log"
    assert list(LogIterator(app_id, None, path, sched, should_tail=True)) == ["a\n", "b\n"]
    assert sched.describe(app_id).state == AppState.SUCCEEDED
