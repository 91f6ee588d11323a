"""Can a container image run what this interpreter pickles? Python's minor version and cloudpickle's major.

Code pickled by value (functions defined in a notebook) carries bytecode, which only the same Python
minor version reads; cloudpickle's own format changes between major versions. Both are checked before
launch. An image built for this (``jupyter-sched/python:local``, by ``scripts/setup/images.sh``) records
the versions as labels, so the check is one ``image inspect``; any other image is asked once by running
``python3`` in it (the answer is kept per image id for the life of the process). An image that is not
on the engine yet is not checked here: the replica then reports an unreadable call as the function's
error.
"""

from __future__ import annotations

import platform
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import cloudpickle

from jupyter_sched.functions.errors import IncompatibleImageError

PYTHON_LABEL = "jupyter-sched.python"
CLOUDPICKLE_LABEL = "jupyter-sched.cloudpickle"
PROBE = (
    "import sys\ntry:\n import cloudpickle; v = cloudpickle.__version__\nexcept Exception:\n v = '-'\n"
    "print('%d.%d.%d' % sys.version_info[:3], v)"
)
_CACHE: Dict[str, Tuple[str, str]] = {}
_LOCK = threading.Lock()
T = TypeVar("T")


def local_versions() -> Tuple[str, str]:
    return platform.python_version(), cloudpickle.__version__


def image_versions(image: str) -> Optional[Tuple[str, str]]:
    """``(python, cloudpickle)`` of ``image`` (``"-"`` for no cloudpickle), or None if it is not on the
    engine. Labels first; else one run of ``python3`` in the image."""

    def from_labels(labels: Dict[str, str]) -> Optional[Tuple[str, str]]:
        if labels.get(PYTHON_LABEL):
            return labels[PYTHON_LABEL], labels.get(CLOUDPICKLE_LABEL) or "-"
        return None

    def ask(client: Any) -> Tuple[str, str]:
        words = probe(client, image).decode(errors="replace").split()
        return (words[0], words[1]) if len(words) >= 2 else ("?", "-")

    return _ask_image(image, from_labels, ask, _CACHE)


def probe(client: Any, image: str) -> bytes:
    """Runs ``python3`` in ``image`` once (no network, removed afterwards) and returns what it printed."""
    from jupyter_sched.schedulers.docker.engine import explain

    try:
        return _run_python(client, image, PROBE, "functions")
    except Exception as e:  # noqa: BLE001 - no python3 in the image, or it failed to start
        raise IncompatibleImageError(
            f"image={image!r}: could not run python3 in it to check its version ({explain(e)}); a function"
            f" job needs Python {minor(local_versions()[0])} with cloudpickle {major(local_versions()[1])}.x"
            " in the image"
        ) from None


def _run_python(client: Any, image: str, code: str, purpose: str) -> bytes:
    """What ``python3 -c code`` printed in a container of ``image`` (no network, removed afterwards)."""
    container = None
    try:
        container = client.containers.create(image, ["python3", "-c", code], network_disabled=True,
                                              labels={"jupyter-sched.probe": purpose})  # fmt: skip
        container.start()
        container.wait(timeout=120)
        return bytes(container.logs(stdout=True, stderr=False))
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone
                pass


def _ask_image(image: str, from_labels: Callable[[Dict[str, str]], Optional[T]], ask: Callable[[Any], Optional[T]],
               cache: Dict[str, T]) -> Optional[T]:  # fmt: skip
    """One question about ``image``: None if it is not on the engine; else what its labels answer (one
    ``image inspect``), else what ``ask(client)`` finds by running it, kept per image id for the process."""
    from jupyter_sched.schedulers.docker.engine import connect, is_not_found

    client = connect(timeout=30)
    try:
        try:
            img = client.images.get(image)
        except Exception as e:  # noqa: BLE001 - the SDK's errors told apart by is_not_found; others re-raised
            if is_not_found(e):
                return None
            raise
        known = from_labels(img.labels or {})
        if known is not None:
            return known
        with _LOCK:
            cached = cache.get(img.id)
        if cached is not None:
            return cached
        answer = ask(client)
        if answer is not None:
            with _LOCK:
                cache[img.id] = answer
        return answer
    finally:
        client.close()


