"""The Metrics section's model and widgets over a metrics directory written here in the stored format: each
refresh reads only the appended bytes (a line being written waits for its newline), a long run keeps a
bounded series with its spike, and the widgets send a message only when a chart changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

from jupyter_sched.logs.metric_lines import MetricRecord, format_record
from jupyter_sched.notebook.panes.metrics_view import MetricsPane, MetricsView
from jupyter_sched.track.layout import RECORDS_SUFFIX, replica_stem


def append(directory: Path, records: List[MetricRecord], role: str = "train", k: int = 0, tail: str = "") -> Path:
    path = directory / (replica_stem(role, k) + RECORDS_SUFFIX)
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(format_record(r) + "\n" for r in records) + tail)
    return path


def steps(start: int, stop: int, spike: int = -1) -> List[MetricRecord]:
    return [MetricRecord("w", i + 1, 1.0 + i, i, metrics={"loss": 1e6 if i == spike else 1.0 / (i + 1)})
            for i in range(start, stop)]  # fmt: skip


def test_reads_from_a_cursor_and_keeps_a_bounded_series_with_its_spike(tmp_path: Path) -> None:
    define = MetricRecord("w", 0, 1.0, define={"loss": "min"})
    path = append(tmp_path, [define, *steps(0, 10)], tail='{"v":1,"w":"w","seq":11,"t":')  # a line being written
    view = MetricsView(str(tmp_path), "train")
    assert view.refresh() and view.picked == ("train", 0)
    series = view.data[("train", 0)]
    assert series.counts["loss"] == 10 and series.cursor == path.stat().st_size - len('{"v":1,"w":"w","seq":11,"t":')
    with open(path, "a", encoding="utf-8") as f:  # the line is finished, then 5,990 more come in chunks
        f.write('11.0,"step":10,"metrics":{"loss":0.09}}\n')
    for start in range(11, 6000, 500):
        append(tmp_path, steps(start, min(start + 500, 6000), spike=3333))
        assert view.refresh()
    assert series.cursor == path.stat().st_size and series.counts["loss"] == 6000 and series.skipped == 0
    assert len(series.series["loss"]) <= 2000 and (3333, 1e6) in series.series["loss"]
    assert series.series["loss"][-1] == (5999, 1.0 / 6000)
    assert not view.refresh(), "nothing appended: nothing changed"
    assert "  loss: last 0.0001667 @ 5999, min 0.0001667 @ 5999" in view.text()
    assert 'alt="loss: 6000 points over steps 0 to 5999' in view.html()


def test_the_widgets_send_only_what_changed(widgets: Any, recorder: Any, tmp_path: Path) -> None:
    append(tmp_path, steps(0, 5))
    pane = MetricsPane(MetricsView(str(tmp_path), "train"), lambda: False)
    assert pane.widget.layout.display == "none"  # nothing read yet: no section
    pane.view.refresh()
    pane.render()
    charts = pane.charts.comm.comm_id
    sent = len(recorder.updates(charts))
    assert pane.widget.layout.display != "none" and pane.picker.layout.display == "none"  # one replica: no picker
    for _ in range(3):
        assert not pane.view.refresh()
        pane.render()
    assert len(recorder.updates(charts)) == sent
    append(tmp_path, steps(5, 6))
    append(tmp_path, steps(0, 3), k=1)
    assert pane.view.refresh()
    pane.render()
    assert len(recorder.updates(charts)) == sent + 1 and pane.picker.layout.display != "none"
    assert [value for _label, value in pane.picker.options] == [("train", 0), ("train", 1)]


def test_rank_0_is_shown_once_it_logs_though_another_replica_logged_first_unless_one_was_picked(
    tmp_path: Path,
) -> None:
    """Replicas start in any order (a loaded machine starts replica 1 first): the section shows rank 0 as soon
    as it has logged; a replica a person picked stays picked."""
    append(tmp_path, steps(0, 3), k=1)
    view = MetricsView(str(tmp_path), "train")
    assert view.refresh() and view.picked == ("train", 1)  # the only one so far
    append(tmp_path, steps(0, 5), k=0)
    assert view.refresh() and view.picked == ("train", 0)
    assert view.data[("train", 0)].counts["loss"] == 5
    view.pick(("train", 1))
    append(tmp_path, steps(5, 6), k=0)
    view.refresh()
    assert view.picked == ("train", 1), "a person's pick is kept"
