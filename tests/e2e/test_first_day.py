"""The panes as a first-time user sees them in JupyterLab, light and dark (issue 26).

Each cell is typed and run the way a person does, one at a time (a failed ``--wait`` would stop Run All):
a component flag after the command and a misplaced option are refused with the line meant and the
magic's own usage; ``{...}`` is left alone and a dry run says what ``$n`` became; running out of memory
says so first, in plain words, with one spelling of the replica; a failed job's record is its live pane
frozen (the same row heights, the chart's last frame, no stop hint, the traceback once); a running pane
counts the ``\\r`` line, offers "Pause"/"Follow" as the action it is, and puts the saved logs' links on a
line of their own saying as of when; no output links half of a handle; the Docker and Slurm panes keep
write order and do not repeat Slurm's state words. Screenshots: artifacts/screenshots/first-day-*.png.
"""

from __future__ import annotations

import re
from typing import Any, List

from jupyter_sched.specs import random_id
from tests.e2e.conftest import Lab, LabServer

TIMEOUT = 120_000  # ms: upper bounds for what must become visible on a shared machine

SCRIPTS = {
    "broken.py": (  # ends once the test has looked at its live pane: when the file "go" exists
        "import os, sys, time\n"
        "for s in range(1, 31):\n"
        "    print(f'\\rstep {s}/30', end='', flush=True); time.sleep(0.1)\n"
        "while not os.path.exists('go'):\n"
        "    time.sleep(0.1)\n"
        "print()\n"
        "print('warning: tiny', file=sys.stderr)\n"
        "print('done')\n"
        "{}['y']\n"
    ),
    "counting.py": (
        "import time\nprint('start', flush=True)\n"
        "for s in range(1, 100000):\n"
        "    print(f'\\rstep {s}', end='', flush=True); time.sleep(0.05)\n"
    ),
}


def setup_cell() -> str:
    writes = "\n".join(f"pathlib.Path({name!r}).write_text({text!r})" for name, text in SCRIPTS.items())
    return f"%load_ext jupyter_sched\nimport pathlib\n{writes}"


def run_cell(lab: Lab, source: str, timeout: float = TIMEOUT) -> Any:
    index = lab.append_and_run(source)
    lab.wait_executed(index, timeout=timeout)
    return lab.cell(index).locator(".jp-Cell-outputArea")


def links(output: Any) -> List[str]:
    """The web links JupyterLab made in an output (``a[href]``: blue and underlined). Its path links (a
    ``/0`` after ``python``) have no href and look like the text around them."""
    return [str(t) for t in output.locator("a[href]").all_inner_texts()]


def row_height(output: Any) -> float:
    row = output.locator(".jsched-status table tbody tr").first
    return float(row.evaluate("e => e.getBoundingClientRect().height"))


