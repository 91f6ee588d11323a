"""Talking to the Docker engine: a lazily made client, errors that say how to start an engine, image
presence under a pull policy, the shared network, and a small parallel map.

``docker`` is imported inside functions only, so importing this module (or ``jupyter_sched``) works
without the SDK and without an engine.
"""

from __future__ import annotations

import logging
import os
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from jupyter_sched.schedulers.docker.labels import LABEL_PREFIX, LABEL_VERSION, package_version
from jupyter_sched.specs.errors import BackendUnavailableError

if TYPE_CHECKING:  # pragma: no cover
    import docker

logger = logging.getLogger(__name__)
"""Pull progress (INFO) under the ``jupyter_sched`` logger: the CLI shows it unless ``-q``; nothing prints."""

T = TypeVar("T")
R = TypeVar("R")

HOW_TO_START = (
    "Start a Docker engine and check it with `docker info`: `sudo systemctl start docker` (Linux with "
    "systemd), `sudo dockerd &` (no init system), open Docker Desktop (macOS/Windows), or in a jupyter_sched "
    "checkout run `bash scripts/setup/docker.sh`. If the engine runs elsewhere, set DOCKER_HOST "
    "(e.g. unix:///var/run/docker.sock or tcp://host:2375)."
)


class DockerNotAvailableError(BackendUnavailableError):
    """The docker SDK is missing or no Docker engine answers; the message says how to fix it."""


def connect(timeout: int = 60) -> "docker.DockerClient":
    """A client for the engine of ``DOCKER_HOST`` (or the default socket), checked with one request."""
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a dependency of the package
        raise DockerNotAvailableError(
            f"the `docker` Python package is not installed ({e}); `pip install docker` to use local_docker"
        ) from None
    where = os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"
    try:
        return docker.from_env(timeout=timeout)  # docker>=7 asks the engine for its API version here
    except docker.errors.DockerException as e:
        raise DockerNotAvailableError(
            f"cannot reach a Docker engine at {where}: {_reason(e)}. {HOW_TO_START}"
        ) from None


def has_docker() -> bool:
    """True if the docker SDK is installed and an engine answers a ping."""
    try:
        client = connect(timeout=5)
    except DockerNotAvailableError:
        return False
    try:
        return bool(client.ping())
    except Exception:  # noqa: BLE001 - any failure to answer a ping means there is no engine to use here
        return False
    finally:
        client.close()


def lost_engine(e: BaseException) -> Optional[DockerNotAvailableError]:
    """The error to raise instead of ``e`` if ``e`` says the connection to the engine broke or was refused
    (the engine stopped or restarted, ``DOCKER_HOST`` went away); None for any other error."""
    import requests
    import urllib3

    if isinstance(e, (requests.exceptions.ConnectionError, urllib3.exceptions.ProtocolError)):
        return DockerNotAvailableError(f"lost the connection to the Docker engine: {e}. {HOW_TO_START}")
    return None


def _reason(e: BaseException) -> str:
    text = str(e)
    for marker in ("Connection refused", "No such file or directory", "Permission denied", "timed out"):
        if marker in text:
            hint = " (your user may need to be in the `docker` group)" if marker == "Permission denied" else ""
            return marker.lower() + hint
    return text


def explain(e: BaseException) -> str:
    """The engine's own words for an API error (``explanation``), else ``str(e)``."""
    text = getattr(e, "explanation", None) or str(e)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).strip()


def is_not_found(e: BaseException) -> bool:
    import docker

    return isinstance(e, docker.errors.NotFound)


def is_conflict(e: BaseException) -> bool:
    import docker

    return isinstance(e, docker.errors.APIError) and e.status_code == 409


def create_record(api: Any, image_id: str, name: str, command: str, labels: Dict[str, str]) -> None:
    """Creates a record container (never started, no network: a cancel's or an interrupted submit's record,
    read back by its labels) named ``name``; one that exists already (409: another process recorded it
    first) is left as it is."""
    try:
        api.create_container(
            image_id, command=[command], name=name, labels=labels, network_disabled=True,
            host_config=api.create_host_config(network_mode="none"),
        )  # fmt: skip
    except Exception as e:  # noqa: BLE001 - the SDK's errors told apart by is_conflict; others re-raised
        if not is_conflict(e):
            raise


# -- images ---------------------------------------------------------------------------------------------


def split_image(image: str) -> Tuple[str, Optional[str]]:
    """``repo[:tag]`` -> (repo, tag); a registry port (``host:5000/x``) is not a tag; digests kept."""
    if "@" in image:
        return image, None
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, None


def ensure_image(client: "docker.DockerClient", image: str, policy: str, quiet: bool = True) -> None:
    """Makes ``image`` available locally under ``policy`` (``never``/``missing``/``always``).

    ``sha256:`` ids are never pulled. Raises ``LookupError`` with what to do when the image is missing.
    """
    api = client.api
    local_only = image.startswith("sha256:")
    if policy != "always" or local_only:
        try:
            api.inspect_image(image)
            return
        except Exception as e:  # noqa: BLE001 - SDK errors: is_not_found decides
            if not is_not_found(e):
                raise
        if policy == "never" or local_only:
            raise LookupError(
                f"image {image!r} is not on this Docker engine and pull={policy}"
                f"{' (an image id cannot be pulled)' if local_only else ''}. Build or pull it first"
                f" (`docker pull {image}`), or use pull=missing"
            )
    pull(client, image, quiet=quiet)


