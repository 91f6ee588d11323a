"""The jobs list's order, sweep groups, filters and pages (pure functions of the server extension)."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from jupyter_sched.frontend.jobs.sweep_names import sweep_of
from jupyter_sched.server import rows
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus


def row(handle: str, state: str = "SUCCEEDED", started: float = 0.0, name: str = "", **extra: Any) -> Dict[str, Any]:
    name = name or handle
    return {"handle": handle, "name": name, "state": state, "started": started or None, "seen": 1.0,
            "scheduler": "local_cwd", "session": "default", "sweep": sweep_of(name), "ended": None,
            "notebook": None, **extra}  # fmt: skip


def test_running_first_then_newest_first_and_a_sweep_is_one_entry_at_its_first_run() -> None:
    sweep = "s-b3k2x9q0d1xyz"
    entries = rows.group([
        row("old", started=10), row("new", started=30), row("live", state="RUNNING", started=5),
        row("r0", name=f"{sweep}-000", started=20), row("r1", name=f"{sweep}-001", started=25, state="FAILED"),
        row("r2", name=f"{sweep}-002", state="PENDING"),
        row("lonely", name="t-b3k2x9q0d1xyz-000", started=1),
    ])  # fmt: skip
    assert [e["handle"] for e in entries] == ["live", f"sweep:{sweep}", "new", "old", "lonely"]
    group = entries[1]
    assert group["kind"] == "sweep" and group["state"] == "RUNNING" and group["running"] == 1
    assert group["counts"] == {"SUCCEEDED": 1, "FAILED": 1, "PENDING": 1} and group["total"] == 3
    assert [r["handle"] for r in group["runs"]] == ["r2", "r1", "r0"] and group["more"] == 0
    assert group["started"] == 20 and group["ended"] is None
    assert entries[-1]["kind"] == "job"  # a sweep of one run is that run


def test_an_ended_sweep_reads_failed_if_any_run_failed_and_keeps_a_bounded_number_of_runs() -> None:
    sweep = "s-b3k2x9q0d1xyz"
    runs = [row(f"r{i}", name=f"{sweep}-{i:03d}", started=i + 1, ended=i + 2) for i in range(50)]
    runs[7]["state"] = "FAILED"
    (entry,) = rows.group(runs, runs_per_sweep=5)
    assert entry["state"] == "FAILED" and entry["ended"] == 51 and entry["total"] == 50
    assert len(entry["runs"]) == 5 and entry["more"] == 45


def test_filters_and_pages() -> None:
    data = [row("a", scheduler="local_docker"), row("b", state="RUNNING", notebook="x.ipynb"), row("c", state="FAILED")]
    assert [r["handle"] for r in data if rows.matches(r, {"state": "running"})] == ["b"]
    assert [r["handle"] for r in data if rows.matches(r, {"state": "ended"})] == ["a", "c"]
    assert [r["handle"] for r in data if rows.matches(r, {"state": "FAILED"})] == ["c"]
    assert [r["handle"] for r in data if rows.matches(r, {"scheduler": "local_docker"})] == ["a"]
    assert [r["handle"] for r in data if rows.matches(r, {"notebook": "x.ipynb"})] == ["b"]
    page = rows.page(rows.group(data), offset=1, limit=1)
    assert page["total"] == 3 and page["running"] == 1 and len(page["jobs"]) == 1
    assert rows.check_query({"limit": "7", "state": "ended"}) == {
        "offset": 0, "limit": 7,
        "filters": {"notebook": None, "session": None, "scheduler": None, "sweep": None, "state": "ended"},
    }  # fmt: skip
    for bad in ({"limit": "0"}, {"limit": "501"}, {"offset": "-2"}, {"state": "done"}, {"offset": "1.5"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            rows.check_query(bad)


def test_how_an_app_ended_in_one_line() -> None:
    def status(state: AppState, *reps: ReplicaStatus) -> AppStatus:
        return AppStatus(state, roles=[RoleStatus("trainer", list(reps))])

    ok = ReplicaStatus(0, AppState.SUCCEEDED, "trainer", "h", exit_code=0, started=5.0, finished=9.0)
    bad = ReplicaStatus(1, AppState.FAILED, "trainer", "h", exit_code=1, started=4.0, finished=7.0)
    assert rows.reason("train", status(AppState.FAILED, ok, bad)) == "train FAILED: trainer/1 exit code 1"
    assert rows.reason("train", status(AppState.SUCCEEDED, ok)) == "train SUCCEEDED"
    assert rows.reason("train", status(AppState.CANCELLED, ok)) == "train CANCELLED"
    assert rows.reason("train", status(AppState.RUNNING, ok)) == ""
    # explained as the panes explain it (frontend/reasons): out of memory, an owner's or a kernel's exit
    oom = ReplicaStatus(1, AppState.FAILED, "trainer", "h", exit_code=-9, msg="killed: out of memory (limit 128 MiB)")
    oom_text = "train FAILED: trainer/1 out of memory (limit 128 MiB)"
    assert rows.reason("train", status(AppState.FAILED, ok, oom)) == oom_text
    stopped = ReplicaStatus(0, AppState.FAILED, "trainer", "h", exit_code=-15, started=4.0, finished=7.0)
    orphan = AppStatus(AppState.FAILED, msg="owner process 42 exited; its replicas were stopped",
                       roles=[RoleStatus("trainer", [stopped])])  # fmt: skip
    assert rows.reason("train", orphan) == "train FAILED: trainer/0 stopped when its owner, process 42, exited"
    assert rows.reason("train", orphan, kernel_pid=42).startswith(
        "train FAILED: trainer/0 stopped when the kernel that launched it (process 42) was restarted or shut down"
    )
    assert rows.times(status(AppState.FAILED, ok, bad)) == {"started": 4.0, "ended": 9.0}
    assert rows.times(status(AppState.RUNNING, ok)) == {"started": 5.0, "ended": None}
