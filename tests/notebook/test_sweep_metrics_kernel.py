"""A sweep's metrics in its live table, in a real ipykernel with real function jobs on local_cwd: runs that
``track.log`` a loss get a ``metrics.loss`` column while they run (the last value; the best cell marked by
the goal ``define_metric`` gave), a chart of one metric with a line per run under the table, a "chart of"
menu that switches the chart to another key, and a final record (what a saved notebook keeps) with the
column, the mark and the chart.

The runs log three steps, then wait for a gate file, so the live table is looked at while every run is
still running: nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import ast
import html
import re
from typing import Any, List, Tuple

from nbhelpers import wait_for
from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture
from test_sweep_kernel import _choose, _models

LOGGING = (
    "%load_ext jupyter_sched\n"
    "import jupyter_sched\n"
    "def train(rate, gate):\n"
    "    import os, time\n"
    "    from jupyter_sched import track\n"
    "    track.define_metric('loss', goal='min')\n"
    "    for step in range(3):\n"
    "        track.log({'loss': 1 / (1 + rate * step), 'acc': rate * step / 10})\n"
    "    track.flush()\n"
    "    while not os.path.exists(gate):\n"
    "        time.sleep(0.05)\n"
    "    return {'rate': rate}\n"
)


def _rows(table_html: str) -> List[List[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table_html)
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]
    return [c for c in cells if c]


def _view(kc: Any, what: str) -> str:
    return run_ok(kc, f"print(sw.view().{what}.value)")


def test_a_running_sweep_shows_a_metric_column_its_best_cell_and_a_chart_per_run(
    kernel: Tuple[Any, Any],  # noqa: F811
    tmp_path: Any,
) -> None:
    _, kc = kernel
    gate = tmp_path / "gate"
    reply, msgs = execute(kc, LOGGING + (
        f"sw = jupyter_sched.sweep(train, {{'rate': [0.5, 2.0, 1.0], 'gate': [{str(gate)!r}]}}, max_concurrent=3)\n"
        "sw"
    ))  # fmt: skip
    assert reply["content"]["status"] == "ok", [m["content"] for m in msgs if m["msg_type"] == "error"]
    models = _models(msgs)
    assert ("DropdownModel", "chart of") in models, "the chart's menu is a widget of the view"

    # live: every run has logged its three steps and waits for the gate
    def logged_three() -> bool:
        table = _view(kc, "table")
        return "metrics.loss" in table and all(r[-2:] != ["", ""] for r in _rows(table)) and "0.2" in table

    wait_for(logged_three, 120, "each running run's last loss in the table")
    assert run_ok(kc, "print(sw.finished)").strip() == "False", "the column is live, before any run returned"
    table = _view(kc, "table")
    header = re.findall(r"<th[^>]*>(.*?)</th>", table)
    assert header[-2:] == ["metrics.loss", "metrics.acc"], header  # the key with a goal first
    rows = _rows(table)
    loss = header.index("metrics.loss")
    assert [(r[0], r[loss]) for r in rows] == [("0", "0.5"), ("1", "0.2 \u2605"), ("2", "0.3333")], rows
    assert table.count("jsched-best") == 1, "only loss has a goal: acc has no best cell"
    swatches = re.findall(r'class="jsched-swatch"[^>]*background:(#[0-9a-f]{6})', table)
    assert swatches == ["#208ffb", "#ff7f0e", "#2ca02c"], "each run's number has its line's colour"
    chart = _view(kc, "chart")
    assert 'class="jsched-runs-chart"' in chart and 'data-key="loss"' in chart
    assert "loss by run: 3 of 3 runs logged it, min 0.2 (run 1)" in chart

    # the metric columns sort like any other (the menu lists them)
    names = run_ok(kc, "print(list(sw.view().sort.options))")
    assert "'metrics.loss'" in names, names
    _choose(kc, models[("DropdownModel", "sort by")], index=ast.literal_eval(names).index("metrics.loss"))
    wait_for(lambda: [r[0] for r in _rows(_view(kc, "table"))] == ["1", "2", "0"], 60, "the rows sorted by loss")

    # nothing new was logged: the chart's widget sends nothing (the table does, for its elapsed times)
    chart_id = run_ok(kc, "print(sw.view().chart.model_id)").strip()
    table_id = run_ok(kc, "print(sw.view().table.model_id)").strip()
    seen = {chart_id: 0, table_id: 0}

    def table_sent_twice() -> bool:  # a window of at least two of the drawing thread's ticks
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Exception:  # noqa: BLE001 - queue.Empty: nothing in this second
            return False
        comm = msg["content"].get("comm_id") if msg["msg_type"] == "comm_msg" else None
        if comm in seen and "value" in msg["content"]["data"].get("state", {}):
            seen[comm] += 1
        return seen[table_id] >= 2

    wait_for(table_sent_twice, 60, "two table updates")
    assert seen[chart_id] == 0, "an unchanged chart is not sent again"

    # the menu switches the chart to another key (the record follows it)
    _choose(kc, models[("DropdownModel", "chart of")], index=1)
    wait_for(lambda: 'data-key="acc"' in _view(kc, "chart"), 60, "the chart of acc")
    assert "acc by run: 3 of 3 runs logged it" in _view(kc, "chart")

    gate.touch()
    out = run_ok(kc, (
        "sw.wait(timeout=120)\n"
        "from jupyter_sched.notebook.panes.sweep_view import record_bundle\n"
        "b = record_bundle(sw)\n"
        "print(b['text/plain'])\n"
        "print('HTML', 'jsched-runs-chart' in b['text/html'], 'data-key=\"acc\"' in b['text/html'],"
        " b['text/html'].count('jsched-best'))\n"
    ))  # fmt: skip
    assert "3 SUCCEEDED" in out, out
    lines = out.splitlines()
    assert "metrics.loss" in lines[1] and "metrics.acc" in lines[1], lines
    assert "sorted by metrics.loss" in lines[0], lines[0]
    assert [line.split()[0] for line in lines[2:5]] == ["1", "2", "0"], lines
    assert re.search(r"^1 .* 0\.2 \*", lines[2]), lines  # the best cell, marked in the text too
    assert "chart: acc by run: 3 of 3 runs logged it" in out
    assert "HTML True True 1" in out, "the saved record keeps the column, the mark and the chart"


STOPPING = (
    "%load_ext jupyter_sched\n"
    "import jupyter_sched\n"
    "def train(rate):\n"
    "    import time\n"
    "    from jupyter_sched import track\n"
    "    track.define_metric('loss', goal='min')\n"
    "    for step in range(300 if rate == 0 else 4):\n"  # the loser runs until told to stop (or fails the test)
    "        track.log({'loss': 10.0 if rate == 0 else 1 / (1 + rate * step)})\n"
    "        if track.should_stop():\n"
    "            return {'stopped': step}\n"
    "        time.sleep(0.1)\n"
    "    return {'done': True}\n"
    "def too_high(run, history):\n"
    "    return f\"loss {run.last('loss')} above 5\" if (run.last('loss') or 0) > 5 else None\n"
)


def test_a_run_stopped_early_is_marked_with_its_reason_in_the_view_and_the_record(
    kernel: Tuple[Any, Any],  # noqa: F811
) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, STOPPING + "sw = jupyter_sched.sweep(train, {'rate': [1.0, 0.0]}, stop=too_high)\nsw")
    assert reply["content"]["status"] == "ok", [m["content"] for m in msgs if m["msg_type"] == "error"]
    out = run_ok(kc, "sw.wait(timeout=120)\nprint(sw.finished, sw.runs[1].stopped)")
    assert out.startswith("True stopped at step ") and out.strip().endswith(": loss 10.0 above 5"), out
    reason = out.strip()[len("True ") :]
    # the view refreshes on its own tick: its last refresh may still show the stopped run RUNNING
    wait_for(lambda: "SUCCEEDED stopped early" in sum(_rows(_view(kc, "table")), []), 60, "the final stopped row")
    table = _view(kc, "table")
    header = re.findall(r"<th[^>]*>(.*?)</th>", table)
    assert "stopped early" in header and "metrics.loss" in header, header
    rows = _rows(table)
    assert rows[1][header.index("state")] == "SUCCEEDED stopped early", rows[1]
    assert rows[1][header.index("stopped early")] == reason
    assert rows[0][header.index("state")] == "SUCCEEDED" and rows[0][header.index("stopped early")] == ""
    assert f'title="{html.escape(reason)}"' in table, "the mark's tooltip is the rule's reason"
    text = run_ok(kc, (
        "from jupyter_sched.notebook.panes.sweep_view import record_bundle\n"
        "print(record_bundle(sw)['text/plain'])"
    ))  # fmt: skip
    assert "stopped early" in text.splitlines()[1] and reason in text, text
    assert "0.25 *" in text, "the winner's last loss (1 / (1 + 3)) is the best cell"
    # an ended sweep sorts by a logged metric from code too (its column is the view's, not the table's)
    out = run_ok(kc, "sw.sort('metrics.loss', descending=True)\nprint(sw.order)\n"
                     "try:\n    sw.sort('metrics.nope')\nexcept ValueError as e:\n    print(e)")  # fmt: skip
    assert out.splitlines()[0] == "('metrics.loss', True)", out
    assert "sort: no column 'metrics.nope'" in out and "'metrics.loss'" in out, out