def test_what_a_first_day_user_meets(lab: Lab, lab_server: LabServer) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    lab.open(lab_server.write_notebook(f"first-day-{tag}.ipynb", [setup_cell()]))
    lab.run_all()
    lab.wait_all_done()

    # 1, 11: a flag of the component after the command is refused, with the line meant, by the magic's name
    out = run_cell(lab, f'%sched_run --wait utils.sh --name p1-{tag} "hostname; sleep 1" --num_replicas 2')
    text = out.inner_text()
    assert "UsageError: %sched_run: --num_replicas is a flag of utils.sh" in text, text
    assert f"%sched_run --wait utils.sh --name p1-{tag} --num_replicas 2 'hostname; sleep 1'" in text
    assert f"%sched_run --wait utils.sh --name p1-{tag} -- 'hostname; sleep 1' --num_replicas 2" in text
    assert "jupyter-sched run" not in text
    lab.screenshot_themes(out, "first-day-flag-after-the-command")
    out = run_cell(lab, "%sched_run --num_replicas 2 utils.sh hostname")
    text = " ".join(out.inner_text().split())
    assert "UsageError: %sched_run: unknown option --num_replicas. Options are --quiet, --detach, --no-wait" in text
    assert "usage: %sched_run [--quiet] [--detach] [--no-wait]" in text and "jupyter-sched run" not in text
    lab.screenshot_themes(out, "first-day-usage-error")

    # 2: {expr} is never expanded; a dry run shows what $n became
    run_cell(lab, "i = 2\nn = 1")
    out = run_cell(lab, "%sched_run --dryrun utils.python --num_replicas $n -c \"print(f'epoch {i}')\"")
    expect(out.locator(".jsched-expanded")).to_contain_text("the line after expanding $n:")
    expect(out.locator(".jsched-expanded")).to_contain_text("--num_replicas 1 -c")
    argv = out.locator(".jsched-dryrun").first.inner_text()
    assert "epoch {i}" in argv and "epoch 2" not in argv, argv
    lab.screenshot_themes(out, "first-day-dryrun-expanded")

    # 4, 8: out of memory first, in plain words; one spelling of the replica; nothing half-linked
    out = run_cell(lab, f"%sched_run --wait --cfg memory_limit=128m utils.python --name oom-{tag}"
                        " -c \"print('allocating'); x = bytearray(512 << 20)\"")  # fmt: skip
    expect(out.locator(".jsched-record")).to_have_count(1, timeout=TIMEOUT)
    text = out.inner_text()
    error = out.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").inner_text()
    assert re.search(r"JobFailed: oom-\w+ FAILED: python/0 FAILED \(exit code 1\): out of memory \(limit 128 MiB",
                     " ".join(error.split())), error  # fmt: skip
    assert "python[0]" not in text and "RLIMIT_AS" not in text
    assert links(out) == [], links(out)
    lab.screenshot_themes(out, "first-day-out-of-memory")

    # 5, 10, 8: a failed job's record is its live pane frozen; the traceback once; no stop hint
    index = lab.append_and_run(f"%sched_run --wait utils.python --name broken-{tag} --script broken.py")
    out = lab.cell(index).locator(".jp-Cell-outputArea")
    expect(out.locator(".jsched-job .jsched-usage-chart")).to_be_visible(timeout=TIMEOUT)
    expect(out.locator("pre.jsched-log-text")).to_contain_text("step 30/30", timeout=TIMEOUT)
    live_row = row_height(out)
    lab.screenshot_themes(out.locator(".jsched-job").first, "first-day-live")
    (lab_server.root_dir / "go").write_text("")
    lab.wait_executed(index, timeout=TIMEOUT)
    expect(out.locator(".jsched-record")).to_have_count(1, timeout=TIMEOUT)
    record = out.locator(".jsched-record")
    assert abs(row_height(out) - live_row) <= 1.5, (live_row, row_height(out))  # same density live and frozen
    expect(record.locator("img.jsched-usage-chart")).to_be_visible()  # the chart's last frame
    text = out.inner_text()
    assert text.count("Traceback (most recent call last)") == 1, text
    assert "stop: %sched_cancel" not in text and out.locator("button").count() == 0
    assert "python/0 FAILED (exit code 1): KeyError: 'y'" in text and "8 lines" in text
    (lab_server.root_dir / "go").unlink()
    assert links(out) == [], links(out)
    lab.screenshot_themes(record, "first-day-record")

    # 7: a running pane counts the \r line; Pause/Follow say what a click does; saved links on their own line
    out = run_cell(lab, f"run = %sched_run utils.python --name counting-{tag} --script counting.py")
    header = out.locator(".jsched-log-header")
    expect(out.locator("pre.jsched-log-text")).to_contain_text(re.compile(r"step \d+"), timeout=TIMEOUT)
    expect(header).to_contain_text("2 lines")
    follow = out.locator(".jsched-controls button", has_text=re.compile("^(Pause|Follow)$"))
    expect(follow).to_have_text("Pause")
    assert follow.locator(".fa-pause").count() == 1
    follow.click()
    expect(follow).to_have_text("Follow")
    expect(header).to_contain_text("paused")
    assert follow.locator(".fa-play").count() == 1
    follow.click()
    expect(header).to_contain_text("following")
    out.locator(".jsched-controls button", has_text="Save logs").click()
    saved = out.locator(".jsched-saved")
    expect(saved).to_contain_text(re.compile(r"full logs as of \d\d:\d\d:\d\d \(the app was still running"))
    buttons_bottom = out.locator(".jsched-controls").evaluate("e => e.getBoundingClientRect().bottom")
    assert saved.evaluate("e => e.getBoundingClientRect().top") >= buttons_bottom - 1
    lab.screenshot_themes(out.locator(".jsched-job").first, "first-day-running")
    run_cell(lab, "run.cancel()")

    # 8: a function's error names its app without a handle JupyterLab would half-link
    out = run_cell(lab, "import jupyter_sched\ndef boom():\n    raise ValueError('nope')\n"
                        "jupyter_sched.submit(boom).result()")  # fmt: skip
    expect(out).to_contain_text("ValueError: nope", timeout=TIMEOUT)
    assert " on local_cwd" in out.inner_text() and links(out) == [], links(out)
    lab.screenshot_themes(out, "first-day-function-error")
    assert lab.page_problems() == []


