"""Image providers of the local backend: how a role's image becomes a directory the replicas run in."""

from __future__ import annotations

import abc
import os
from typing import Mapping, Optional

from jupyter_sched.schedulers.local.request.popen import ReplicaParam
from jupyter_sched.specs import CfgVal, Role


class ImageProvider(abc.ABC):
    """Turns a role's image into a directory on this machine (an "image root")."""

    @abc.abstractmethod
    def fetch(self, image: str) -> str:
        """Returns the path of the image root (or ``""`` if there is nothing to fetch)."""

    def fetch_role(self, role: Role) -> str:
        return self.fetch(role.image)

    def get_cwd(self, image: str) -> Optional[str]:
        return None

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return os.path.join(img_root, role.entrypoint)

    def get_replica_param(
        self,
        img_root: str,
        role: Role,
        stdout: Optional[str] = None,
        stderr: Optional[str] = None,
        combined: Optional[str] = None,
    ) -> ReplicaParam:
        return ReplicaParam(
            args=[self.get_entrypoint(img_root, role), *role.args],
            env=dict(role.env),
            stdout=stdout,
            stderr=stderr,
            combined=combined,
            cwd=self.get_cwd(role.image),
        )


class CWDImageProvider(ImageProvider):
    """Ignores the image name: replicas run in the current working directory (read at dry-run time)."""

    def __init__(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        self._cfg = cfg or {}

    def fetch(self, image: str) -> str:
        return os.getcwd()

    def get_cwd(self, image: str) -> Optional[str]:
        return os.getcwd()

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


class LocalDirectoryImageProvider(ImageProvider):
    """The image name is an absolute path to an existing directory; replicas run there."""

    def __init__(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        self._cfg = cfg or {}

    def fetch(self, image: str) -> str:
        if not os.path.isabs(image) or not os.path.isdir(image):
            raise ValueError(
                f"Invalid image name: {image}, does not exist or is not a directory."
                " With the local_dir scheduler the image is an absolute path to a directory."
            )
        return image

    def get_cwd(self, image: str) -> Optional[str]:
        return image

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        """Absolute entrypoints run as given; a relative path (or a file present in the image) resolves
        against the image root; a bare command name is looked up on PATH."""
        entry = role.entrypoint
        if os.path.isabs(entry):
            return entry
        candidate = os.path.join(img_root, entry)
        if "/" in entry or os.path.exists(candidate):
            return candidate
        return entry
