"""A docker submit whose submitter is SIGKILLed half-way is undone by the next process that reads the app.

The probe: a process submits 4-replica apps in a loop on a real engine and is SIGKILLed, round after round
(seeded: the seed is in every failure message), at a random instant soon after the engine shows one of its
containers created (the window between a submit's creates and its starts, where a kill leaves containers
that never start). Then this process, as the next reader, looks through ``list``, ``describe`` or
``cancel`` (in turn). Every app with a container that never started reads FAILED "submit interrupted" from
each of them, with no replica container left (only its record, itself never started, until ``cleanup``
removes it); every other app has all four replicas started (a start the killed submitter had sent may
still complete in the engine: then the submit had, in effect, finished); nothing reads SUBMITTED.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import textwrap
import time
from typing import Any, Dict, List

import docker
import pytest

from jupyter_sched.schedulers.common.process_identity import this_process
from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.schedulers.docker.engine import ensure_network
from jupyter_sched.schedulers.docker.labels import LABEL_SUBMITTER
from jupyter_sched.schedulers.docker.launch import make_metrics_dirs
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role

from ..helpers import PY
from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    remove_session,
    session_name_fixture,
)

pytestmark = pytest.mark.timeout(900)

ROUNDS = 26
SUBMITTER = textwrap.dedent(
    """
    import sys
    from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
    from jupyter_sched.specs import AppDef, Role
    s = DockerScheduler(sys.argv[1])
    s.list()  # connected to the engine
    print("ready", flush=True)
    while True:
        s.submit(AppDef("quad", [Role("main", sys.argv[2], entrypoint="sleep", args=["60"], num_replicas=4)]), {})
    """
)


def _containers(api: Any, session: str) -> List[Dict[str, Any]]:
    return list(api.containers(all=True, filters={"label": [f"jupyter_sched.session={session}"]}))


def _settled(api: Any, session: str) -> List[Dict[str, Any]]:
    """The session's containers once the engine has finished what the killed submitter sent it: a create
    request in flight when the client died still completes, a moment after the kill (seen in CI: an app
    listed that the snapshot taken at once did not have). Listed until two readings half a second apart
    agree."""
    rows = _containers(api, session)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.5)
        again = _containers(api, session)
        if {r["Id"] for r in again} == {r["Id"] for r in rows}:
            return again
        rows = again
    return rows


def _by_app(rows: List[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    apps: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        apps.setdefault((row.get("Labels") or {}).get("jupyter_sched.app-id", ""), []).append(row)
    return apps


def _kill_mid_submit(api: Any, session: str, rng: random.Random, where: str) -> None:
    """Starts the submitter; SIGKILLs it a random instant (0 to 3 s) after a container it created has
    been seen that has not started yet."""
    known = {row["Id"] for row in _containers(api, session)}
    owner = subprocess.Popen([PY, "-c", SUBMITTER, session, BUSYBOX], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None and owner.stdout.readline() == "ready\n", where
        deadline = time.monotonic() + 60
        while not any(r["Id"] not in known and r["State"] == "created" for r in _containers(api, session)):
            assert owner.poll() is None and time.monotonic() < deadline, f"{where}: no container was created"
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 3.0))
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()


def test_a_submitter_killed_mid_submit_leaves_apps_failed_submit_interrupted_and_no_replica(
    docker_sched: DockerScheduler, session_name: str
) -> None:
    seed = int(os.environ.get("INTERRUPTED_SUBMIT_SEED", "20261127"))
    rng = random.Random(seed)
    client = docker.from_env()
    api = client.api
    interrupted_total = complete_total = 0
    for attempt in range(ROUNDS):
        where = f"seed {seed}, round {attempt}"
        _kill_mid_submit(api, session_name, rng, where)
        apps = sorted(_by_app(_settled(api, session_name)))
        reader = DockerScheduler(session_name)  # another process's view: nothing cached
        try:
            way = attempt % 3  # which reader sees the apps first: list, cancel or describe
            for app_id in apps:
                if way == 1:
                    reader.cancel(app_id)
                elif way == 2:
                    assert reader.describe(app_id) is not None, (where, app_id)
            listed = {a.app_id: a.state for a in reader.list()}
            assert set(listed) == set(apps) and AppState.SUBMITTED not in listed.values(), (where, listed)
            for app_id in apps:
                desc = reader.describe(app_id)
                assert desc is not None, (where, app_id)
                left = _by_app(_containers(api, session_name)).get(app_id, [])
                if desc.state != AppState.FAILED:  # its submit had started every replica: it runs on
                    assert desc.state in (AppState.RUNNING, AppState.SUCCEEDED, AppState.CANCELLED), (where, desc)
                    replica_states = [r["State"] for r in left if "jupyter_sched.replica-id" in r["Labels"]]
                    assert len(replica_states) == 4 and "created" not in replica_states, (where, left)
                    complete_total += 1
                    continue
                assert listed[app_id] == AppState.FAILED, (where, app_id, listed)
                assert desc.msg.startswith("submit interrupted: process "), (where, desc.msg)
                replicas = [r for rs in desc.roles_statuses for r in rs.replicas]
                assert [r.id for r in replicas] == [0, 1, 2, 3], (where, replicas)
                for r in replicas:
                    assert r.state == AppState.FAILED and "submit interrupted" in r.structured_error_msg, (where, r)
                assert [r["Names"][0] for r in left] == [f"/{app_id}-interrupted"], (where, left)
                assert not os.path.exists(os.path.join(default_log_dir(), session_name, app_id)), where
                assert left[0]["State"] == "created" and "jupyter_sched.replica-id" not in left[0]["Labels"]
                assert reader.cleanup(app_id) == 1
                assert reader.describe(app_id) is None
                assert app_id not in _by_app(_containers(api, session_name)), where
                interrupted_total += 1
        finally:
            reader.close()
        remove_session(session_name)
    client.close()
    print(f"seed {seed}: {ROUNDS} kills, {interrupted_total} apps interrupted, {complete_total} complete")
    assert interrupted_total > 0, f"seed {seed}: no kill landed between a create and a start; the probe proved nothing"


def test_containers_of_a_submit_still_under_way_or_from_another_host_are_left_alone(
    docker_sched: DockerScheduler, session_name: str
) -> None:
    """Created and not started is also what a submit looks like between its creates and its starts: while
    the submitter lives (here, this very process), or when it ran on another host and cannot be checked
    from here, the app is SUBMITTED and its containers stay."""
    client = docker.from_env()
    try:
        for submitter in (this_process(), "another-host.example/1/1"):
            app = AppDef("held", [Role("main", BUSYBOX, entrypoint="sleep", args=["60"], num_replicas=2)])
            job = docker_sched.submit_dryrun(app, {}).request
            network = ensure_network(client, job.network)
            make_metrics_dirs(job)  # the bind mount's source, as a submit makes it first
            for container in job.containers:  # created as a submit creates them, and not started
                kwargs = {**container.create_kwargs(), "network": network}
                kwargs["labels"] = {**container.labels, LABEL_SUBMITTER: submitter}
                client.containers.create(container.image, container.command, **kwargs)
            ids = sorted(r["Id"] for r in _by_app(_containers(client.api, session_name))[job.app_id])
            listed = {a.app_id: a.state for a in docker_sched.list()}
            desc = docker_sched.describe(job.app_id)
            assert listed[job.app_id] == AppState.SUBMITTED and desc is not None, (submitter, listed)
            assert desc.state == AppState.SUBMITTED, (submitter, desc)
            assert sorted(r["Id"] for r in _by_app(_containers(client.api, session_name))[job.app_id]) == ids
            assert len(ids) == 2
    finally:
        client.close()