def test_docker_record_keeps_write_order(lab: Lab, lab_server: LabServer, docker_engine: None) -> None:
    """6: the last progress frame, its line end, then a warning on stderr: the line comes first, live and in
    the record (the engine's two streams arrive apart). The warning follows 0.3 s later: the engine stamps
    each pipe's output when its own reader takes it, so two writes to two pipes within microseconds of each
    other have no knowable order (a CI run under load saw them swapped)."""
    tag = random_id()[:6]
    lab.open(lab_server.write_notebook(f"docker-order-{tag}.ipynb", ["%load_ext jupyter_sched"]))
    lab.run_all()
    lab.wait_all_done()
    code = (
        "import sys, time; [print(f'\\r{p}%', end='', flush=True) or time.sleep(0.05) for p in range(0, 101, 10)];"
        " print(); time.sleep(0.3); print('warning: docker', file=sys.stderr)"
    )
    out = run_cell(lab, f"%sched_run --wait -s local_docker utils.python --name dock-{tag}"
                        f' --image jupyter-sched/python:local -c "{code}"')  # fmt: skip
    lines = [line for line in out.locator(".jsched-record pre.jsched-log-text").inner_text().split("\n") if line]
    assert [line.split("|")[-1].split("!")[-1].strip() for line in lines] == ["100%", "warning: docker"], lines
    assert "default --memMB 1024, enforced on local_docker" in out.inner_text()
    lab.screenshot_themes(out, "first-day-docker-order")


def test_slurm_pane_does_not_repeat_slurm_words(lab: Lab, lab_server: LabServer, slurm_cluster: Any) -> None:
    """9: no bare RUNNING or COMPLETED line under the state pill, live or in the record."""
    from playwright.sync_api import expect

    tag = random_id()[:6]
    lab.open(lab_server.write_notebook(f"slurm-{tag}.ipynb", ["%load_ext jupyter_sched"]))
    lab.run_all()
    lab.wait_all_done()
    out = run_cell(lab, f"sl = %sched_run -s slurm utils.sh --name sl-{tag} 'echo hello; sleep 8; echo done'")
    status = out.locator(".jsched-job .jsched-status").first
    expect(status.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    expect(out.locator("pre.jsched-log-text")).to_contain_text("hello", timeout=TIMEOUT)
    bare = "els => els.filter(e => !e.closest('.jsched-pill') && /^(RUNNING|COMPLETED)$/.test(e.innerText.trim()))"
    assert status.locator("div").evaluate_all(f"{bare}.length") == 0
    lab.screenshot_themes(out.locator(".jsched-job").first, "first-day-slurm-running")
    expect(out.locator(".jsched-record")).to_have_count(1, timeout=TIMEOUT)
    assert out.locator(".jsched-record div").evaluate_all(f"{bare}.length") == 0
    assert "COMPLETED" not in out.inner_text()
    lab.screenshot_themes(out, "first-day-slurm-ended")
