"""The docker backend's metrics directory on a real engine: each container gets the app's directory on this
machine bind-mounted (``JUPYTER_SCHED_METRICS_DIR`` names it), what a replica writes there is read here
through ``metrics_dir``, whatever user the container runs as, and ``cleanup`` removes it.

The test images lack jupyter_sched, so a shell writes the documented record format, as any program may.
"""

from __future__ import annotations

import os
import stat

from jupyter_sched.frontend.jobs.metrics import read_all
from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role

from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    session_name_fixture,
)
from .test_scheduler import wait_done

WRITE_RECORDS = r"""
f="$JUPYTER_SCHED_METRICS_DIR/main.$JUPYTER_SCHED_REPLICA_ID.jsonl"
w="sh$JUPYTER_SCHED_REPLICA_ID"
for i in 0 1 2; do
  echo "{\"v\":1,\"w\":\"$w\",\"seq\":$i,\"t\":$(date +%s),\"step\":$i,\"metrics\":{\"loss\":0.$((9 - i))}}" >> "$f"
done
id -u
"""


def test_two_replicas_write_into_the_mounted_directory_and_cleanup_removes_it(
    docker_sched: DockerScheduler, session_name: str
) -> None:
    """Replica 0 runs as root (the image's user), replica 1 as an unprivileged uid with no account on the
    host: both can write into the directory, and this process reads both replicas' records."""
    info = docker_sched.submit_dryrun(
        AppDef("m", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", WRITE_RECORDS], num_replicas=2)]), {}
    )
    info.request.containers[1].kwargs["user"] = "4321:4321"  # as a pre_proc hook may set it
    app_id = docker_sched.schedule(info)
    desc = wait_done(docker_sched, app_id)
    assert desc.state == AppState.SUCCEEDED, desc
    directory = docker_sched.metrics_dir(app_id)
    assert directory == os.path.join(default_log_dir(), session_name, app_id, "metrics")
    assert stat.S_IMODE(os.stat(os.path.dirname(directory)).st_mode) == 0o700, "the app's directory is ours alone"
    got = {(r.role, r.replica): [(x.step, x.metrics) for x in r.records] for r in read_all(directory)}
    want = [(0, {"loss": 0.9}), (1, {"loss": 0.8}), (2, {"loss": 0.7})]
    assert got == {("main", 0): want, ("main", 1): want}
    assert os.stat(os.path.join(directory, "main.1.jsonl")).st_uid == 4321, "replica 1 wrote as its own user"
    # a new scheduler (another process) finds the directory from the containers' labels
    other = DockerScheduler(session_name)
    try:
        assert other.metrics_dir(app_id) == directory
    finally:
        other.close()
    assert docker_sched.cleanup(app_id) == 2
    assert not os.path.exists(directory) and not os.path.exists(os.path.dirname(directory))
    assert docker_sched.metrics_dir(app_id) is None


def test_a_failed_submit_leaves_no_metrics_directory(docker_sched: DockerScheduler, session_name: str) -> None:
    info = docker_sched.submit_dryrun(AppDef("m", [Role("main", BUSYBOX, entrypoint="true")]), {})
    info.request.containers[0].kwargs["mem_limit"] = "not-a-size"  # the engine refuses to create it
    app_dir = os.path.join(default_log_dir(), session_name, info.request.app_id)
    try:
        docker_sched.schedule(info)
    except Exception as e:  # noqa: BLE001 - which error the SDK raises is not the point; it must name the replica
        assert "could not create replica main[0]" in str(e)
    else:
        raise AssertionError("the engine created a container with memory 'not-a-size'")
    assert not os.path.exists(app_dir)
