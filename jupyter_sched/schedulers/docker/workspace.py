"""Workspaces for the docker backend: overlay a directory on a role's image, build it, maybe push it.

The workspace is a local directory (a path or ``file://`` URL) or any fsspec URL (``memory://run1/``,
``s3://bucket/dir``; see ``workspace_source``). The build context is its files minus what its
``.dockerignore`` excludes (docker's own rules, see ``ignore``). The Dockerfile is the workspace's
``Dockerfile.jupyter_sched`` if it has one, else::

    ARG IMAGE
    FROM $IMAGE
    WORKDIR <the image's WORKDIR, or /workspace>
    COPY . <that directory>

``IMAGE`` (the role's image) and ``WORKSPACE`` (the directory's absolute path, or the URL) are passed as
build args when the Dockerfile declares them. Neither Dockerfile nor ``.dockerignore`` ends up in the
image. The result is tagged ``jupyter-sched/workspace:<id>`` (or ``<image_repo>:<id>``, then pushed there)
and labelled ``jupyter_sched.workspace`` (the directory or URL), so ``DockerScheduler.cleanup`` can remove
it with the app that used it. The role's ``metadata["jupyter_sched.workspace"]`` records the same, for the dry run.
"""

from __future__ import annotations

import logging
import posixpath
import re
import tarfile
import tempfile
from typing import IO, TYPE_CHECKING, List, Mapping, Optional

from jupyter_sched.schedulers.api import WorkspaceMixin
from jupyter_sched.schedulers.common.ignore import compile_patterns, dockerignore_lines, is_ignored
from jupyter_sched.schedulers.common.workspace_source import WorkspaceSource, open_workspace
from jupyter_sched.schedulers.docker.engine import ensure_image, explain, split_image
from jupyter_sched.schedulers.docker.labels import LABEL_VERSION, LABEL_WORKSPACE, LOCAL_WORKSPACE_REPO, package_version
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


# -- build context ----------------------------------------------------------------------------------------------


def make_context(source: WorkspaceSource, dockerfile: str) -> IO[bytes]:
    """An uncompressed tar of the workspace (``.dockerignore`` applied) with ``dockerfile`` as
    ``Dockerfile.jupyter_sched`` and a ``.dockerignore`` that keeps both out of the image."""
    patterns = compile_patterns(dockerignore_lines(source.read_text(".dockerignore") or ""))
    can_prune = not any(exception for exception, _, _ in patterns)
    spool = tempfile.SpooledTemporaryFile(max_size=32 << 20)
    control = {WORKSPACE_DOCKERFILE, ".dockerignore"}
    with tarfile.open(fileobj=spool, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel_dir, dirs, files in source.walk():
            keep_dirs = []
            for d in sorted(dirs):
                rel = posixpath.join(rel_dir, d)
                ignored = is_ignored(rel, patterns)
                if ignored and can_prune:
                    continue
                if not ignored:
                    source.add(tar, rel)
                keep_dirs.append(d)
            dirs[:] = keep_dirs
            for name in sorted(files):
                rel = posixpath.join(rel_dir, name)
                if rel in control or is_ignored(rel, patterns):
                    continue
                source.add(tar, rel)
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


# -- build and push -----------------------------------------------------------------------------------------------


def build_workspace(
    client: "docker.DockerClient", image: str, source: WorkspaceSource, pull: str = "missing", quiet: bool = False
) -> str:
    """Builds the workspace ``source`` (see :func:`open_workspace`) on top of ``image`` and returns the new
    image's id (``sha256:...``)."""
    root = source.url
    custom = source.read_text(WORKSPACE_DOCKERFILE)
    if custom is not None:
        dockerfile = custom
    else:
        ensure_image(client, image, pull, quiet=quiet)
        workdir = client.api.inspect_image(image).get("Config", {}).get("WorkingDir") or DEFAULT_WORKDIR
        dockerfile = default_dockerfile(workdir)
    declared = set(_declared_args(dockerfile))
    if "IMAGE" in declared and custom is not None:
        ensure_image(client, image, pull, quiet=quiet)
    args = {k: v for k, v in (("IMAGE", image), ("WORKSPACE", root)) if k in declared}
    labels = {LABEL_WORKSPACE: root, LABEL_BASE_IMAGE: image, LABEL_VERSION: package_version()}
    context = make_context(source, dockerfile)
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
    except Exception as e:  # noqa: BLE001 - any SDK error, explained
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
    except Exception as e:  # noqa: BLE001 - any SDK error, explained
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
        quiet = bool(cfg.get("quiet"))
        base = role.image
        repo = cfg.get("image_repo")
        repo_name = check_image_repo(str(repo)) if repo else None
        source = open_workspace(workspace)  # a bad workspace is refused before the engine is contacted
        client = self._docker()
        image_id = build_workspace(client, role.image, source, str(cfg.get("pull") or "missing"), quiet)
        tag = image_id.split(":", 1)[-1][:12]
        if repo_name:
            try:
                client.api.tag(image_id, repo_name, tag)
            except Exception as e:  # noqa: BLE001 - any SDK error, explained
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
        role.metadata[LABEL_WORKSPACE] = source.url
        if not quiet:
            logger.info("built %s from workspace %s on top of %s", role.image, workspace, base)
