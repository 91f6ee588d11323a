"""``job.wait()`` in a real ipykernel: the status it displays (HTML and text) says how the job ended, not
where the local backend keeps its records (a ``file://`` URL of an internal directory, which a browser
will not open from a notebook and a user has no use for)."""

from __future__ import annotations

from typing import Any, Tuple

from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture


def test_wait_displays_no_internal_file_url(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.interactive = False")
    run_ok(kc, 'job = %sched_run --wait utils.sh "echo waited-for"')
    # the backend does report one: it is the display that must leave it out
    assert run_ok(kc, "print(job.wait().ui_url)").startswith("file://")
    reply, msgs = execute(kc, "job.wait()")
    assert reply["content"]["status"] == "ok"
    results = [m["content"]["data"] for m in msgs if m["msg_type"] == "execute_result"]
    assert len(results) == 1, msgs
    shown = results[0]
    assert "SUCCEEDED" in shown["text/plain"] and "SUCCEEDED" in shown["text/html"], shown
    for mime, text in shown.items():
        assert "file://" not in str(text), (mime, text)
