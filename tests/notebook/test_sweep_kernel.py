"""A sweep's live table in a real ipykernel, driven over the protocol like a front end: choosing a "sort by"
column while the sweep runs, then a new result column appearing, neither freezes the table nor stalls the
sweep (its queued runs launch, ``results()`` returns), and "Cancel all" (asked, then confirmed by a second
click) still returns at once.

The runs wait for a gate file in the kernel's directory (the replicas' working directory on local_cwd), so
the sort is chosen before any result column exists, which is when the menu's options are replaced.
"""

from __future__ import annotations

import html
import re
from typing import Any, Dict, List, Optional, Tuple

from nbhelpers import wait_for
from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture

GATED = (
    "%load_ext jupyter_sched\n"
    "import jupyter_sched\n"
    "def train(lr, gate, hold=0.0):\n"
    "    import os, time\n"
    "    while not os.path.exists(gate):\n"
    "        time.sleep(0.05)\n"
    "    if lr > hold > 0:\n"
    "        time.sleep(300)\n"
    "    return {'loss': round(1 - lr, 3)}\n"
)


def _models(msgs: List[Dict[str, Any]]) -> Dict[Tuple[str, str], str]:
    """(model name, description) -> comm id of each widget the displayed sweep opened."""
    out = {}
    for m in msgs:
        if m["msg_type"] == "comm_open":
            state = m["content"]["data"].get("state", {})
            out[(state.get("_model_name", ""), state.get("description", ""))] = str(m["content"]["comm_id"])
    return out


def _send(kc: Any, comm_id: str, data: Dict[str, Any]) -> None:
    kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))


def _choose(kc: Any, comm_id: str, **state: Any) -> None:
    """What a front end sends when the user changes a control."""
    _send(kc, comm_id, {"method": "update", "state": state, "buffer_paths": []})


def _show_sweep(kc: Any, code: str) -> Dict[Tuple[str, str], str]:
    reply, msgs = execute(kc, code)
    assert reply["content"]["status"] == "ok", [m["content"] for m in msgs if m["msg_type"] == "error"]
    models = _models(msgs)
    assert ("DropdownModel", "sort by") in models, "the sweep's live table was displayed"
    return models


def _lr_column(table_html: str) -> List[float]:
    """The ``lr`` cells of the table's rows, top to bottom (``lr`` is the second column)."""
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table_html)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return [float(html.unescape(c[1])) for c in cells if len(c) > 1]


def test_sorting_while_a_new_result_column_appears_keeps_the_sweep_running(
    kernel: Tuple[Any, Any],  # noqa: F811
    tmp_path: Any,
) -> None:
    _, kc = kernel
    gate = tmp_path / "gate-1"
    models = _show_sweep(kc, GATED + (
        f"sw = jupyter_sched.sweep(train, {{'lr': [0.1, 0.2, 0.3, 0.4], 'gate': [{str(gate)!r}]}}, max_concurrent=2)\n"
        "sw"
    ))  # fmt: skip
    _choose(kc, models[("DropdownModel", "sort by")], index=1)  # "lr": the menu is "#", lr, gate, state, ...
    _choose(kc, models[("CheckboxModel", "descending")], value=True)
    assert run_ok(kc, "print(sw.view().sort.value, sw.finished)").split() == ["lr", "False"]
    gate.touch()  # the first results arrive: a "loss" column appears and the menu's options are replaced
    out = run_ok(kc, "print(sw.results(timeout=120))")
    assert out.strip() == "[{'loss': 0.9}, {'loss': 0.8}, {'loss': 0.7}, {'loss': 0.6}]"
    # the table is drawn to the end, still sorted as the user chose
    shown = run_ok(kc, (
        "import time\n"
        "v = sw.view()\n"
        "for _ in range(600):\n"
        "    if v.table.value.count('SUCCEEDED') == 4 and v.cancel_button.disabled:\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "print(v.sort.value, 'loss' in v.sort.options)\n"
        "print(v.table.value)\n"
    ))  # fmt: skip
    first, table = shown.split("\n", 1)
    assert first == "lr True"
    assert table.count("SUCCEEDED") == 4
    assert _lr_column(table) == [0.4, 0.3, 0.2, 0.1]


def test_cancel_all_returns_while_the_table_is_sorted(kernel: Tuple[Any, Any], tmp_path: Any) -> None:  # noqa: F811
    km, kc = kernel
    gate = tmp_path / "gate-2"
    models = _show_sweep(kc, GATED + (
        f"sw = jupyter_sched.sweep(train, {{'lr': [0.1, 0.2, 0.3, 0.4], 'gate': [{str(gate)!r}], 'hold': [0.15]}},"
        " max_concurrent=2)\n"
        "sw"
    ))  # fmt: skip
    sort_id = models[("DropdownModel", "sort by")]
    _choose(kc, sort_id, index=1)
    assert run_ok(kc, "print(sw.view().sort.value)").strip() == "lr"
    gate.touch()  # run 0 returns (a "loss" column appears); runs 1 and 2 hold until cancelled

    def options_with_loss() -> Optional[bool]:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == sort_id:
            labels = msg["content"]["data"].get("state", {}).get("_options_labels")
            return labels is not None and "loss" in labels
        return None

    wait_for(options_with_loss, 120, "the sort menu to offer the new result column")
    assert run_ok(kc, "print(sw.view().sort.value)").strip() == "lr", "the user's choice was kept"
    cancel_all = models[("ButtonModel", "Cancel all")]
    _send(kc, cancel_all, {"method": "custom", "content": {"event": "click"}})
    # one click only asks (issue 35, point 3): the button says so, and every run goes on
    asked = run_ok(kc, (
        "import time\n"
        "v = sw.view()\n"
        "for _ in range(600):\n"
        "    if v.cancel_button.description != 'Cancel all':\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "print(repr(v.cancel_button.description), sw.finished, sw.counts().get('CANCELLED', 0))\n"
    ))  # fmt: skip
    assert asked.strip() == "'Confirm cancel all?' False 0"
    _send(kc, cancel_all, {"method": "custom", "content": {"event": "click"}})  # the second click confirms
    out = run_ok(kc, "sw.wait(timeout=120)\nprint(sw.finished, sw.counts())")
    assert out.strip() == "True {'SUCCEEDED': 1, 'CANCELLED': 3}"
