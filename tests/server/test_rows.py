"""The jobs list's order, sweep groups (the front-end model's), filters and pages (the server's own)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from jupyter_sched.frontend.jobs.order import group
from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow, job_row
from jupyter_sched.server import rows
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus


def row(handle: str, state: str = "SUCCEEDED", started: float = 0.0, name: str = "", ended: Any = None,
        **extra: Any) -> JobRow:  # fmt: skip
    made = job_row(handle, None, app_id=handle, name=name or handle, scheduler="local_cwd", session="default",
                   listed_state=AppState[state], seen=1.0)  # fmt: skip
    return replace(made, started=started or None, ended=ended, **extra)


def test_running_first_then_newest_first_and_a_sweep_is_one_entry_at_its_first_run() -> None:
    sweep = "s-b3k2x9q0d1xyz"
    entries = group([
        row("old", started=10), row("new", started=30), row("live", state="RUNNING", started=5),
        row("r0", name=f"{sweep}-000", started=20), row("r1", name=f"{sweep}-001", started=25, state="FAILED"),
        row("r2", name=f"{sweep}-002", state="PENDING"),
        row("lonely", name="t-b3k2x9q0d1xyz-000", started=1),
    ])  # fmt: skip
    assert [e.handle for e in entries] == ["live", f"sweep:{sweep}", "new", "old", "lonely"]
    sweep_entry = entries[1]
    assert isinstance(sweep_entry, SweepRow)
    assert sweep_entry.state == "RUNNING" and sweep_entry.runs_running == 1 and sweep_entry.running
    assert sweep_entry.counts == {"SUCCEEDED": 1, "FAILED": 1, "PENDING": 1} and sweep_entry.total == 3
    assert [r.handle for r in sweep_entry.runs] == ["r2", "r1", "r0"] and sweep_entry.more == 0
    assert sweep_entry.started == 20 and sweep_entry.ended is None
    assert entries[-1].kind == "job"  # a sweep of one run is that run


def test_an_ended_sweep_reads_failed_if_any_run_failed_and_keeps_a_bounded_number_of_runs() -> None:
    sweep = "s-b3k2x9q0d1xyz"
    runs = [row(f"r{i}", name=f"{sweep}-{i:03d}", started=i + 1, ended=i + 2) for i in range(50)]
    runs[7] = replace(runs[7], state="FAILED")
    (entry,) = group(runs, runs_per_sweep=5)
    assert isinstance(entry, SweepRow)
    assert entry.state == "FAILED" and entry.ended == 51 and entry.total == 50
    assert len(entry.runs) == 5 and entry.more == 45


def test_filters_and_pages() -> None:
    data = [row("a", scheduler="local_docker"), row("b", state="RUNNING", notebook="x.ipynb"), row("c", state="FAILED")]
    assert [r.handle for r in data if rows.matches(r, {"state": "running"})] == ["b"]
    assert [r.handle for r in data if rows.matches(r, {"state": "ended"})] == ["a", "c"]
    assert [r.handle for r in data if rows.matches(r, {"state": "FAILED"})] == ["c"]
    assert [r.handle for r in data if rows.matches(r, {"scheduler": "local_docker"})] == ["a"]
    assert [r.handle for r in data if rows.matches(r, {"notebook": "x.ipynb"})] == ["b"]
    page = rows.page(group(data), offset=1, limit=1)
    assert page["total"] == 3 and page["running"] == 1 and len(page["jobs"]) == 1
    assert rows.check_query({"limit": "7", "state": "ended"}) == {
        "offset": 0, "limit": 7,
        "filters": {"notebook": None, "session": None, "scheduler": None, "sweep": None, "state": "ended"},
    }  # fmt: skip
    for bad in ({"limit": "0"}, {"limit": "501"}, {"offset": "-2"}, {"state": "done"}, {"offset": "1.5"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            rows.check_query(bad)


def test_how_an_app_ended_in_one_line_and_when() -> None:
    def status(state: AppState, *reps: ReplicaStatus) -> AppStatus:
        return AppStatus(state, roles=[RoleStatus("trainer", list(reps))])

    def made(st: AppStatus, kernel_pid: Any = None) -> JobRow:
        return job_row("local_cwd://default/train-1", st, app_id="train-1", name="train", scheduler="local_cwd",
                       session="default", listed_state=st.state, seen=0.0, kernel_pid=kernel_pid)  # fmt: skip

    ok = ReplicaStatus(0, AppState.SUCCEEDED, "trainer", "h", exit_code=0, started=5.0, finished=9.0)
    bad = ReplicaStatus(1, AppState.FAILED, "trainer", "h", exit_code=1, started=4.0, finished=7.0)
    assert made(status(AppState.FAILED, ok, bad)).reason == "train FAILED: trainer/1 exit code 1"
    assert made(status(AppState.SUCCEEDED, ok)).reason == "train SUCCEEDED"
    assert made(status(AppState.CANCELLED, ok)).reason == "train CANCELLED"
    assert made(status(AppState.RUNNING, ok)).reason == ""
    # explained as the panes explain it (frontend/jobs/reasons): out of memory, an owner's or a kernel's exit
    oom = ReplicaStatus(1, AppState.FAILED, "trainer", "h", exit_code=-9, msg="killed: out of memory (limit 128 MiB)")
    oom_text = "train FAILED: trainer/1 out of memory (limit 128 MiB)"
    assert made(status(AppState.FAILED, ok, oom)).reason == oom_text
    stopped = ReplicaStatus(0, AppState.FAILED, "trainer", "h", exit_code=-15, started=4.0, finished=7.0)
    orphan = AppStatus(AppState.FAILED, msg="owner process 42 exited; its replicas were stopped",
                       roles=[RoleStatus("trainer", [stopped])])  # fmt: skip
    assert made(orphan).reason == "train FAILED: trainer/0 stopped when its owner, process 42, exited"
    assert made(orphan, kernel_pid=42).reason.startswith(
        "train FAILED: trainer/0 stopped when the kernel that launched it (process 42) was restarted or shut down"
    )
    failed = made(status(AppState.FAILED, ok, bad))
    assert (failed.started, failed.ended, failed.span) == (4.0, 9.0, 5.0)
    running = made(status(AppState.RUNNING, ok))
    assert (running.started, running.ended) == (5.0, None)
