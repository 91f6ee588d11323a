"""Following a log its backend cannot tail (TorchX's Ray): each read returns the whole log; each line is
yielded once, a line still being written waits for its newline, and the read after the end is the last."""

from __future__ import annotations

from typing import List

from jupyter_sched.schedulers.torchx_bridge_poll import poll_lines


def test_each_line_once_partial_lines_held_and_a_last_read_after_the_end() -> None:
    logs = [[], ["a\n", "b"], ["a\n", "b\n", "c\n"], ["a\n", "b\n", "c\n", "d"], ["a\n", "b\n", "c\n", "d"]]
    reads: List[int] = []
    ended_after = 3  # the app has ended when it is asked the fourth time

    def read() -> List[str]:
        reads.append(1)
        return logs[len(reads) - 1]

    out = list(poll_lines(read, lambda: len(reads) >= ended_after, 0.0, follow=True, sleep=lambda s: None))
    assert out == ["a\n", "b\n", "c\n", "d"]  # the unterminated last line comes once the app has ended
    assert len(reads) == 4


def test_without_follow_one_read_with_everything() -> None:
    assert list(poll_lines(lambda: ["x\n", "y"], lambda: False, 1.0, follow=False)) == ["x\n", "y"]
