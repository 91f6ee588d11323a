"""The one model of a job and a jobs list (jupyter_sched.frontend.jobs): rows, order, grouping, listing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.frontend.jobs.listing import Lister
from jupyter_sched.frontend.jobs.order import group, ordered, sort_key
from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow, app_span, job_row, sweep_state
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.specs import AppDef, AppState, AppStatus, ReplicaStatus, Role, RoleStatus

SWEEP = "train-sweep-b3k2x9q0d1xyz"


def status(state: AppState, *reps: ReplicaStatus, msg: str = "") -> AppStatus:
    return AppStatus(state=state, msg=msg, roles=[RoleStatus("trainer", list(reps))])


def rep(k: int, state: AppState, started: Optional[float], finished: Optional[float] = None,
        code: Optional[int] = None) -> ReplicaStatus:  # fmt: skip
    return ReplicaStatus(id=k, state=state, role="trainer", hostname="h", started=started, finished=finished,
                         exit_code=code)  # fmt: skip


def row(name: str, state: AppState, st_: Optional[AppStatus] = None, seen: float = 0.0, handle: str = "") -> JobRow:
    app_id = name + "-x1"
    return job_row(handle or f"local_cwd://default/{app_id}", st_, app_id=app_id, name=name, scheduler="local_cwd",
                   session="default", listed_state=state, seen=seen)  # fmt: skip


def test_a_row_says_what_its_status_says_once() -> None:
    failed = status(AppState.FAILED, rep(0, AppState.SUCCEEDED, 4.0, 6.0, 0), rep(1, AppState.FAILED, 5.0, 9.0, 1))
    r = row("train", AppState.RUNNING, failed)
    assert (r.state, r.running, r.started, r.ended, r.span) == ("FAILED", False, 4.0, 9.0, 5.0)
    assert (r.replicas, r.replicas_running, r.label, r.sweep) == (2, 0, "train", None)
    assert r.reason == "train FAILED: trainer/1 exit code 1"
    running = row("train", AppState.RUNNING, status(AppState.RUNNING, rep(0, AppState.RUNNING, 5.0)))
    assert (running.running, running.ended, running.span, running.replicas_running, running.reason) == (
        True, None, None, 1, ""
    )  # fmt: skip
    unknown = row("train", AppState.PENDING)  # no status read: the listing's state
    assert (unknown.state, unknown.running, unknown.started) == ("PENDING", True, None)


def test_a_sweep_run_is_labelled_by_its_index_and_its_sweep_by_its_given_name() -> None:
    r = row(f"{SWEEP}-007", AppState.SUCCEEDED)
    assert (r.label, r.sweep, r.sweep_label) == ("run 007", SWEEP, "train-sweep")
    (entry,) = group([r, row(f"{SWEEP}-008", AppState.RUNNING)])
    assert isinstance(entry, SweepRow)
    assert (entry.label, entry.state, entry.counts, entry.runs_running) == (
        "train-sweep", "RUNNING", {"SUCCEEDED": 1, "RUNNING": 1}, 1
    )  # fmt: skip


def test_a_sweep_names_its_one_failed_run_for_a_notifications_open() -> None:
    """Issue 35, point 7: Open on a sweep's notification goes to its failed run, or to the sweep when several
    (or none) failed; which run that is, the model says (the extension derives nothing)."""
    runs = [row(f"{SWEEP}-{i:03d}", state, seen=float(i)) for i, state in
            enumerate([AppState.FAILED, AppState.SUCCEEDED, AppState.SUCCEEDED])]  # fmt: skip
    (one,) = group(runs)
    assert isinstance(one, SweepRow) and one.failed_run == runs[0].handle
    (several,) = group(runs + [row(f"{SWEEP}-003", AppState.FAILED, seen=3.0)])
    assert isinstance(several, SweepRow) and several.failed_run is None
    (none,) = group(runs[1:])
    assert isinstance(none, SweepRow) and none.failed_run is None


def test_names_and_reasons_are_masked_when_the_row_is_made() -> None:
    bad = ReplicaStatus(id=0, state=AppState.FAILED, role="t", hostname="h", exit_code=1,
                        structured_error_msg='{"message": "WANDB_API_KEY=sk-abcdef123456 rejected"}')  # fmt: skip
    r = row("train", AppState.FAILED, AppStatus(AppState.FAILED, roles=[RoleStatus("t", [bad])]))
    assert "sk-abcdef" not in r.reason and "rejected" in r.reason


def test_the_span_of_an_app_runs_to_now_until_every_replica_has_ended() -> None:
    assert app_span(None, 10.0) is None
    assert app_span(status(AppState.RUNNING, rep(0, AppState.RUNNING, 4.0)), 10.0) == 6.0
    done = status(AppState.SUCCEEDED, rep(0, AppState.SUCCEEDED, 4.0, 7.0), rep(1, AppState.SUCCEEDED, 5.0, 8.0))
    assert app_span(done, 10.0) == 4.0
    lost = status(AppState.FAILED, rep(0, AppState.FAILED, 4.0, None))
    assert app_span(lost, 10.0) == 6.0


@pytest.mark.parametrize("states, want", [
    (["SUCCEEDED", "RUNNING"], "RUNNING"), (["SUCCEEDED", "CANCELLED", "FAILED"], "FAILED"),
    (["SUCCEEDED", "CANCELLED"], "CANCELLED"), (["SUCCEEDED"], "SUCCEEDED"), (["PENDING", "FAILED"], "RUNNING"),
])  # fmt: skip
def test_a_sweeps_state(states: List[str], want: str) -> None:
    assert sweep_state(states) == want


STATES = [AppState.RUNNING, AppState.PENDING, AppState.SUCCEEDED, AppState.FAILED, AppState.CANCELLED]


@st.composite
def rows(draw: Any) -> List[JobRow]:
    out = []
    for i in range(draw(st.integers(0, 25))):
        sweep = draw(st.sampled_from([None, SWEEP, "eval-sweep-a00000000000b"]))
        name = f"{sweep}-{i:03d}" if sweep else f"app{draw(st.integers(0, 3))}"
        state = draw(st.sampled_from(STATES))
        started = draw(st.one_of(st.none(), st.floats(0, 100).map(round)))
        reps = [rep(0, state, started, None if not state.is_terminal or started is None else started + 1)]
        out.append(row(name, state, status(state, *reps), seen=draw(st.floats(0, 100).map(round)),
                       handle=f"local_cwd://default/{name}-{i}"))  # fmt: skip
    return out


@settings(max_examples=200, deadline=None)
@given(rows(), st.randoms())
def test_the_order_is_total_and_does_not_depend_on_the_order_listed(listed: List[JobRow], rnd: Any) -> None:
    shuffled = list(listed)
    rnd.shuffle(shuffled)
    assert ordered(shuffled) == ordered(listed)
    keys = [sort_key(r) for r in ordered(listed)]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # no two rows tie
    first_ended = next((i for i, r in enumerate(ordered(listed)) if not r.running), len(listed))
    assert all(not r.running for r in ordered(listed)[first_ended:])  # running ones first


@settings(max_examples=200, deadline=None)
@given(rows(), st.integers(1, 5))
def test_grouping_keeps_every_app_exactly_once(listed: List[JobRow], shown: int) -> None:
    entries = group(listed, runs_per_sweep=shown)
    handles: List[str] = []
    for entry in entries:
        if isinstance(entry, SweepRow):
            assert entry.total >= 2 and len(entry.runs) == min(shown, entry.total)
            assert entry.more == entry.total - len(entry.runs)
            members = ordered([r for r in listed if r.sweep == entry.sweep])
            assert entry.runs == members[:shown]
            handles += [r.handle for r in members]
        else:
            handles.append(entry.handle)
    assert sorted(handles) == sorted(r.handle for r in listed)
    assert len({e.handle for e in entries}) == len(entries)


def _sh(script: str, name: str) -> AppDef:
    return AppDef(name, roles=[Role("sh", image=".", entrypoint="sh", args=["-c", script])])


class _Counting:
    """A real Runner that counts the statuses asked (instrumentation, not a stand-in)."""

    def __init__(self, runner: Runner) -> None:
        self.runner, self.asked = runner, 0

    def list(self, scheduler: str) -> Any:
        return self.runner.list(scheduler)

    def status(self, handle: str) -> Any:
        self.asked += 1
        return self.runner.status(handle)

    def log_lines(self, *args: Any, **kwargs: Any) -> Any:
        return self.runner.log_lines(*args, **kwargs)


def test_a_scheduler_that_fails_is_a_notice_and_an_ended_apps_status_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(tmp_path / "state"))
    with get_runner("model") as real:
        ok = real.run(_sh("true", "fine"), "local_cwd")
        bad = real.run(_sh("echo 'error: loss is NaN' >&2; exit 3", "broken"), "local_cwd")
        for handle in (ok, bad):
            real.wait(handle, wait_interval=0.1)
        counting = _Counting(real)
        lister = Lister(lambda session: counting)
        listing = lister.list(["model"], ["local_cwd", "nope"])
        assert {r.handle: r.reason for r in listing.rows} == {
            ok: "fine SUCCEEDED", bad: "broken FAILED: sh/0 error: loss is NaN"
        }  # fmt: skip
        assert listing.notices == ["nope: not an installed scheduler (see `jupyter-sched builtins`)"]
        assert counting.asked == 2
        again = lister.list(["model"], ["local_cwd", "nope"])
        assert counting.asked == 2  # ended apps: their statuses are kept, not asked again
        assert [r.to_json() for r in again.rows] == [r.to_json() for r in listing.rows]
        assert again.notices == listing.notices
