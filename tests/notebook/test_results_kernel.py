"""Results as data in a real ipykernel, driven over the protocol as a front end drives it (the client sends
``allow_stdin``, as JupyterLab does), and headless (nbclient, as papermill runs it):

- ``job = jupyter_sched.submit(...)`` shows the job's panes, as ``job = %sched_run ...`` does; a submit
  whose value is used in an expression shows nothing;
- ``err.rerun_here()`` raises the remote error in the kernel, its frames named by their cells, and
  ``%debug`` then opens the failing frame with its locals;
- an ended sweep keeps its controls; sorting it (from the menu or ``sweep.sort``) updates the cell's
  record, and ``retry_failed()`` makes it live again until the retried runs end; headless, the ended
  sweep is the record alone, sorted as the notebook last asked;
- ``job.logs()``, ``job.usage()`` and ``results(errors="return")`` display readably.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import nbformat
from nbhelpers import run_headless, wait_for
from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture
from test_sweep_kernel import _choose, _models, _send

WIDGET = "application/vnd.jupyter.widget-view+json"


def _displays(msgs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [m["content"] for m in msgs if m["msg_type"] == "display_data"]


def test_an_assigned_submit_shows_the_job_and_a_used_one_does_not(
    kernel: Tuple[Any, Any],  # noqa: F811
    tmp_path: Any,
) -> None:
    _, kc = kernel
    gate = tmp_path / "gate"
    reply, msgs = execute(kc, (
        "%load_ext jupyter_sched\nimport jupyter_sched, os, time\n"
        f"def gated():\n    while not os.path.exists({str(gate)!r}):\n        time.sleep(0.05)\n    return 7\n"
        "job = jupyter_sched.submit(gated)"
    ))  # fmt: skip
    assert reply["content"]["status"] == "ok"
    (shown,) = _displays(msgs)
    assert WIDGET in shown["data"], "the live panes, as job = %sched_run shows them"
    assert shown["data"]["text/plain"].startswith("gated RUNNING: local_cwd://")
    gate.touch()
    assert run_ok(kc, "print(job.result(timeout=60))").strip() == "7"
    reply, msgs = execute(kc, "print(jupyter_sched.submit(lambda: 8).result(timeout=60))")
    assert _displays(msgs) == [] and "8" in "".join(m["content"].get("text", "") for m in msgs)
    reply, msgs = execute(kc, "j2 = jupyter_sched.submit(lambda: 9)\nj2")
    pane, line = _displays(msgs)
    assert WIDGET in pane["data"] or "exit code 0" in pane["data"]["text/plain"], "the job's pane, or its record"
    assert WIDGET not in line["data"] and line["data"]["text/plain"].startswith("lambda "), "then one line"
    assert len(line["data"]["text/plain"].splitlines()) == 1


def test_rerun_here_raises_in_the_kernel_and_debug_opens_the_failing_frame(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\nimport jupyter_sched")
    reply, _ = execute(kc, "def pick(xs, n):\n    return xs[n]\ndef explode(n):\n    return pick([1, 2], n)")
    defined = reply["content"]["execution_count"]
    assert run_ok(kc, "err = jupyter_sched.submit(explode, 5).exception(timeout=60)\nprint(repr(err))").startswith(
        "<FunctionError in replica explode/0: IndexError: list index out of range>"
    )
    reply, msgs = execute(kc, "err.rerun_here()")
    (error,) = [m["content"] for m in msgs if m["msg_type"] == "error"]
    assert error["ename"] == "IndexError"
    tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
    assert "rerun.py" not in tb and "errors.py" not in tb, "our frames are hidden: it starts at the user's code"
    assert f"Cell In[{defined}], line 4" in tb and f"Cell In[{defined}], line 2" in tb, tb
    assert "return xs[n]" in tb and "<dynamic-code>" not in tb
    answers = ["p (xs, n)", "q"]
    out: List[str] = []

    def answer(msg: Dict[str, Any]) -> None:
        kc.input(answers.pop(0))

    kc.execute_interactive("%debug", allow_stdin=True, stdin_hook=answer, timeout=60,
                           output_hook=lambda m: out.append(m["content"].get("text", "")))  # fmt: skip
    assert "([1, 2], 5)" in "".join(out), "the debugger is in pick's frame, with its locals"
    assert answers == []


def _display_id(msgs: List[Dict[str, Any]]) -> str:
    (shown,) = _displays(msgs)
    return str(shown["transient"]["display_id"])


def _updates(msgs: List[Dict[str, Any]], display_id: str) -> List[Dict[str, Any]]:
    return [m["content"]["data"] for m in msgs
            if m["msg_type"] == "update_display_data" and m["content"]["transient"]["display_id"] == display_id]


def _last_update(msgs: List[Dict[str, Any]], display_id: str, needle: str) -> Dict[str, Any]:
    """The last update of ``display_id`` among ``msgs`` (a cell's messages), which must hold ``needle``."""
    updates = _updates(msgs, display_id)
    assert updates and needle in updates[-1].get("text/plain", ""), [u.get("text/plain", "")[:200] for u in updates]
    return updates[-1]


def _next_update(kc: Any, display_id: str, needle: str, timeout: float = 120) -> Dict[str, Any]:
    """The next ``update_display_data`` of ``display_id`` on iopub (sent for a front end's comm message,
    not for a cell) whose text holds ``needle``."""
    found: Dict[str, Any] = {}

    def seen() -> Optional[bool]:
        msg = kc.get_iopub_msg(timeout=timeout)
        for data in _updates([msg], display_id):
            if needle in data.get("text/plain", ""):
                found.update(data)
                return True
        return None

    wait_for(seen, timeout, f"an update of the sweep's display with {needle!r}")
    return found


def _column(plain: str, name: str) -> List[str]:
    """The non-empty cells of column ``name`` in a record's text table, top to bottom (the header is the
    record's second line; columns are padded, so a cell is the text under its header)."""
    lines = plain.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", lines[1])]
    i = lines[1].split().index(name)
    end = starts[i + 1] if i + 1 < len(starts) else None
    cells = [line[starts[i] : end].strip() for line in lines[2:] if line[:1].isdigit()]
    return [c for c in cells if c]


# each run takes a second, so the sweep ends while a later cell waits for it, whose messages then carry its
# final record (a run forked from the warm zygote could otherwise end before that cell starts)
SWEEP = (
    "%load_ext jupyter_sched\nimport jupyter_sched, os, time\n"
    "def train(lr, gate=''):\n"
    "    time.sleep(1)\n"
    "    if lr > 1.5 and not os.path.exists(gate):\n"
    "        raise ValueError('too high')\n"
    "    return {'loss': round(1 / lr, 3)}\n"
)


def test_an_ended_sweep_keeps_its_controls_and_its_record_follows_the_sort(
    kernel: Tuple[Any, Any],  # noqa: F811
    tmp_path: Any,
) -> None:
    _, kc = kernel
    gate = tmp_path / "gate"
    reply, msgs = execute(kc, SWEEP + (
        f"sw = jupyter_sched.sweep(train, {{'lr': [0.5, 2.0, 1.0], 'gate': [{str(gate)!r}]}}, max_concurrent=3)\nsw"
    ))  # fmt: skip
    models = _models(msgs)
    display_id = _display_id(msgs)
    reply, msgs = execute(kc, "sw.wait(timeout=120)\nprint(sw.counts_text())")
    final = _last_update(msgs, display_id, "1 FAILED, 2 SUCCEEDED")
    assert WIDGET in final, "the ended sweep keeps its controls"
    assert "as of" not in final["text/plain"]
    # the user sorts by loss, descending, in the menu: the view and the record follow
    # (the menu lists a result field once the view's next redraw has read the results)
    wait_for(lambda: "'loss'" in run_ok(kc, "print(sw.view().sort.options)"), 60, "loss in the sort menu")
    options = run_ok(kc, "print(sw.view().sort.options)")
    _choose(kc, models[("DropdownModel", "sort by")], index=eval(options).index("loss"))
    _choose(kc, models[("CheckboxModel", "descending")], value=True)
    record = _next_update(kc, display_id, "sorted by loss (descending)")
    assert WIDGET in record and _column(record["text/plain"], "loss") == ["2.0", "1.0"]
    assert "sorted by loss (descending)" in record["text/html"]
    # sorted from code: the menu moves too
    reply, msgs = execute(kc, "sw.sort('lr')\nimport time; time.sleep(0.5)\nprint(sw.view().sort.value)")
    assert "lr" in "".join(m["content"].get("text", "") for m in msgs)
    record = _last_update(msgs, display_id, "sorted by lr")
    assert _column(record["text/plain"], "lr") == ["0.5", "1.0", "2.0"]
    # retry the failed run: the display is live again, then final with every run
    gate.touch()
    reply, msgs = execute(kc, "sw.retry_failed()\nsw.wait(timeout=120)")
    assert any("as of" in u.get("text/plain", "") for u in _updates(msgs, display_id)), "live again"
    final = _last_update(msgs, display_id, "3 SUCCEEDED")
    assert WIDGET in final and _column(final["text/plain"], "loss") == ["2.0", "1.0", "0.5"]


def test_a_headless_run_saves_the_ended_sweep_as_its_sorted_record(tmp_path: Any) -> None:
    cells = [
        SWEEP + "sw = jupyter_sched.sweep(train, {'lr': [0.5, 2.5, 1.0], 'gate': ['.']}, max_concurrent=2)\nsw",
        "print(sw.results(timeout=120, errors='return'))",
        "sw.sort('loss')",  # the notebook's last word on the order: the saved record follows it
        # it runs past the usage sampler's first sample (0.1 s after a replica starts), so it has usage to show
        "job = jupyter_sched.submit(lambda: print('one\\ntwo') or __import__('time').sleep(0.4) or 3)\n"
        "job.result(timeout=60)\njob.logs()",
        "job.usage()",
    ]
    nb = nbformat.read(str(run_headless(cells, tmp_path)), as_version=4)
    outputs = nb.cells[0].outputs
    assert not any(WIDGET in o.get("data", {}) for o in outputs), "headless: the record alone, nothing to restore"
    (plain,) = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert "3 SUCCEEDED" in plain and "sorted by loss" in plain
    assert _column(plain, "lr") == ["2.5", "1.0", "0.5"]
    returned = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert "[{'loss': 2.0}, {'loss': 0.4}, {'loss': 1.0}]" in returned
    logs = [o["data"]["text/plain"] for o in nb.cells[3].outputs if o.get("output_type") == "execute_result"]
    assert logs == ["lambda/0 | one\nlambda/0 | two"], "job.logs() displays as the log text, not a list"
    (usage,) = [o["data"] for o in nb.cells[4].outputs if o.get("output_type") == "execute_result"]
    assert usage["text/plain"].splitlines()[0].split()[:4] == ["replica", "state", "CPU", "%"]
    row = usage["text/plain"].splitlines()[1]
    assert row.startswith("lambda/0") and row.split()[1] == "ended"
    assert re.search(r"  \d+(\.\d)? (B|KiB|MiB|GiB)  ", row), "peak memory in binary units"
    assert re.fullmatch(r"\d\d:\d\d:\d\d", row.split()[-1]), "sampled at, local time"
    assert "<th" in usage["text/html"] and "sampled at" in usage["text/html"]


def test_results_with_errors_display_them_readably(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    reply, msgs = execute(kc, SWEEP + (
        "sw = jupyter_sched.sweep(train, {'lr': [0.5, 2.0]}, max_concurrent=2)\n"
        "sw.results(timeout=120, errors='return')"
    ))  # fmt: skip
    (result,) = [m["content"] for m in msgs if m["msg_type"] == "execute_result"]
    assert result["data"]["text/plain"] == (
        "[{'loss': 2.0}, <FunctionError in run lr=2.0: ValueError: too high>]"
    )


def test_retry_failed_shows_a_note_and_the_shown_panes_follow_the_retried_run(
    kernel: Tuple[Any, Any],  # noqa: F811
    tmp_path: Any,
) -> None:
    _, kc = kernel
    gate = tmp_path / "gate"
    reply, msgs = execute(kc, SWEEP + (
        f"sw = jupyter_sched.sweep(train, {{'lr': [0.5, 2.0], 'gate': [{str(gate)!r}]}}, max_concurrent=2)\nsw"
    ))  # fmt: skip
    models = _models(msgs)
    assert run_ok(kc, "sw.wait(timeout=120)\nprint(sw.counts_text())").strip() == "1 FAILED, 1 SUCCEEDED"
    # the user picks the failed run and shows its panes, as in the browser
    _choose(kc, models[("DropdownModel", "run")], index=1)
    _send(kc, models[("ButtonModel", "Show panes")], {"method": "custom", "content": {"event": "click"}})
    run_ok(kc, "def shown():\n    return ''.join(o.get('text', '') for o in sw.view().panes.outputs)")
    failed = run_ok(kc, "print(sw.runs[1].job.app_id)").strip()
    wait_for(lambda: f"run 1: {failed} on local_cwd" in run_ok(kc, "print(shown())"), 60, "the failed run's panes")
    # retried: the cell shows one line saying what runs again, not a second copy of the live table
    gate.touch()
    reply, msgs = execute(kc, "sw.retry_failed()")
    (result,) = [m["content"]["data"] for m in msgs if m["msg_type"] == "execute_result"]
    assert WIDGET not in result and _displays(msgs) == [], "no second live table"
    note = result["text/plain"]
    assert note.startswith(f"sweep {run_ok(kc, 'print(sw.name)').strip()}: retrying 1 run: #1 (lr=2.0, gate=")
    assert len(note.splitlines()) == 1
    # the panes shown under the table follow the run to its new attempt, as its row does
    retried = wait_for(
        lambda: run_ok(kc, "j = sw.runs[1].job\nprint(j.app_id if j is not None else '')").strip(), 60, "the relaunch"
    )
    assert retried != failed
    wait_for(lambda: f"run 1 (attempt 2): {retried} on local_cwd" in run_ok(kc, "print(shown())"), 60,
             "the shown panes to follow the retried run")  # fmt: skip
    assert failed not in run_ok(kc, "print(shown())")
    assert run_ok(kc, "sw.wait(timeout=120)\nprint(sw.counts_text())").strip() == "2 SUCCEEDED"
