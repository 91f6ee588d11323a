"""The notebook flow in a real ipykernel (this venv's), driven over the protocol like a front end.

- a failed ``%sched_run --wait`` is an error reply with one line naming the failed replica and its
  error, so the queued cells of a Run All are aborted;
- a Cancel click in the pane is handled while the cell blocks in ``--wait`` ("Confirm cancel?", then the
  app ends CANCELLED and the cell returns);
- ``job = %sched_run ...`` shows the view once, ``%sched_run ...`` too (as the result);
- an interrupt binds the Job anyway, says the truth about a local app, and ``%sched_job`` gets it back.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

from nbhelpers import py, wait_for
from test_kernel import alive, execute, kernel, run_ok  # noqa: F401 - the kernel fixture

GRACE = 2.0


def reply_to(kc: Any, msg_id: str, timeout: float = 60) -> Dict[str, Any]:
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply


class Iopub:
    """The iopub messages of one request (and every widget update), read as they come."""

    def __init__(self, kc: Any, msg_id: str) -> None:
        self.kc, self.msg_id = kc, msg_id
        self.seen: List[Dict[str, Any]] = []

    def pump(self) -> None:
        msg = self.kc.get_iopub_msg(timeout=30)
        # a widget update made while handling a click has the click as its parent, not the cell
        if msg["parent_header"].get("msg_id") == self.msg_id or msg["msg_type"] == "comm_msg":
            self.seen.append(msg)

    def until(self, predicate: Any, what: str, timeout: float = 60) -> Any:
        def step() -> Any:
            self.pump()
            return predicate()

        return wait_for(step, timeout, what)

    def idle(self) -> bool:
        return any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in self.seen)

    def of_type(self, *types: str) -> List[Dict[str, Any]]:
        return [m for m in self.seen if m["msg_type"] in types]


def test_failed_wait_raises_one_line_and_stops_run_all(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.interactive = False")
    failing = kc.execute(f"job = %sched_run --wait {py('import time; d = dict(x=1); time.sleep(0.2); d[chr(121)]')}")
    queued = kc.execute("print('the next cell ran')")
    reply = reply_to(kc, failing)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "JobFailed"
    traceback = reply["content"]["traceback"]
    assert len(traceback) == 1, traceback
    assert "python/0 FAILED (exit code 1): KeyError: 'y'" in traceback[0] and " on local_cwd]" in traceback[0]
    assert "://" not in traceback[0]  # JupyterLab would link half of a handle
    assert reply_to(kc, queued)["content"]["status"] == "aborted"  # Run All stops here
    # the Job is bound all the same, and wait() keeps returning the status without raising
    assert run_ok(kc, "print(job.wait().state, type(job).__name__)").split() == ["FAILED", "Job"]
    reply, msgs = execute(kc, "job.result()")
    assert reply["content"]["ename"] == "JobFailed"


def test_cancel_click_is_handled_while_the_cell_waits(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.status_interval = 0.2")
    msg_id = kc.execute(f"job = %sched_run --wait --cfg cancel_grace={GRACE} utils.sh 'echo waiting-job; sleep 120'")
    io = Iopub(kc, msg_id)

    def cancel_button() -> Optional[str]:
        for m in io.of_type("comm_open"):
            state = m["content"]["data"].get("state", {})
            if state.get("_model_name") == "ButtonModel" and state.get("description") == "Cancel":
                return str(m["content"]["comm_id"])
        return None

    comm_id = io.until(cancel_button, "the status pane's Cancel button")
    io.until(lambda: any("waiting-job" in str(m["content"]) for m in io.of_type("comm_msg")), "the job's output")

    def click() -> None:
        content = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
        kc.shell_channel.send(kc.session.msg("comm_msg", content))

    def descriptions() -> List[str]:
        return [
            m["content"]["data"]["state"]["description"]
            for m in io.of_type("comm_msg")
            if m["content"]["comm_id"] == comm_id and "description" in m["content"]["data"].get("state", {})
        ]

    click()
    io.until(lambda: "Confirm cancel?" in descriptions(), "the Cancel button to ask for confirmation", 30)
    assert not io.idle()  # the cell is still waiting: the click was handled beside it
    clicked = time.monotonic()
    click()
    reply = reply_to(kc, msg_id, timeout=GRACE + 30)
    took = time.monotonic() - clicked
    print(f"cancel click -> cell returned in {took:.2f} s (grace {GRACE} s)")
    assert reply["content"]["status"] == "ok"  # cancelled from this kernel: not a failure
    assert run_ok(kc, "print(job.state)").strip() == "CANCELLED"


def test_assigned_run_shows_the_view_once(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    _, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched")
    reply, msgs = execute(kc, "job = %sched_run utils.sh 'echo shown; sleep 30'")
    assert reply["content"]["status"] == "ok"
    shown = [m for m in msgs if m["msg_type"] in ("display_data", "execute_result")]
    assert len(shown) == 1 and "application/vnd.jupyter.widget-view+json" in shown[0]["content"]["data"]
    reply, msgs = execute(kc, "%sched_run utils.sh 'echo shown; sleep 30'")
    shown = [m for m in msgs if m["msg_type"] in ("display_data", "execute_result")]
    assert len(shown) == 1 and "application/vnd.jupyter.widget-view+json" in shown[0]["content"]["data"]
    # displayed by the assignment, then named on the cell's last line: one pane, then one line
    reply, msgs = execute(kc, "job3 = %sched_run utils.sh 'echo shown; sleep 30'\njob3")
    shown = [m for m in msgs if m["msg_type"] in ("display_data", "execute_result")]
    assert [("application/vnd.jupyter.widget-view+json" in m["content"]["data"]) for m in shown] == [True, False]
    assert "launched" in shown[1]["content"]["data"]["text/plain"]
    reply, msgs = execute(kc, "x = 1\njob2 = %sched_run --quiet utils.sh 'echo quiet'")
    assert not [m for m in msgs if m["msg_type"] in ("display_data", "execute_result")]
    run_ok(kc, "from jupyter_sched.notebook.extension import loaded\n"
               "for j in loaded(get_ipython()).session.jobs.values(): j.cancel()")


def test_interrupt_binds_the_job_and_sched_job_gets_it_back(kernel: Tuple[Any, Any]) -> None:  # noqa: F811
    km, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.interactive = False")
    msg_id = kc.execute("job = %sched_run --wait utils.sh 'echo started; sleep 120'")
    io = Iopub(kc, msg_id)
    io.until(lambda: any("launched" in m["content"].get("text", "") for m in io.of_type("stream")), "the launch")
    km.interrupt_kernel()
    reply = reply_to(kc, msg_id)
    assert reply["content"]["ename"] == "Detached"
    io.until(io.idle, "the cell to end")
    text = "".join(m["content"]["text"] for m in io.of_type("stream"))
    assert "ends its replicas" in text and "`job` holds it" in text and "%sched_job" in text
    assert "://" not in text  # the app by its id: JupyterLab half-links a handle in stream output
    out = run_ok(
        kc, "again = %sched_job $job.handle\nprint(again is job, job.state, job.status.roles[0].replicas[0].pid)"
    )
    same, state, pid = out.split()
    assert same == "True" and state == "RUNNING" and alive(int(pid))
    run_ok(kc, "job.cancel(); job.wait()")
    wait_for(lambda: not alive(int(pid)), 30, "the replica to end")
