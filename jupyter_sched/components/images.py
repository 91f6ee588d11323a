"""The images the built-in components run in unless given ``--image``, and how a site chooses its own.

There are two: :data:`DEFAULT_IMAGE`, a plain Python image for ``utils.*`` and ``dist.spmd``, and
:data:`TORCH_IMAGE`, an image with PyTorch for ``dist.ddp`` (torchrun must be in it). Each is chosen once,
when the components are first imported, from the first of:

1. an environment variable: ``JUPYTER_SCHED_IMAGE`` or ``JUPYTER_SCHED_TORCH_IMAGE``;
2. an entry point ``python`` or ``torch`` in the group ``jupyter_sched.images``, installed by a site's own
   package (``torch = "mysite.images:TORCH"``). It may name a string, or a function that takes
   jupyter_sched's version and returns the image, as TorchX's ``torchx.version:get_torchx_image`` does;
3. the public default: ``python:3.12-slim`` or ``pytorch/pytorch:latest``.

An organisation whose cluster pulls from its own registry installs such a package once, and every notebook
and command line on that machine launches with its images. This repository's setup does the same for the
images it builds locally, where nothing can be pulled (``images/site``). The local schedulers ignore the
image: ``local_cwd`` runs in the current directory.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from jupyter_sched.util import entrypoints
from jupyter_sched.version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from importlib.metadata import EntryPoints

GROUP = "jupyter_sched.images"
"""The entry-point group a site's package declares its default images in."""

PUBLIC_DEFAULTS = {"python": "python:3.12-slim", "torch": "pytorch/pytorch:latest"}
"""The image of each kind when neither the environment nor a site's package names one."""

ENV_VARS = {"python": "JUPYTER_SCHED_IMAGE", "torch": "JUPYTER_SCHED_TORCH_IMAGE"}


def default_image(kind: str, declared: Optional["EntryPoints"] = None) -> str:
    """The image of ``kind`` (``python`` or ``torch``): the environment variable, then the site's entry
    point, then :data:`PUBLIC_DEFAULTS`. An entry point that names no usable image is an error that says
    which package declared it, rather than a launch that fails later on a strange image name. ``declared``
    is the group's entry points, when the caller has already read them."""
    from_env = os.environ.get(ENV_VARS[kind])
    if from_env:
        return from_env
    declared = entrypoints.select(GROUP) if declared is None else declared
    if kind not in declared.names:
        return PUBLIC_DEFAULTS[kind]
    ep = declared[kind]
    found: Any = ep.load()
    image = found(_version()) if callable(found) else found
    if not isinstance(image, str) or not image.strip():
        raise ValueError(
            f"entry point {kind} = {ep.value} in group {GROUP} gave {image!r}, not an image name: fix that "
            f"package, or set {ENV_VARS[kind]}"
        )
    return image.strip()


def _version() -> str:
    return __version__


_DECLARED = entrypoints.select(GROUP)  # read once: a scan of every installed distribution's entry points
DEFAULT_IMAGE: str = default_image("python", _DECLARED)
"""The image ``utils.*`` and ``dist.spmd`` run in unless given ``--image``."""

TORCH_IMAGE: str = default_image("torch", _DECLARED)
"""The image ``dist.ddp`` runs in unless given ``--image``: it must have torch."""
