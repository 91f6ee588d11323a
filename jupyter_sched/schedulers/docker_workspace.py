"""Workspaces for the docker backend: overlay a local directory on a role's image, build it, maybe push it.

The build context is the workspace directory minus what its ``.dockerignore`` excludes (docker's own rules:
``**``, ``!`` exceptions, the last matching pattern wins, a pattern also matches everything under a matching
directory). The Dockerfile is the workspace's ``Dockerfile.jupyter_sched`` if it has one, else::

    ARG IMAGE
    FROM $IMAGE
    WORKDIR <the image's WORKDIR, or /workspace>
    COPY . <that directory>

``IMAGE`` (the role's image) and ``WORKSPACE`` (the directory) are passed as build args when the Dockerfile
declares them. Neither Dockerfile nor ``.dockerignore`` ends up in the image. The result is tagged
``jupyter-sched/workspace:<id>`` (or ``<image_repo>:<id>``, then pushed there) and labelled
``jupyter_sched.workspace``, so ``DockerScheduler.cleanup`` can remove it with the app that used it.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import tarfile
import tempfile
from typing import IO, TYPE_CHECKING, List, Mapping, Optional, Tuple

from jupyter_sched.schedulers.api import WorkspaceMixin
from jupyter_sched.schedulers.docker_engine import ensure_image, explain, split_image
from jupyter_sched.schedulers.docker_job import LABEL_VERSION, LABEL_WORKSPACE, LOCAL_WORKSPACE_REPO, package_version
from jupyter_sched.specs import CfgVal, Role, runopts

if TYPE_CHECKING:  # pragma: no cover
    import docker

logger = logging.getLogger(__name__)
"""Build and push progress (INFO) under the ``jupyter_sched`` logger, never printed by the library."""

WORKSPACE_DOCKERFILE = "Dockerfile.jupyter_sched"
DEFAULT_WORKDIR = "/workspace"
LABEL_BASE_IMAGE = "jupyter_sched.base-image"


class WorkspaceBuildError(RuntimeError):
    """The workspace image could not be built or pushed; the message holds the end of the build log."""


# -- .dockerignore --------------------------------------------------------------------------------------------

_Pattern = Tuple[bool, "re.Pattern[str]", int]


def read_dockerignore(root: str) -> List[str]:
    try:
        with open(os.path.join(root, ".dockerignore"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def compile_patterns(lines: List[str]) -> List[_Pattern]:
    """(is_exception, regex, number of path segments) per ``.dockerignore`` line, as docker compiles them."""
    out: List[_Pattern] = []
    for line in lines:
        exception = line.startswith("!")
        text = line[1:].strip() if exception else line
        if not text:
            continue
        text = posixpath.normpath(text)
        if len(text) > 1 and text.startswith("/"):
            text = text.lstrip("/")
        out.append((exception, re.compile(_to_regex(text)), len(text.split("/"))))
    return out


def _to_regex(pattern: str) -> str:
    out = ["^"]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if i + 1 < n and pattern[i + 1] == "*":
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                out.append(".*" if i >= n else "(.*/)?")
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(r"\[")
            else:
                body = pattern[i + 1 : end]
                if body.startswith("^"):
                    body = "^" + body[1:].replace("\\", "\\\\")
                out.append("[" + body + "]")
                i = end
        elif ch in ".+()|{}$^":
            out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    out.append("$")
    return "".join(out)


def is_ignored(path: str, patterns: List[_Pattern]) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is excluded from the build context."""
    matched = False
    parent = posixpath.dirname(path)
    parent_dirs = parent.split("/") if parent else []
    for exception, regex, ndirs in patterns:
        if exception != matched:  # only an exception can undo a match, only a pattern can make one
            continue
        match = regex.match(path) is not None
        if not match and parent_dirs and ndirs <= len(parent_dirs):
            match = regex.match("/".join(parent_dirs[:ndirs])) is not None
        if match:
            matched = not exception
    return matched


# -- build context ----------------------------------------------------------------------------------------------


