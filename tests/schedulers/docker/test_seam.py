"""``docker.seam.Seam``: joining log-driver history records with live text, without losing or repeating
text (pure; the real-engine behaviour is in ``test_logs``)."""

from __future__ import annotations

from jupyter_sched.schedulers.docker.logs.seam import Seam


def test_a_follow_attached_before_the_output_joins_exactly() -> None:
    seam = Seam()
    out = [seam.on_history(["old 1\n", "old 2\n"]), seam.history_done()]
    out.append(seam.on_live("new 1\nbar 10%\r"))  # live leads: nothing until the history shows the seam
    out.append(seam.on_history(["new 1\n"]))  # the seam: live text after it comes out at once
    assert seam.synced
    out.append(seam.on_live("bar 20%\r"))
    out.append(seam.on_history(["bar 10%\rbar 20%\rbar 30%\n"]))  # history ahead of live: its rest comes out
    out.append(seam.on_live("bar 30%\nend\n"))
    out.append(seam.on_history(["end\n"]) + seam.finish())
    assert "".join(out) == "old 1\nold 2\nnew 1\nbar 10%\rbar 20%\rbar 30%\nend\n"


def test_repeated_identical_lines_do_not_repeat_text() -> None:
    seam = Seam()
    out = [seam.on_history(["x\n", "x\n"]), seam.history_done()]
    out.append(seam.on_live("x\nx\ntail"))  # which "x" the live stream starts at is ambiguous
    out.append(seam.on_history(["x\n"]))
    out.append(seam.on_history(["tail"]) + seam.finish())
    assert "".join(out) == "x\nx\nx\ntail"


def test_frames_of_an_open_seam_line_are_shown_and_not_repeated() -> None:
    seam = Seam()
    seam.history_done()
    assert seam.on_live("ss\r10%") == ""  # "ss\r" ends a frame that began before the attach
    assert seam.showable and seam.show() == "10%"
    assert seam.on_live("\r20%") == "" and seam.show() == "\r20%"
    assert seam.on_live("\n") == ""
    # the engine stores the whole line, with what was written before the attach: that start ("epoch 3
    # loss\r", overwritten by the frames shown) is skipped, the rest of the line comes
    assert seam.on_history(["epoch 3 loss\r10%\r20%\n"]) == "\n"
    assert seam.synced and seam.settled


def test_a_live_stream_that_disagrees_is_dropped_and_the_history_goes_on() -> None:
    seam = Seam(matching=True)
    assert seam.on_live("a\nb\n") == ""
    assert seam.on_history(["a\n"]) == ""  # ends like the seam line: the record after it decides
    assert seam.on_history(["c\n"]) == "a\nc\n"  # not what the live stream said: history is authoritative
    assert seam.on_live("zzz") == "" and seam.on_history(["d\n"]) == "d\n"


def test_a_record_that_only_ends_like_the_seam_line_is_not_the_seam() -> None:
    """``seq 50000`` attached in the middle of ``46225``: the live stream starts ``6225\n46226\n``, and
    ``16225`` ends like its first line too. The lines after each candidate tell them apart; the follow
    is exactly the history, nothing repeated or skipped."""
    seam = Seam(matching=True)
    history = [f"{i}\n" for i in range(1, 46300)]
    out = [seam.on_live("6225\n46226\n46227\n")]
    for i in range(0, len(history), 1000):
        out.append(seam.on_history(history[i : i + 1000]))
    out.append(seam.finish())
    assert "".join(out) == "".join(history)


def test_identical_lines_read_before_the_history_was_are_in_it() -> None:
    seam = Seam()
    seam.on_live("x\nx\ntail")  # came while the history was read: the history has these lines
    out = [seam.on_history(["x\n", "x\n"]), seam.history_done()]
    out.append(seam.on_history(["tail"]) + seam.finish())
    assert "".join(out) == "x\nx\ntail"


def _seq(a: int, b: int) -> list:
    return [f"{i}\n" for i in range(a, b)]


def test_a_candidate_last_in_its_batch_waits_for_the_history_after_it_even_once_live_has_closed() -> None:
    """The CI failure of ``test_follow_is_complete_for_a_big_log``: attached in the middle of ``46225``,
    the live stream carried ``225\\n46226\\n...`` to the end and closed while the history had only reached
    ``40225``, a record that ends like the seam line and stood last in its batch. Taking it skipped
    6,000 lines; the history after it decides instead."""
    seam = Seam()
    out = [seam.on_history(_seq(1, 30000)), seam.history_done()]
    out.append(seam.on_live("225\n" + "".join(_seq(46226, 50001))))
    out.append(seam.live_ended())
    for a, b in ((30000, 40226), (40226, 46226), (46226, 50001)):  # a batch ends exactly at "40225"
        out.append(seam.on_history(_seq(a, b)))
    out.append(seam.finish())
    assert "".join(out) == "".join(_seq(1, 50001))


def test_a_candidate_with_history_after_it_waits_for_the_live_line_after_the_seam_line() -> None:
    seam = Seam()
    seam.history_done()
    seam.on_live("225\n")
    assert seam.on_history(["40225\n", "40226\n"]) == ""  # the history is ahead: which "225" is not known
    assert seam.on_history(_seq(40227, 46226)) == ""  # held behind the candidate
    assert seam.on_live("46226\n") == "".join(_seq(40225, 46225))  # "40226" is not "46226": not the seam
    assert not seam.synced  # "46225" is, once the history shows what follows it
    assert seam.on_history(["46226\n"]) == "46225\n46226\n"
    assert seam.synced and seam.on_live("46227\n") == "46227\n"
    assert seam.on_history(["46227\n"]) + seam.finish() == ""


def test_a_candidate_read_last_with_only_an_unended_live_line_after_it_is_the_seam() -> None:
    seam = Seam()
    seam.history_done()
    assert seam.on_live("a\n") == ""
    assert seam.on_history(["a\n"]) == "a\n"  # both sides are at the same point: no need to wait
    assert seam.synced
