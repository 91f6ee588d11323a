"""The usage part of the status pane: columns, the warning colour, the bounded SVG chart and table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jupyter_sched.notebook.usage_view import MAX_ROWS, WARN_COLOR, UsageView, chart_svg
from jupyter_sched.specs.usage import UsageSample

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


def test_history_is_bounded_and_the_chart_is_valid_svg() -> None:
    view = UsageView(max_points=10)
    for t in range(100):
        view.update(lambda t=t: [sample(0, (t % 7) * MIB + 1, t=float(t), cpu=float(t % 5))])
    assert len(view.history) == 10
    svg = view.html().split('<svg', 1)[1].split("</svg>")[0]
    root = ET.fromstring("<svg" + svg + "</svg>")
    lines = [el for el in root if el.tag.endswith("polyline")]
    assert len(lines) == 2 and all(len(el.get("points", "").split()) == 10 for el in lines)
    assert chart_svg([]) == "" and "last 9 s" in view.html()


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
    from jupyter_sched.specs.usage import GpuSample

    view = UsageView()
    view.update(lambda: [sample(0, MIB)])
    assert ">GPU<" not in view.html()
    gpu = GpuSample(1, "NVIDIA A100-SXM4-40GB", 87.0, 1024 * MIB, 40960 * MIB)
    view.update(lambda: [UsageSample("w", 0, 1.0, 1.0, MIB, MIB, None, gpus=[gpu]), sample(1, MIB)])
    assert ">GPU<" in view.html() and "1: 87 % 1 GiB" in view.html()