NOTEBOOKS_LABEL = "jupyter-sched.notebooks"
NOTEBOOK_MODULES = ("nbclient", "nbformat", "jupyter_client", "ipykernel", "psutil", "docstring_parser")
"""What a notebook job's replica imports in its image: nbclient and the kernel, and the requirements of the
jupyter_sched package the job mounts there that its notebook run loads."""
NOTEBOOK_PROBE = (
    "import importlib.util as u\nprint(' '.join(m for m in %r if u.find_spec(m) is None) or '-')" % (NOTEBOOK_MODULES,)
)
_NOTEBOOK_CACHE: Dict[str, List[str]] = {}


def notebook_modules_missing(image: str) -> Optional[List[str]]:
    """The modules of :data:`NOTEBOOK_MODULES` that ``image`` lacks (``[]``: none), or None if it is not on
    the engine. An image built by scripts/setup/images.sh says so in a label (one ``image inspect``); any
    other image is asked once per process by running ``python3`` in it (the answer is kept per image id),
    the cost the dry run of a function job already pays for such an image's Python version."""

    def ask(client: Any) -> Optional[List[str]]:
        try:
            words = _run_python(client, image, NOTEBOOK_PROBE, "notebooks").decode(errors="replace").split()
        except Exception:  # noqa: BLE001 - no python3 to ask: check_compatible has said so already, or will
            return None
        return [w for w in words if w != "-"]

    return _ask_image(image, lambda labels: [] if labels.get(NOTEBOOKS_LABEL) else None, ask, _NOTEBOOK_CACHE)


def check_notebook_image(image: str) -> None:
    """Raises IncompatibleImageError naming what ``image`` lacks to run a notebook job, and the fix."""
    missing = notebook_modules_missing(image)
    if not missing:
        return
    raise IncompatibleImageError(
        f"image={image!r} lacks {', '.join(missing)}, which a notebook job runs in the replica (nbclient starts"
        " an ipykernel there, and the job's mounted jupyter_sched imports the rest). Fix: use"
        " jupyter-sched/python:local (scripts/setup/images.sh adds them), or install them in the image:"
        " pip install 'jupyter_sched[notebooks]'"
    )


def check_compatible(image: str, versions: Tuple[str, str], local: Optional[Tuple[str, str]] = None) -> None:
    """Raises IncompatibleImageError naming both versions and the fix, unless ``versions`` (the image's)
    can read what ``local`` (default: this interpreter's) pickles."""
    here_py, here_cp = local or local_versions()
    there_py, there_cp = versions
    fix = (
        f"use an image with Python {minor(here_py)} and cloudpickle {major(here_cp)}.x (such as"
        " jupyter-sched/python:local, built by scripts/setup/images.sh), or run the kernel on that image's"
        " Python"
    )
    if minor(there_py) != minor(here_py):
        raise IncompatibleImageError(
            f"image={image!r} has Python {there_py} but this kernel runs Python {here_py}: functions pickled"
            f" here carry Python {minor(here_py)} bytecode. Fix: {fix}"
        )
    if there_cp == "-":
        raise IncompatibleImageError(
            f"image={image!r} (Python {there_py}) has no cloudpickle; this kernel uses cloudpickle {here_cp}."
            f" Fix: {fix} (or pip install 'cloudpickle=={major(here_cp)}.*' in the image)"
        )
    if major(there_cp) != major(here_cp):
        raise IncompatibleImageError(
            f"image={image!r} has cloudpickle {there_cp} but this kernel uses cloudpickle {here_cp}. Fix: {fix}"
            f" (or pip install 'cloudpickle=={major(here_cp)}.*' in the image)"
        )


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def major(version: str) -> str:
    return version.split(".")[0]