def make_context(root: str, dockerfile: str) -> IO[bytes]:
    """An uncompressed tar of ``root`` (``.dockerignore`` applied) with ``dockerfile`` as
    ``Dockerfile.jupyter_sched`` and a ``.dockerignore`` that keeps both out of the image."""
    patterns = compile_patterns(read_dockerignore(root))
    can_prune = not any(exception for exception, _, _ in patterns)
    spool = tempfile.SpooledTemporaryFile(max_size=32 << 20)
    control = {WORKSPACE_DOCKERFILE, ".dockerignore"}
    with tarfile.open(fileobj=spool, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for current, dirs, files in os.walk(root):
            rel_dir = os.path.relpath(current, root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir
            keep_dirs = []
            for d in sorted(dirs):
                rel = posixpath.join(rel_dir, d)
                ignored = is_ignored(rel, patterns)
                if ignored and can_prune:
                    continue
                if not ignored:
                    tar.add(os.path.join(current, d), arcname=rel, recursive=False)
                keep_dirs.append(d)
            dirs[:] = keep_dirs
            for name in sorted(files):
                rel = posixpath.join(rel_dir, name)
                if rel in control or is_ignored(rel, patterns):
                    continue
                tar.add(os.path.join(current, name), arcname=rel, recursive=False)
        _add_text(tar, WORKSPACE_DOCKERFILE, dockerfile)
        _add_text(tar, ".dockerignore", f"{WORKSPACE_DOCKERFILE}\n.dockerignore\n")
    spool.seek(0)
    return spool


def _add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
    import io

    data = text.encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def default_dockerfile(workdir: str) -> str:
    quoted = '["."' + f', "{workdir}"]'
    return f"ARG IMAGE\nFROM $IMAGE\nWORKDIR {workdir}\nCOPY {quoted}\n"


def _declared_args(dockerfile: str) -> List[str]:
    return [m.group(1) for m in re.finditer(r"^\s*ARG\s+([A-Za-z_][A-Za-z0-9_]*)", dockerfile, re.M | re.I)]


def local_workspace_path(workspace: str) -> str:
    path = workspace[len("file://") :] if workspace.startswith("file://") else workspace
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        raise ValueError(
            f"workspace {workspace!r} is not a directory on this machine; the docker backend builds a local"
            " directory into the role's image (e.g. workspace='.')"
        )
    return path


# -- build and push -----------------------------------------------------------------------------------------------


def build_workspace(
    client: "docker.DockerClient", image: str, workspace: str, pull: str = "missing", quiet: bool = False
) -> str:
    """Builds ``workspace`` on top of ``image`` and returns the new image's id (``sha256:...``)."""
    root = local_workspace_path(workspace)
    custom = os.path.join(root, WORKSPACE_DOCKERFILE)
    if os.path.isfile(custom):
        with open(custom, encoding="utf-8") as f:
            dockerfile = f.read()
    else:
        ensure_image(client, image, pull, quiet=quiet)
        workdir = client.api.inspect_image(image).get("Config", {}).get("WorkingDir") or DEFAULT_WORKDIR
        dockerfile = default_dockerfile(workdir)
    declared = set(_declared_args(dockerfile))
    if "IMAGE" in declared and os.path.isfile(custom):
        ensure_image(client, image, pull, quiet=quiet)
    args = {k: v for k, v in (("IMAGE", image), ("WORKSPACE", root)) if k in declared}
    labels = {LABEL_WORKSPACE: root, LABEL_BASE_IMAGE: image, LABEL_VERSION: package_version()}
    context = make_context(root, dockerfile)
    log: List[str] = []
    image_id: Optional[str] = None
    try:
        events = client.api.build(
            fileobj=context,
            custom_context=True,
            dockerfile=WORKSPACE_DOCKERFILE,
            buildargs=args,
            labels=labels,
            pull=False,
            rm=True,
            forcerm=True,
            decode=True,
        )
        for event in events:
            if "error" in event:
                tail = "".join(log[-20:])
                raise WorkspaceBuildError(
                    f"building workspace {root} on {image} failed: {event['error'].strip()}\n{tail}"
                )
            text = event.get("stream")
            if text:
                log.append(text)
                if not quiet:
                    if text.strip():
                        logger.info("%s", text.rstrip("\n"))
            aux = event.get("aux")
            if isinstance(aux, dict) and aux.get("ID"):
                image_id = aux["ID"]
    except WorkspaceBuildError:
        raise
    except Exception as e:  # noqa: BLE001
        raise WorkspaceBuildError(f"building workspace {root} on {image} failed: {explain(e)}") from None
    finally:
        context.close()
    if image_id is None:
        for line in reversed(log):
            match = re.match(r"Successfully built ([0-9a-f]+)", line.strip())
            if match:
                image_id = client.api.inspect_image(match.group(1))["Id"]
                break
    if image_id is None:
        raise WorkspaceBuildError(f"building workspace {root} gave no image id:\n{''.join(log[-20:])}")
    return image_id


def push_image(client: "docker.DockerClient", repo: str, tag: str, quiet: bool = False) -> None:
    try:
        for event in client.api.push(repo, tag=tag, stream=True, decode=True):
            if "error" in event:
                raise WorkspaceBuildError(f"pushing {repo}:{tag} failed: {event['error']}")
            if not quiet and event.get("status") and "progress" not in event:
                ident = f"{event['id']}: " if event.get("id") else ""
                logger.info("docker push %s:%s: %s%s", repo, tag, ident, event["status"])
    except WorkspaceBuildError:
        raise
    except Exception as e:  # noqa: BLE001
        raise WorkspaceBuildError(f"pushing {repo}:{tag} failed: {explain(e)}") from None


_REPO_PATH = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_REPO_HOST = re.compile(rf"(?:{_HOST_LABEL})(?:\.{_HOST_LABEL})*(?::\d+)?")


def check_image_repo(repo: str) -> str:
    """``repo`` if it is a valid image repository without a tag (docker's reference grammar), else a
    ValueError that says why; checked before a build, which the engine would only refuse after it."""
    _, tag = split_image(repo)
    if tag is not None or "@" in repo:
        raise ValueError(f"image_repo={repo!r} must not have a tag or digest; the tag is the image id")
    host, _, path = repo.partition("/")
    if not path or not ("." in host or ":" in host or host == "localhost"):
        host, path = "", repo  # no registry host: e.g. "me/app"
    if (host and not _REPO_HOST.fullmatch(host)) or not _REPO_PATH.fullmatch(path):
        raise ValueError(
            f"image_repo={repo!r} is not a valid image repository: lowercase letters, digits and '.', '_', '-'"
            " between them, '/' between path parts, after an optional registry host[:port]/, e.g."
            " 127.0.0.1:5000/me/app"
        )
    return repo



class DockerWorkspaceMixin(WorkspaceMixin):
    """Builds a workspace into role[0]'s image; see the module docstring. Needs ``self._docker()``."""

    def _docker(self) -> "docker.DockerClient":  # pragma: no cover - provided by the scheduler
        raise NotImplementedError

    def workspace_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "image_repo",
            str,
            "the image repository to tag and push workspace images to (must have push access),"
            " e.g. 127.0.0.1:5000/me/app; without it they stay local",
        )
        opts.add("quiet", bool, "suppress the build and push output of workspace images", default=False)
        return opts

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        """Builds, tags (and with ``image_repo`` pushes) the workspace image and points ``role.image`` at it.
        ``image_repo`` is checked before anything is built; if the push fails, the tag made for it is removed
        again (and with it the image, unless something else still uses it): nobody can refer to it."""
        client = self._docker()
        quiet = bool(cfg.get("quiet"))
        base = role.image
        repo = cfg.get("image_repo")
        repo_name = check_image_repo(str(repo)) if repo else None
        image_id = build_workspace(client, role.image, workspace, str(cfg.get("pull") or "missing"), quiet)
        tag = image_id.split(":", 1)[-1][:12]
        if repo_name:
            try:
                client.api.tag(image_id, repo_name, tag)
            except Exception as e:  # noqa: BLE001
                raise WorkspaceBuildError(
                    f"tagging the workspace image as {repo_name}:{tag} failed: {explain(e)}"
                ) from None
            try:
                push_image(client, repo_name, tag, quiet)
            except BaseException:
                try:
                    client.api.remove_image(f"{repo_name}:{tag}")
                except Exception:  # noqa: BLE001 - still used elsewhere: leave it
                    pass
                raise
            role.image = f"{repo_name}:{tag}"
        else:
            client.api.tag(image_id, LOCAL_WORKSPACE_REPO, tag)
            role.image = f"{LOCAL_WORKSPACE_REPO}:{tag}"
        if not quiet:
            logger.info("built %s from workspace %s on top of %s", role.image, workspace, base)
