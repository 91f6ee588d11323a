"""Marked metric lines taken out of a log and their records stored (``frontend.logview.metric_lines``), on
real files: each record once, whether the replica wrote it first or several followers in several processes
store it at the same time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Optional, Tuple

from jupyter_sched.frontend.jobs.metrics import read_all
from jupyter_sched.frontend.logview.metric_lines import MetricLineFilter, RecordStore, timed_text
from jupyter_sched.logs.metric_lines import MARK

REPO = Path(__file__).resolve().parents[2]


def record(seq: int, writer: str = "w1", step: Optional[int] = None) -> str:
    return json.dumps({"v": 1, "w": writer, "seq": seq, "t": 1.5, "step": seq if step is None else step,
                       "metrics": {"loss": seq / 10}}, separators=(",", ":"))  # fmt: skip


def stored(directory: Path) -> List[Tuple[str, int]]:
    return [(r.writer, r.seq) for rep in read_all(str(directory)) for r in rep.records]


def test_the_filter_yields_every_other_item_and_stores_the_records(tmp_path: Path) -> None:
    store = RecordStore(lambda: str(tmp_path / "metrics"), "train", 0)
    items = [(1.0, "epoch 0\n"), (1.1, f"{MARK}{record(0)}\n"), (1.2, f"50%\r{MARK}{record(1)}\n"),
             (1.3, f"{MARK}{{torn\n"), (1.4, f"see {MARK}{record(2)}\n"), (1.5, "done\n")]  # fmt: skip
    lines = MetricLineFilter(items, store, timed_text)
    assert [text for _, text in lines] == ["epoch 0\n", f"see {MARK}{record(2)}\n", "done\n"]
    assert (lines.hidden, lines.invalid, store.stored) == (3, 1, 2)
    assert stored(tmp_path / "metrics") == [("w1", 0), ("w1", 1)]
    assert oct(os.stat(tmp_path / "metrics" / "train.0.jsonl").st_mode & 0o777) == "0o600"


def test_records_the_replica_wrote_or_another_follower_stored_are_not_stored_again(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    # the replica wrote seq 0..3 of writer w1 itself (a program that writes the file and prints the lines)
    (directory / "r.0.jsonl").write_text("".join(record(i) + "\n" for i in range(4)))
    lines = [f"{MARK}{record(i)}\n" for i in range(2, 7)] + [f"{MARK}{record(0, writer='w2')}\n"]
    first = RecordStore(lambda: str(directory), "r", 0)
    assert list(MetricLineFilter(lines, first)) == [] and first.stored == 4
    again = RecordStore(lambda: str(directory), "r", 0)  # another follower of the same log, later
    assert list(MetricLineFilter(lines, again)) == [] and again.stored == 0
    assert stored(directory) == [("w1", i) for i in range(7)] + [("w2", 0)]


def test_followers_in_several_processes_store_each_record_once(tmp_path: Path) -> None:
    """Four processes store the same 300 records, each as a follower reading the log would (one at a time);
    the file lock makes the check and the append one step, so the file has each record once."""
    directory = tmp_path / "metrics"
    code = textwrap.dedent(
        f"""
        import sys
        from jupyter_sched.frontend.logview.metric_lines import MetricLineFilter, RecordStore
        lines = [line for line in open({str(tmp_path / 'log')!r})]
        store = RecordStore(lambda: {str(directory)!r}, "r", 0)
        assert list(MetricLineFilter(lines, store)) == []
        print(store.stored)
        """
    )
    (tmp_path / "log").write_text("".join(f"{MARK}{record(i)}\n" for i in range(300)))
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]  # fmt: skip
    counts = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(counts) == 300, counts
    assert stored(directory) == [("w1", i) for i in range(300)]


def test_without_a_writable_metrics_directory_the_lines_are_hidden_all_the_same(tmp_path: Path) -> None:
    store = RecordStore(lambda: None, "r", 0)
    assert list(MetricLineFilter([f"{MARK}{record(0)}\n", "x\n"], store)) == ["x\n"]
    assert store.stored == 0 and store.failed == "the app has no metrics directory"
    unwritable = tmp_path / "file"
    unwritable.write_text("not a directory")
    store = RecordStore(lambda: str(unwritable / "metrics"), "r", 0)
    assert list(MetricLineFilter([f"{MARK}{record(0)}\n", "x\n"], store)) == ["x\n"], "hidden all the same"
    assert store.failed is not None and "cannot store metric records" in store.failed


def test_closing_the_filter_closes_the_log_it_reads() -> None:
    class Log:
        closed = False

        def __iter__(self):  # type: ignore[no-untyped-def]
            yield "a\n"

        def close(self) -> None:
            self.closed = True

    log = Log()
    MetricLineFilter(log, None).close()
    assert log.closed, "a follower stops a silent log by closing what it iterates"


def test_a_failed_replicas_stderr_tail_has_no_marked_lines() -> None:
    """Why a replica failed is read from its stderr's last lines: the records it printed there are not it."""
    from jupyter_sched.frontend.jobs.stderr_tails import read_tail
    from jupyter_sched.runner import get_runner
    from jupyter_sched.specs import AppDef, Role

    script = f"echo 'boom' >&2; for i in 0 1 2 3 4; do echo '{MARK}{record(0)}' >&2; done; exit 3"
    with get_runner("metric-lines") as runner:
        handle = runner.run(AppDef("fails", [Role("sh", "", entrypoint="sh", args=["-c", script])]), "local_cwd")
        runner.wait(handle, wait_interval=0.2)
        assert read_tail(runner, handle, "sh", 0, last_n=3) == ["boom"]
