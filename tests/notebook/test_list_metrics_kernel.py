"""``%sched_list`` shows each app's main metric, in a real ipykernel: a function job on local_cwd that logs with
``jupyter_sched.track`` (``loss``, goal min) is listed with ``loss 0.01`` in the list's text (the record a
saved notebook keeps) and in its live row; a job that logged nothing has nothing there."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture

JOBS = (
    "%load_ext jupyter_sched\n"
    "import jupyter_sched\n"
    "def logs(steps):\n"
    "    from jupyter_sched import track\n"
    "    track.define_metric('loss', goal='min')\n"
    "    for i in range(steps):\n"
    "        track.log({'loss': 1.0 / (i + 1), 'acc': i / steps})\n"
    "    return steps\n"
    "def quiet():\n"
    "    return 'quiet'\n"
    "logged, silent = jupyter_sched.submit(logs, 100), jupyter_sched.submit(quiet)\n"
    "print(logged.result(timeout=180), silent.result(timeout=180), logged.handle, silent.handle)\n"
)


def _texts(msgs: List[Dict[str, Any]]) -> List[str]:
    shown = [m["content"]["data"] for m in msgs if m["msg_type"] in ("display_data", "update_display_data")]
    return [str(data["text/plain"]) for data in shown if "text/plain" in data]


def test_sched_list_shows_the_main_metric_of_a_job_that_logged_one(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    out = run_ok(kc, JOBS).split()
    assert out[:2] == ["100", "quiet"], out
    logged, silent = out[2], out[3]
    reply, msgs = execute(kc, "%sched_list")
    assert reply["content"]["status"] == "ok"
    text = next(t for t in _texts(msgs) if "APP HANDLE" in t)
    lines = text.splitlines()
    assert lines[0].split() == ["APP", "HANDLE", "NAME", "STATE", "STARTED", "AGE", "METRIC"], lines[0]
    row = next(line for line in lines if line.startswith(logged))
    assert row.endswith("loss 0.01"), row
    quiet_row = next(line for line in lines if line.startswith(silent))
    assert "loss" not in quiet_row and quiet_row.rstrip().endswith(("s", "ended")), quiet_row
    live = run_ok(kc, (
        "pane = %sched_list\n"  # the magic returns its live pane
        f"print(pane.rows[{logged!r}].html.value)\n"
        f"print('QUIET', pane.rows[{silent!r}].html.value)\n"
    ))  # fmt: skip
    first, quiet_html = live.split("QUIET", 1)
    assert '<span class="jsched-list-metric">loss 0.01</span>' in first, first
    assert "jsched-list-metric" not in quiet_html
