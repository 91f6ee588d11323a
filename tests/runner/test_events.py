"""The runner as a package (``runner.api``, ``runner.events``) and its per-call events, over real local apps."""

from __future__ import annotations

import json
import logging
from typing import Dict, List, Optional

import pytest

import jupyter_sched.runner
import jupyter_sched.runner.api
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.runner.events import LOGGER_NAME, RunnerEvent, log_event
from jupyter_sched.schedulers import get_scheduler_factories
from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    Role,
    UnknownSchedulerException,
    parse_app_handle,
)


def _events(caplog: pytest.LogCaptureFixture) -> List[RunnerEvent]:
    return [r.event for r in caplog.records if r.name == LOGGER_NAME]  # type: ignore[attr-defined]


def test_package_keeps_every_name_importable_from_runner() -> None:
    assert jupyter_sched.runner.Runner is jupyter_sched.runner.api.Runner
    assert jupyter_sched.runner.get_runner is jupyter_sched.runner.api.get_runner
    assert jupyter_sched.runner.api.log_event is log_event


def test_each_runner_call_is_one_event_with_scheduler_session_app_and_duration(
    runner: Runner, log_dir: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    app = AppDef("evt", [Role("main", "img0", entrypoint="sh", args=["-c", "echo hi"])])
    handle = runner.run(app, "local_cwd", {"log_dir": log_dir})
    _, _, app_id = parse_app_handle(handle)
    status = runner.wait(handle)
    assert status is not None and status.state == AppState.SUCCEEDED
    runner.status(handle)
    runner.describe(handle)
    list(runner.log_lines(handle, "main"))
    runner.list("local_cwd")
    runner.cancel(handle)

    events = _events(caplog)
    by_api: Dict[str, List[RunnerEvent]] = {}
    for ev in events:
        by_api.setdefault(ev.api, []).append(ev)
    # wait polls status internally: that is still one "wait" event, not one per poll
    assert {k: len(v) for k, v in by_api.items()} == {
        "dryrun": 1, "schedule": 1, "run": 1, "wait": 1, "status": 1,
        "describe": 1, "log_lines": 1, "list": 1, "cancel": 1,
    }
    for ev in events:
        assert ev.scheduler == "local_cwd" and ev.session == "test"
        assert ev.raw_exception is None
        assert ev.wall_time_usec is not None and ev.wall_time_usec >= 0
        assert ev.cpu_time_usec is not None and ev.start_epoch_time_usec is not None
        if ev.api not in ("dryrun", "list"):  # the id exists once the scheduler has answered
            assert ev.app_id == app_id, ev
    run = by_api["run"][0]
    assert run.app_image == "img0" and json.loads(run.runcfg or "{}") == {"log_dir": log_dir}
    # the message is the event as JSON, so a plain text handler keeps every field
    message = next(r.getMessage() for r in caplog.records if r.name == LOGGER_NAME)
    assert RunnerEvent.deserialize(message) == events[0]


def test_a_call_that_raises_is_recorded_with_its_exception(
    runner: Runner, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    with pytest.raises(UnknownSchedulerException):
        runner.status("nosuch://test/app-1")
    (ev,) = _events(caplog)
    assert (ev.api, ev.scheduler, ev.app_id) == ("status", "nosuch", "app-1")
    assert ev.raw_exception is not None and "UnknownSchedulerException" in ev.raw_exception


def test_nothing_is_logged_unless_the_events_logger_listens_at_debug(
    runner: Runner, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    runner.status("local_cwd://test/nope-1")
    assert _events(caplog) == []


def test_get_runner_takes_its_schedulers_from_runner_api(monkeypatch: pytest.MonkeyPatch) -> None:
    # code written for TorchX swaps the registry by patching runner.api.get_scheduler_factories
    only_local = {"local_cwd": get_scheduler_factories()["local_cwd"]}
    monkeypatch.setattr(jupyter_sched.runner.api, "get_scheduler_factories", lambda: only_local)
    with get_runner("test") as runner:
        assert runner.scheduler_backends() == ["local_cwd"]



class _NoUsage(Scheduler[None]):
    """A scheduler written for TorchX's interface: it knows its apps but cannot measure their usage."""

    def __init__(self, session_name: str, **kwargs: object) -> None:
        super().__init__("plain", session_name)

    def schedule(self, dryrun_info: AppDryRunInfo[None]) -> str:
        return "app-1"

    def _submit_dryrun(self, app: AppDef, cfg: object) -> AppDryRunInfo[None]:
        return AppDryRunInfo(None, repr)

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        return DescribeAppResponse(app_id=app_id, state=AppState.RUNNING)

    def list(self) -> List[ListAppResponse]:
        return []

    def _cancel_existing(self, app_id: str) -> None:
        pass


def test_usage_on_a_scheduler_that_cannot_measure_names_the_scheduler(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    with Runner("test", {"plain": _NoUsage}) as runner:
        with pytest.raises(ValueError, match="the plain scheduler does not report resource usage"):
            runner.usage("plain://test/app-1")
    (ev,) = _events(caplog)
    assert (ev.api, ev.scheduler, ev.app_id) == ("usage", "plain", "app-1") and "ValueError" in (ev.raw_exception or "")


def test_an_event_shows_no_secret_of_the_run_options_or_the_exception(
    runner: Runner, caplog: pytest.LogCaptureFixture
) -> None:
    """The logged event (message and ``record.event``) is masked by the one rule; the call itself gets the
    real values."""
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    app = AppDef("evt", [Role("main", "img0", entrypoint="true")])
    info = runner.dryrun(app, "local_docker", {"env": {"API_TOKEN": "Zq7-secret-Qx9", "LR": "0.1"}})
    assert info.request.containers[0].env["API_TOKEN"] == "Zq7-secret-Qx9"  # what runs is untouched
    with pytest.raises(ValueError, match="pull"):
        runner.dryrun(app, "local_docker", {"env": {"API_TOKEN": "Zq7-secret-Qx9"}, "pull": "sometimes"})
    ok, failed = _events(caplog)
    assert json.loads(ok.runcfg or "{}") == {"env": {"API_TOKEN": "********", "LR": "0.1"}}
    assert failed.raw_exception is not None and "API_TOKEN" in failed.raw_exception
    for record in caplog.records:
        assert "Zq7" not in record.getMessage() and "Zq7" not in repr(record.event)  # type: ignore[attr-defined]
