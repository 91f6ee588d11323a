"""What a ``local_docker`` dry run can tell will go wrong inside the containers, said before anything runs.

A container sees the image and its mounts, not the directory the user is in. ``utils.python --script
train.py`` without a workspace or a mount starts fine and then fails inside the container (``can't open
file '//train.py'``). A command argument that names a file here, relative to here, while the role has no
workspace image and no bind mount holding that file, is such a case. Checked on this machine's files only
(the dry run is pure with respect to the engine): the image is not inspected, so a file that also exists
in the image at the same relative path still warns, which the message allows for.
"""

from __future__ import annotations

import os
from typing import List

from jupyter_sched.schedulers.docker.labels import LOCAL_WORKSPACE_REPO
from jupyter_sched.specs import BindMount, Role


def files_left_behind(role: Role, workspace_repo: str = "") -> List[str]:
    """A warning per argument of ``role`` that is a file here but in neither a workspace image nor a mount."""
    image = role.image or ""
    if any(image.startswith(repo + ":") for repo in (LOCAL_WORKSPACE_REPO, workspace_repo) if repo):
        return []
    sources = [os.path.abspath(m.src_path) for m in role.mounts if isinstance(m, BindMount)]
    out = []
    for arg in [role.entrypoint, *role.args]:
        if not arg or arg.startswith("-") or os.path.isabs(arg) or "=" in arg or "\n" in arg or len(arg) > 255:
            continue
        try:
            if not os.path.isfile(arg):
                continue
        except (OSError, ValueError):
            continue
        path = os.path.abspath(arg)
        if any(path == src or path.startswith(src.rstrip(os.sep) + os.sep) for src in sources):
            continue
        out.append(
            f"role {role.name}: {arg} is a file in {os.getcwd()} but not inside the image or any mount, so the"
            f" container will not find it (unless the image has its own {arg}); add --workspace . to copy this"
            " directory into the image, or a bind mount"
        )
    return out
