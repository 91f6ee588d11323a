"""``%sched_run -s torchx:ray`` in a real kernel against the test Ray head: the live log pane shows the
job's lines while the cell waits, each line once; a failed job raises one line saying what its log says
went wrong; and ``%sched_list`` lists the cluster's jobs (or says why it cannot, instead of showing only
this kernel's)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Tuple

from nbhelpers import wait_for  # noqa: F401
from test_flow_kernel import Iopub, reply_to
from test_kernel import execute, kernel, run_ok  # noqa: F401 - the kernel fixture

from tests.conftest import require_module, require_ray

require_module("torchx", "the torchx extra: pip install jupyter_sched[torchx]")
require_ray()


def test_the_pane_follows_a_ray_job_live(ray_cluster: str, kernel: Tuple[Any, Any], tmp_path: Path) -> None:  # noqa: F811
    _, kc = kernel
    go = tmp_path / "go"
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.refresh_interval = 0.2")
    script = f"echo pane-ready; while [ ! -e {go} ]; do sleep 0.1; done; echo pane-after; echo pane-err >&2; exit 3"
    msg_id = kc.execute(f"job = %sched_run --wait -s torchx:ray utils.sh --name paned '{script}'")
    io = Iopub(kc, msg_id)

    def shown() -> str:
        values = [str(m["content"]["data"].get("state", {}).get("value", "")) for m in io.of_type("comm_msg")]
        return next((v for v in reversed(values) if "pane-" in v), "")

    io.until(lambda: "pane-ready" in shown(), "the job's first line in the live pane", timeout=180)
    assert not io.idle()  # the cell still waits: the line came while the job ran
    go.touch()
    reply = reply_to(kc, msg_id, timeout=180)
    assert reply["content"]["ename"] == "JobFailed" and len(reply["content"]["traceback"]) == 1
    assert "ray/0 FAILED: pane-" in reply["content"]["traceback"][0]  # its last line, then the exit code
    assert re.search(r"; exit code 3 \[\S+-paned-\w+ on torchx:ray\]$", reply["content"]["traceback"][0])
    io.until(lambda: "pane-err" in shown(), "the job's last lines in the pane", timeout=60)
    final = shown()
    assert final.count("pane-after") == 1 and final.count("pane-err") == 1  # one log, not stdout and stderr
    out = run_ok(kc, "print(job.state, job.handle)")
    state, handle = out.split()
    assert state == "FAILED" and handle.startswith("torchx:ray://")
    _, msgs = execute(kc, "%sched_list -s torchx:ray")
    assert handle.rsplit("/", 1)[1] in str([m["content"] for m in msgs])
    _, msgs = execute(kc, "import os; del os.environ['RAY_ADDRESS']\n%sched_list -s torchx:ray")
    text = str([m["content"] for m in msgs])
    assert "export RAY_ADDRESS=" in text and handle.rsplit("/", 1)[1] not in text
