"""A sweep's metrics in JupyterLab: runs that log a loss with ``jupyter_sched.track`` (one of them stopped
early by MedianStopping) show a ``metrics.loss`` column with the best cell marked, the "stopped early" mark
and a chart with a line per run under the table; the images load (the sanitizer keeps them) and the saved
record keeps the column and the chart. Screenshots: artifacts/screenshots/sweep-metrics-{light,dark}.png."""

from __future__ import annotations

from tests.e2e.conftest import JS_PANEL, Lab

CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched",
    "def train(rate):\n"
    "    import time\n"
    "    from jupyter_sched import track\n"
    "    track.define_metric('loss', goal='min')\n"
    "    for step in range(300 if rate == 0 else 12):\n"
    "        track.log({'loss': 2.0 if rate == 0 else 1 / (1 + rate * step), 'acc': min(1, rate * step / 10)})\n"
    "        if track.should_stop():\n"
    "            return {'stopped_at': step}\n"
    "        time.sleep(0.1)\n"
    "    return {'steps': 12}\n"
    "stop = jupyter_sched.MedianStopping('loss', grace_steps=3, min_runs=3)\n"
    "sw = jupyter_sched.sweep(train, {'rate': [0.5, 1.0, 2.0, 0.0]}, max_concurrent=4, stop=stop)\nsw",
]


def test_a_sweep_shows_its_metric_columns_the_best_cell_and_a_chart_per_run(lab: Lab) -> None:
    lab.open(lab.server.write_notebook("sweep_metrics.ipynb", CELLS))
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    view = lab.cell(1).locator(".jp-OutputArea .jsched-sweep").first
    view.wait_for(timeout=60_000)
    lab.page.wait_for_function(
        "(el) => el.innerText.includes('4 SUCCEEDED') && el.querySelector('table').innerText.includes('metrics.loss')"
        " && el.querySelectorAll('table .jsched-stopped').length === 1",  # the mark may come a redraw after the state
        arg=view.element_handle(), timeout=120_000,
    )  # fmt: skip
    best = view.locator("table .jsched-best")
    assert best.count() == 1 and best.inner_text().startswith("0.04348"), best.all_inner_texts()  # 1 / (1 + 2 * 11)
    assert view.locator("table .jsched-stopped").count() == 1, "the loser is marked stopped early"
    chart = view.locator("img.jsched-runs-chart")
    chart.wait_for(timeout=30_000)
    lab.page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=chart.element_handle())
    shots = lab.screenshot_themes(view, "sweep-metrics")
    assert all(shot.stat().st_size > 0 for shot in shots)
    saved = lab.page.wait_for_function(
        f"""() => {{
            const outs = {JS_PANEL}.content.widgets[1].model.outputs.toJSON();
            const html = outs.map(o => (o.data && o.data['text/html']) || '').join('');
            return html.includes('jsched-runs-chart') && !html.includes('as of') ? html : null;
        }}""",
        timeout=60_000,
    ).json_value()
    assert "metrics.loss" in saved and "jsched-best" in saved and "stopped early" in saved
    assert lab.page_problems() == []
