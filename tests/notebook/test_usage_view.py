"""The usage part of the status pane: columns, the warning colour, the bounded chart (axes, the limit line,
kept as its last frame once the app ended) and table, and the note on the components' default limit."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET

from jupyter_sched.notebook.panes.usage_chart import chart_svg
from jupyter_sched.notebook.panes.usage_view import MAX_ROWS, WARN_COLOR, UsageView
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus
from jupyter_sched.specs.status.usage import UsageSample, UsageTotals

MIB = 1024 * 1024


def sample(k: int, rss: int, limit=None, t: float = 0.0, cpu: float = 50.0, running: bool = True) -> UsageSample:  # type: ignore[no-untyped-def]
    return UsageSample("w", k, cpu, 1.0, rss, rss, limit, timestamp=t, running=running)


def test_columns_and_warning_above_90_percent_of_the_limit() -> None:
    view = UsageView()
    view.update(lambda: [sample(0, 50 * MIB, 100 * MIB), sample(1, 95 * MIB, 100 * MIB), sample(2, 10 * MIB)])
    html = view.html()
    for header in ("CPU %", "memory", "peak", "limit"):
        assert f">{header}<" in html
    rows = html.split("<tr")[2:]
    assert WARN_COLOR not in rows[0] and WARN_COLOR in rows[1] and WARN_COLOR not in rows[2]
    assert "95 MiB" in rows[1] and "100 MiB" in rows[1]
    assert ">w/1<" in rows[1]  # one spelling of a replica in the whole pane


def chart_of(html: str) -> ET.Element:
    """The chart's SVG document, decoded from its <img> (an image survives JupyterLab's sanitizer)."""
    src = re.search(r'<img class="jsched-usage-chart" src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert src, html
    return ET.fromstring(base64.b64decode(src.group(1)).decode())


def texts(root: ET.Element) -> list:
    return [el.text for el in root.iter() if el.tag.endswith("text")]


def test_history_is_bounded_and_the_chart_has_axes() -> None:
    view = UsageView(max_points=10)
    for t in range(100):
        view.update(lambda t=t: [sample(0, (t % 7) * MIB + 1, t=float(t), cpu=float(t % 5))])
    assert len(view.history) == 10
    root = chart_of(view.html())
    lines = [el for el in root.iter() if el.tag.endswith("polyline")]
    assert len(lines) == 2 and all(len(el.get("points", "").split()) == 10 for el in lines)
    labels = texts(root)
    assert {"CPU %", "memory", "100", "0", "\u22129 s", "now"} <= set(labels)  # each panel's scale and span
    assert "8 MiB" in labels  # no limit: memory's scale is a round number above the peak
    assert not [el for el in root.iter() if el.tag.endswith("line") and el.get("stroke-dasharray")]
    assert chart_svg([]) == ""


def test_the_memory_panel_draws_the_limit_and_the_record_keeps_the_last_frame() -> None:
    view = UsageView()
    view.update(lambda: [sample(0, 20 * MIB, 128 * MIB, t=0.0)])
    view.update(lambda: [sample(0, 20 * MIB, 128 * MIB, t=0.5)])
    assert "jsched-usage-chart" not in view.html()  # half a second of readings: no chart yet
    for t in range(1, 5):
        view.update(lambda t=t: [sample(0, (20 + t) * MIB, 128 * MIB, t=float(t))])
    root = chart_of(view.html())
    dashed = [el for el in root.iter() if el.tag.endswith("line") and el.get("stroke-dasharray")]
    assert len(dashed) == 1 and "limit" in texts(root) and "128 MiB" in texts(root)
    # the app ended: the table gives way to each replica's kept totals, the chart stays as its last frame
    view.update(lambda: [UsageSample("w", 0, 0.0, 2.0, 24 * MIB, 24 * MIB, 128 * MIB, running=False)])
    totals = UsageTotals(peak_rss_bytes=24 * MIB, cpu_seconds=2.0, wall_seconds=5.0, mem_limit_bytes=128 * MIB)
    ended = AppStatus(AppState.SUCCEEDED, roles=[
        RoleStatus("w", [ReplicaStatus(0, AppState.SUCCEEDED, "w", "h", usage=totals)])])  # fmt: skip
    html = view.html(ended, "local_cwd")
    assert ">peak memory<" in html and ">w/0<" in html and ">CPU %<" not in html
    assert "end" in texts(chart_of(html)) and "now" not in texts(chart_of(html))


def test_the_components_default_limit_is_pointed_out_where_it_is_enforced() -> None:
    view = UsageView()
    view.update(lambda: [sample(0, MIB, 1024 * MIB)])
    assert "default --memMB 1024, enforced on local_docker" in view.html(None, "local_docker")
    assert "enforced on slurm" in view.html(None, "slurm")
    assert "default --memMB" not in view.html(None, "local_cwd")
    other = UsageView()
    other.update(lambda: [sample(0, MIB, 512 * MIB)])
    assert "default --memMB" not in other.html(None, "slurm")


def test_table_is_bounded_at_any_replica_count() -> None:
    view = UsageView()
    view.update(lambda: [sample(k, MIB) for k in range(1000)])
    html = view.html()
    assert html.count("<tr") == MAX_ROWS + 2  # header, MAX_ROWS replicas, one summary row
    assert f"+{1000 - MAX_ROWS} more" in html
    small = UsageView()
    small.update(lambda: [sample(k, MIB) for k in range(MAX_ROWS)])
    assert len(html) < 2 * len(small.html())


def test_a_backend_without_usage_shows_nothing_and_an_error_is_shown_not_raised() -> None:
    view = UsageView()

    def unsupported():  # type: ignore[no-untyped-def]
        raise ValueError("the slurm scheduler does not report resource usage")
    view.update(unsupported)
    assert view.html() == ""

    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("engine went away")
    view.update(broken)
    assert "usage: engine went away" in view.html()


def test_names_are_escaped() -> None:
    view = UsageView()
    view.update(lambda: [UsageSample("<b>x</b>", 0, 1.0, 1.0, 1, 1, None)])
    assert "<b>x</b>" not in view.html() and "&lt;b&gt;x&lt;/b&gt;" in view.html()


def test_a_gpu_column_only_when_a_replica_uses_a_gpu() -> None:
    from jupyter_sched.specs.status.usage import GpuSample

    view = UsageView()
    view.update(lambda: [sample(0, MIB)])
    assert ">GPU<" not in view.html()
    gpu = GpuSample(1, "NVIDIA A100-SXM4-40GB", 87.0, 1024 * MIB, 40960 * MIB)
    view.update(lambda: [UsageSample("w", 0, 1.0, 1.0, MIB, MIB, None, gpus=[gpu]), sample(1, MIB)])
    assert ">GPU<" in view.html() and "1: 87 % 1 GiB" in view.html()
