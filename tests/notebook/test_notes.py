"""In a real kernel, the ``jupyter_sched`` logger shows as a one-line note (progress updated in place, a
warning on a line of its own), never on stderr."""

from __future__ import annotations

from typing import Any, Tuple

from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture

CODE = """
import logging
log = logging.getLogger("jupyter_sched.schedulers.docker.engine")
for i in range(30):
    log.info("docker pull img:1: step %d", i)
log.warning("<b>odd</b> thing\\nsecond line")
"""


def test_progress_is_one_updated_line_and_a_warning_its_own(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched")
    reply, msgs = execute(kc, CODE)
    assert reply["content"]["status"] == "ok"
    assert not [m for m in msgs if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"]
    shown = [m["content"]["data"] for m in msgs if m["msg_type"] == "display_data"]
    updates = [m["content"]["data"] for m in msgs if m["msg_type"] == "update_display_data"]
    assert [d["text/plain"] for d in shown] == [
        "jupyter_sched: docker pull img:1: step 0",
        "jupyter_sched: warning: <b>odd</b> thing",
    ]
    assert "&lt;b&gt;odd" in shown[1]["text/html"] and "second line" not in shown[1]["text/html"]
    assert len(updates) == 29 and updates[-1]["text/plain"] == "jupyter_sched: docker pull img:1: step 29"
    run_ok(kc, "%unload_ext jupyter_sched")
    _, msgs = execute(kc, 'logging.getLogger("jupyter_sched").info("after unload")')
    assert not [m for m in msgs if m["msg_type"] in ("display_data", "update_display_data")]