def pull(client: "docker.DockerClient", image: str, quiet: bool = True) -> None:
    repo, tag = split_image(image)
    try:
        events = client.api.pull(repo, tag=tag or "latest", stream=True, decode=True)
        for event in events:
            if "error" in event:
                raise LookupError(event.get("error"))
            if not quiet and event.get("status") and "id" not in event:
                logger.info("docker pull %s: %s", image, event["status"])
    except LookupError as e:
        raise LookupError(
            f"cannot pull image {image!r}: {e}. Check the name, or pull=never for a local-only image"
        ) from None
    except Exception as e:  # noqa: BLE001 - any SDK error: a LookupError
        raise LookupError(
            f"cannot pull image {image!r}: {explain(e)}. Check the name, or pull=never for a local-only image"
        ) from None


# -- network ------------------------------------------------------------------------------------------------


_network_lock = threading.Lock()


def ensure_network(client: "docker.DockerClient", name: str) -> str:
    """The id of the user-defined bridge network ``name``, created if missing.

    Two processes may race and create two networks of the same name (the engine allows it). Every caller
    then picks the same one (the oldest id in sort order) and an app's containers always share one network,
    so name resolution between replicas never depends on the race.
    """
    api = client.api
    with _network_lock:
        found = _exact(api.networks(names=[name]), name)
        if not found:
            try:
                api.create_network(
                    name,
                    driver="bridge",
                    check_duplicate=True,
                    labels={LABEL_PREFIX + "managed": "true", LABEL_VERSION: package_version()},
                )
            except Exception as e:  # noqa: BLE001 - SDK errors: is_conflict decides
                if not is_conflict(e):
                    raise RuntimeError(f"cannot create docker network {name!r}: {explain(e)}") from None
            found = _exact(api.networks(names=[name]), name)
        if not found:
            raise RuntimeError(f"docker network {name!r} was created but cannot be found")
        return sorted(n["Id"] for n in found)[0]


def _exact(networks: List[Dict[str, Any]], name: str) -> List[Dict[str, Any]]:
    return [n for n in networks if n.get("Name") == name]



# -- parallel map ---------------------------------------------------------------------------------------------


def parallel(
    fn: Callable[[T], R], items: Sequence[T], max_workers: int = 8
) -> List[Tuple[Optional[R], Optional[BaseException]]]:
    """``fn`` over ``items`` in threads (inline for a single item); (result, error) per item, in order."""

    def safe(item: T) -> Tuple[Optional[R], Optional[BaseException]]:
        try:
            return fn(item), None
        except Exception as e:  # noqa: BLE001 - every error goes back to the caller with its item
            return None, e

    if len(items) <= 1:
        return [safe(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(items)), thread_name_prefix="jsched-docker") as pool:
        return list(pool.map(safe, items))


STOP_SEND_TIMEOUT = 0.5
"""Seconds a cancel thread waits for the engine's answer to a stop: enough to know the request was sent."""


def engine_url(api: Any, path: str, *args: str) -> str:
    """The engine's URL of a versioned endpoint (``/containers/{0}/logs``) with ``args`` quoted into it,
    built from the SDK client's public ``base_url`` and ``api_version``. The raw endpoints serve what the
    SDK's wrappers cannot: a stop request that is sent without waiting for the grace period, and log bytes
    read as they arrive instead of frame by frame."""
    quoted = [urllib.parse.quote(arg, safe="/:") for arg in args]
    return f"{api.base_url}/v{api.api_version}{path.format(*quoted)}"


def raise_for_status(response: Any) -> None:
    """A failed raw request as the SDK's own error (``docker.errors.NotFound``, ``APIError``, ...)."""
    import requests
    from docker.errors import create_api_error_from_http_exception

    try:
        response.raise_for_status()
    except requests.exceptions.HTTPError as e:
        raise create_api_error_from_http_exception(e) from e


def send_stop(client: "docker.DockerClient", container_id: str, grace: int) -> None:
    """Asks the engine to stop a container (the stop signal, then SIGKILL after ``grace`` seconds) without
    waiting for it to happen: the engine carries a stop through even when the client has gone away, so the
    request only has to be *sent*. Errors (a container already gone) are ignored."""
    api = client.api
    try:
        url = engine_url(api, "/containers/{0}/stop", container_id)
        api.post(url, params={"t": grace}, timeout=(30, STOP_SEND_TIMEOUT))
    except Exception:  # noqa: BLE001 - the usual case is a read timeout while the engine waits out the grace
        pass


def start_threads(fn: Callable[..., Any], args_list: Iterable[Tuple[Any, ...]], name: str) -> List[threading.Thread]:
    """Runs ``fn(*args)`` for each args in its own thread and returns at once. The threads are not daemons,
    so a process that exits right away (a CLI ``cancel``) still finishes them; keep ``fn`` short."""
    threads = []
    for args in args_list:
        thread = threading.Thread(target=_quietly, args=(fn, args), name=name, daemon=False)
        thread.start()
        threads.append(thread)
    return threads


def _quietly(fn: Callable[..., Any], args: Tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a replica that is already gone needs no stopping
        pass
