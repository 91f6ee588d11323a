"""``schedule`` on the docker backend, all or nothing: images first, then the app's metrics directory, then
create every container, then start them; if any step fails for any replica, what was created is removed and
the error names the replica.

Before anything is created, every image the app needs is made present under its ``pull`` policy (an image
that cannot be had names the roles that need it). Containers are created in parallel, each on its network
with the merged environment (``DockerContainer.create_kwargs``); only when all exist are they started, in
parallel. The removal itself is the caller's (``remove_app``: it finds the app's containers by label, so
it also catches a container whose create answer was lost). A submitter killed before every container was
started cannot remove anything: each container names its submitter in a label, and the next process that
reads the app removes them (``state.interrupted_by``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Dict

from jupyter_sched.schedulers.common.process_identity import this_process
from jupyter_sched.schedulers.docker.engine import ensure_image, explain, parallel
from jupyter_sched.schedulers.docker.labels import LABEL_METRICS_DIR, LABEL_SUBMITTER
from jupyter_sched.schedulers.docker.request.build import DockerSubmitError, images_of
from jupyter_sched.schedulers.docker.request.job import DockerContainer, DockerJob

if TYPE_CHECKING:  # pragma: no cover
    import docker


def ensure_images(client: "docker.DockerClient", job: DockerJob, quiet: bool) -> None:
    """Makes every image of the job present under its pull policy, or raises DockerSubmitError naming who
    needs the missing one."""
    for image, users in images_of(job).items():
        try:
            ensure_image(client, image, job.pull, quiet=quiet)
        except LookupError as e:
            raise DockerSubmitError(f"app {job.app_id}: {users} cannot run: {e}") from None


def make_metrics_dirs(job: DockerJob) -> None:
    """Creates the app's metrics directory on this machine (every container's ``LABEL_METRICS_DIR``) before
    the containers that mount it: writable by any user, as a container may write as any uid, inside the
    app's directory, which is this user's alone (0700), so no other user of the machine reaches it."""
    for path in {c.labels.get(LABEL_METRICS_DIR) for c in job.containers} - {None, ""}:
        assert path is not None
        try:
            app_dir = os.path.dirname(path)
            os.makedirs(app_dir, mode=0o700, exist_ok=True)
            os.chmod(app_dir, 0o700)
            os.makedirs(path, exist_ok=True)
            os.chmod(path, 0o777)  # umask would narrow the mode makedirs is given
        except OSError as e:
            raise DockerSubmitError(
                f"app {job.app_id}: cannot create its metrics directory {path!r} ({e}); set"
                " JUPYTER_SCHED_LOG_DIR to a writable directory. Nothing was started"
            ) from None


def create_and_start(
    client: "docker.DockerClient", job: DockerJob, network_ids: Dict[str, str], remove_app: Callable[[], object]
) -> None:
    """Creates every container of ``job`` (``network_ids``: network name -> id), then starts them all. On the
    first failure, ``remove_app()`` removes what exists and DockerSubmitError says which replica failed."""
    results = parallel(lambda c: create_container(client, c, network_ids[c.network or job.network]), job.containers)
    created = [(c, cid) for c, (cid, err) in zip(job.containers, results, strict=True) if cid]
    failed = [(c, err) for c, (cid, err) in zip(job.containers, results, strict=True) if err]
    if failed:
        remove_app()
        raise rollback_error(job, len(created), "create", *failed[0])
    results = parallel(lambda item: client.api.start(item[1]), created)
    failed = [(c, err) for (c, _), (_, err) in zip(created, results, strict=True) if err]
    if failed:
        remove_app()
        raise rollback_error(job, len(created), "start", *failed[0])


def create_container(client: "docker.DockerClient", container: DockerContainer, network_id: str) -> str:
    """Creates one replica's container (not started), labelled with this process as its submitter (so a
    submit killed before the start is found and undone later: ``LABEL_SUBMITTER``); returns its id."""
    kwargs = container.create_kwargs()  # the environment gets the container's default and scheduler env
    kwargs["network"] = network_id
    kwargs["labels"] = {**(kwargs.get("labels") or {}), LABEL_SUBMITTER: this_process()}
    return client.containers.create(container.image, container.command, **kwargs).id


def rollback_error(
    job: DockerJob, created: int, step: str, bad: DockerContainer, err: BaseException
) -> DockerSubmitError:
    """The error of a schedule that failed at ``step`` for replica ``bad``, after its containers were removed."""
    return DockerSubmitError(
        f"could not {step} replica {bad.role}[{bad.replica_id}] (container {bad.name}) of app {job.app_id}:"
        f" {explain(err)}. Nothing of the app was left running: the {created} container(s) already"
        " created were removed."
    )
