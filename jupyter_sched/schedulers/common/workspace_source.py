"""Where a workspace's files come from: a directory on this machine, or a directory behind an fsspec URL.

A plain path (``.``, ``~/proj``) and a ``file://`` URL name a local directory: it is walked with ``os.walk``
and its entries are added to a tar as they are (modes, symlinks). Any other URL (``memory://run1/``,
``s3://bucket/dir``, ``simplecache::s3://...``) is opened with fsspec and walked through its filesystem:
files keep their size and, where the filesystem reports one, their permission bits; directories get 0755.

fsspec is imported only when a URL needs it, so it is not a dependency of ours (TorchX brings it): a URL
without it is refused with ``pip install fsspec``. :func:`open_workspace` checks that the filesystem can be
reached and the path is a directory there, and says what to fix (naming ``workspace``), so a bad workspace
is refused before anything is built or started.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import tarfile
from typing import Any, Dict, Iterator, List, Optional, Tuple

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)(://|::)")

Walk = Iterator[Tuple[str, List[str], List[str]]]
"""``(directory, subdirectories, files)`` relative to the workspace (``""`` is its top, ``/``-separated);
like ``os.walk`` top-down, removing a name from the subdirectories skips it."""


class WorkspaceError(ValueError):
    """The workspace cannot be read: the message names ``workspace`` and says the fix."""


class WorkspaceSource:
    """The files of a workspace, read-only. ``url`` is how it is named on the image (its label and the
    ``WORKSPACE`` build arg): the absolute path of a local directory, else the URL as given."""

    url: str

    def walk(self) -> Walk:  # pragma: no cover - abstract
        raise NotImplementedError

    def read_text(self, rel: str) -> Optional[str]:  # pragma: no cover - abstract
        """The text of the file ``rel``, or None if there is no such file."""
        raise NotImplementedError

    def add(self, tar: tarfile.TarFile, rel: str) -> None:  # pragma: no cover - abstract
        """Adds the entry ``rel`` (a file, or a directory without its contents) to ``tar`` as ``rel``."""
        raise NotImplementedError


class LocalWorkspace(WorkspaceSource):
    def __init__(self, root: str) -> None:
        self.root = root
        self.url = root

    def walk(self) -> Walk:
        for current, dirs, files in os.walk(self.root):
            rel = os.path.relpath(current, self.root).replace(os.sep, "/")
            yield ("" if rel == "." else rel), dirs, files

    def read_text(self, rel: str) -> Optional[str]:
        path = os.path.join(self.root, rel)
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()

    def add(self, tar: tarfile.TarFile, rel: str) -> None:
        tar.add(os.path.join(self.root, rel), arcname=rel, recursive=False)


class FsspecWorkspace(WorkspaceSource):
    def __init__(self, fs: Any, root: str, url: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self.url = url
        self.entries: Dict[str, Dict[str, Any]] = {}

    def walk(self) -> Walk:
        pending = [""]
        while pending:
            rel_dir = pending.pop()
            dirs: List[str] = []
            files: List[str] = []
            for entry in self.fs.ls(self.path(rel_dir), detail=True):
                name = posixpath.basename(str(entry["name"]).rstrip("/"))
                if not name or name in (".", ".."):
                    continue
                rel = posixpath.join(rel_dir, name)
                self.entries[rel] = entry
                if entry.get("type") == "directory":
                    dirs.append(name)
                elif entry.get("type") == "file":
                    files.append(name)
            yield rel_dir, dirs, files
            pending.extend(posixpath.join(rel_dir, d) for d in reversed(dirs))

    def path(self, rel: str) -> str:
        return posixpath.join(self.root, rel) if rel else self.root

    def read_text(self, rel: str) -> Optional[str]:
        path = self.path(rel)
        if not self.fs.isfile(path):
            return None
        with self.fs.open(path, "rb") as f:
            return bytes(f.read()).decode("utf-8")

    def add(self, tar: tarfile.TarFile, rel: str) -> None:
        entry = self.entries.get(rel) or self.fs.info(self.path(rel))
        info = tarfile.TarInfo(rel)
        mode = entry.get("mode")
        if entry.get("type") == "directory":
            info.type = tarfile.DIRTYPE
            info.mode = stat.S_IMODE(mode) if isinstance(mode, int) else 0o755
            tar.addfile(info)
            return
        info.mode = stat.S_IMODE(mode) if isinstance(mode, int) else 0o644
        with self.fs.open(self.path(rel), "rb") as f:
            size = entry.get("size")
            if isinstance(size, int):
                info.size = size
                tar.addfile(info, f)
            else:  # the filesystem does not say: read it to know
                import io

                data = bytes(f.read())
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def is_url(workspace: str) -> bool:
    """Whether ``workspace`` has a scheme (``memory://``, ``file://``, ``simplecache::``): a plain path has none."""
    return _SCHEME.match(workspace) is not None


def is_file_url(workspace: str) -> bool:
    """Whether ``workspace`` is a ``file://`` URL: a local directory, like a plain path."""
    return workspace[:7].lower() == "file://"


def open_workspace(workspace: str) -> WorkspaceSource:
    """The workspace's files; a :class:`WorkspaceError` naming ``workspace`` and the fix if it cannot be read."""
    match = _SCHEME.match(workspace)
    if match is None or is_file_url(workspace):
        return LocalWorkspace(local_directory(workspace))
    scheme = match.group(1)
    try:
        import fsspec.core
    except ImportError:
        raise WorkspaceError(
            f"workspace={workspace!r} is a URL, and reading one needs fsspec: pip install fsspec"
            " (or give a directory on this machine, e.g. workspace='.')"
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(workspace)
    except ImportError as e:
        raise WorkspaceError(
            f"workspace={workspace!r}: the {scheme} filesystem is not available ({e}); install the fsspec"
            f" package for {scheme}:// URLs (e.g. pip install s3fs for s3://)"
        ) from None
    except ValueError as e:
        raise WorkspaceError(
            f"workspace={workspace!r}: fsspec cannot open this URL ({e}); use a URL of a filesystem fsspec"
            " knows (memory://, s3://, gs://, ...) or a directory on this machine"
        ) from None
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    if "file" in protocols or "local" in protocols:
        return LocalWorkspace(local_directory(str(path), named=workspace))
    try:
        is_dir = fs.isdir(path)
        exists = is_dir or fs.exists(path)
    except Exception as e:  # noqa: BLE001 - any filesystem's own error (credentials, network): said in words
        raise WorkspaceError(
            f"workspace={workspace!r}: cannot read it ({type(e).__name__}: {e}); check the URL and the"
            f" credentials of its {scheme} filesystem"
        ) from None
    if not is_dir:
        what = "is a file, not a directory" if exists else "does not exist"
        raise WorkspaceError(
            f"workspace={workspace!r} {what} on its {scheme} filesystem; the workspace must be a directory:"
            " create it (with the files to copy into the image) or fix the URL"
        )
    return FsspecWorkspace(fs, str(path), workspace)


def local_path(workspace: str) -> str:
    """The absolute path a local workspace (a path, ``~`` expanded, or a ``file://`` URL) names."""
    path = workspace[len("file://") :] if is_file_url(workspace) else workspace
    return os.path.abspath(os.path.expanduser(path))


def local_directory(workspace: str, named: Optional[str] = None) -> str:
    """The absolute path of the local directory ``workspace`` (a path or ``file://`` URL) names."""
    path = local_path(workspace)
    if not os.path.isdir(path):
        raise WorkspaceError(
            f"workspace {named or workspace!r} is not a directory on this machine; the docker backend builds"
            " a directory (a local path or an fsspec URL) into the role's image (e.g. workspace='.')"
        )
    return path
