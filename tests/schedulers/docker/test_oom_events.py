"""An out-of-memory kill the engine's ``OOMKilled`` flag missed is read from its event log (``docker.oom``).

The flag's race (the runtime's exit handled before its OOM notice) cannot be made to happen on demand, so
the last test clears the flag in a real kill's inspect: that one field is the fault; the engine, the
container, its kill and its event are real."""

from __future__ import annotations

import pytest

from jupyter_sched.schedulers.docker.labels import LABEL_APP_ID
from jupyter_sched.schedulers.docker.oom import OomEvents
from jupyter_sched.schedulers.docker.record.describe import describe_response
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role, resource

from ..helpers import wait_until
from .fixtures import (  # noqa: F401 - fixtures
    PYTHON,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    session_name_fixture,
)

pytestmark = pytest.mark.timeout(180)

BURST = "b = b'x' * (200 << 20)\n"  # over a 64 MiB limit at once


def _app(code: str, name: str) -> AppDef:
    return AppDef(name, [Role("main", PYTHON, entrypoint="python3", args=["-c", code],
                              resource=resource(cpu=1, gpu=0, memMB=64))])


def _ended(docker_sched: DockerScheduler, app_id: str) -> dict:
    wait_until(lambda: docker_sched.describe(app_id).state.is_terminal, 90, "the end")
    api = docker_sched._docker().api  # noqa: SLF001 - the engine client the scheduler uses
    [row] = api.containers(all=True, filters={"label": [f"{LABEL_APP_ID}={app_id}"]})
    return api.inspect_container(row["Id"])


def test_a_real_oom_kill_has_its_event_and_a_plain_sigkill_has_none(docker_sched: DockerScheduler) -> None:
    api = docker_sched._docker().api  # noqa: SLF001
    oom = _ended(docker_sched, docker_sched.submit(_app(BURST, "burst"), {}))
    assert oom["State"]["ExitCode"] == 137
    events = OomEvents()
    started, finished = (_stamp(oom["State"][k]) for k in ("StartedAt", "FinishedAt"))
    assert events.killed(api, oom["Id"], started, finished)

    # SIGKILLed from outside under the same limit: 137, no OOM
    killed_id = docker_sched.submit(_app("import time; time.sleep(600)", "sigkill"), {})
    wait_until(lambda: docker_sched.describe(killed_id).state == AppState.RUNNING, 60, "the start")
    [row] = api.containers(all=True, filters={"label": [f"{LABEL_APP_ID}={killed_id}"]})
    api.kill(row["Id"])
    plain = _ended(docker_sched, killed_id)
    assert plain["State"]["ExitCode"] == 137 and not plain["State"]["OOMKilled"]
    started, finished = (_stamp(plain["State"][k]) for k in ("StartedAt", "FinishedAt"))
    assert not events.killed(api, plain["Id"], started, finished)
    # asked inside the late-event window, the "no" waited for the window to close, so it is kept
    assert events._known[plain["Id"]] is False  # noqa: SLF001 - the memo is what the next describe reads
    desc = docker_sched.describe(killed_id)
    assert "out of memory" not in (desc.msg or "")


def test_a_kill_whose_flag_was_lost_still_reads_out_of_memory(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(_app(BURST, "lostflag"), {})
    info = _ended(docker_sched, app_id)
    lost = {**info, "State": {**info["State"], "OOMKilled": False}}  # the engine's race, made by hand
    api = docker_sched._docker().api  # noqa: SLF001
    rows = api.containers(all=True, filters={"label": [f"{LABEL_APP_ID}={app_id}"]})
    bare = describe_response(app_id, rows, [lost], lambda *a: None)
    assert "out of memory" not in bare.roles_statuses[0].replicas[0].structured_error_msg
    marked = OomEvents().marked(api, lost, cancelled=False)
    assert marked["State"]["OOMKilled"] and not lost["State"]["OOMKilled"]
    rep = describe_response(app_id, rows, [marked], lambda *a: None).roles_statuses[0].replicas[0]
    assert rep.structured_error_msg == "killed: out of memory (limit 64 MiB, peak unknown)"
    # a cancelled app's SIGKILL is the cancel's: the event log is not asked
    assert OomEvents().marked(None, lost, cancelled=True) is lost


def _stamp(text: str) -> float:
    from jupyter_sched.schedulers.docker.record.state import parse_time

    stamp = parse_time(text)
    assert stamp is not None
    return stamp
