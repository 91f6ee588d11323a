"""Copy installed distributions, with everything they require, out of this interpreter's environment.

scripts/setup/images.sh runs it with the project venv's Python to stage torch for the
jupyter-sched/torch:local image: nothing can be pulled or downloaded here, so the image gets the very files
scripts/setup/torch.sh installed from the on-disk wheel. Each distribution's files are the ones its
metadata lists (``importlib.metadata``'s ``files``, i.e. its RECORD), its ``.dist-info`` included so
``importlib.metadata`` also works in the image. Requirements are followed without extras, their markers
evaluated for this interpreter.

Left out, to keep the image small without changing what imports: byte-code caches (``__pycache__``,
``*.pyc``; Python compiles what it imports), files outside site-packages (console scripts whose shebang
names the venv's interpreter), ``tests`` packages, and torch's C++ pieces that only serve building
extensions or testing torch itself (``torch/include``, ``torch/test``, ``torch/bin`` except
``torch_shm_manager``, which torch.multiprocessing runs).

Usage: stage_dists.py DEST DIST...   copy; prints one line per distribution: NAME VERSION FILES BYTES
       stage_dists.py --list DIST...  only print what would be copied, NAME VERSION (images.sh's recipe)
"""

from __future__ import annotations

import importlib.metadata as md
import re
import shutil
import sys
from pathlib import Path, PurePosixPath
from typing import Dict, List

from packaging.requirements import Requirement

TORCH_KEPT_BINARIES = {"torch/bin/torch_shm_manager"}
TORCH_DROPPED_DIRS = ("torch/include/", "torch/test/", "torch/bin/")


def key(name: str) -> str:
    """A distribution name as PEP 503 normalizes it (typing-extensions == typing_extensions)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(names: List[str]) -> Dict[str, md.Distribution]:
    """The named distributions and, transitively, everything they require (no extras)."""
    found: Dict[str, md.Distribution] = {}
    todo = [(name, "the command line") for name in names]
    while todo:
        name, wanted_by = todo.pop()
        if key(name) in found:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            raise SystemExit(f"{name} (wanted by {wanted_by}) is not installed for {sys.executable}") from None
        found[key(name)] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append((req.name, dist.metadata["Name"]))
    return found


def wanted(path: str) -> bool:
    parts = PurePosixPath(path).parts
    if parts[0] == ".." or "__pycache__" in parts or path.endswith(".pyc"):
        return False
    if "tests" in parts[:-1]:  # a tests package; a module named tests.py (jinja2's) stays
        return False
    return path in TORCH_KEPT_BINARIES or not path.startswith(TORCH_DROPPED_DIRS)


def stage(dest: Path, dist: md.Distribution) -> tuple[int, int]:
    count = size = 0
    for file in dist.files or []:
        if not wanted(file.as_posix()):
            continue
        src = Path(str(dist.locate_file(file)))
        if not src.is_file():  # RECORD may list files pip did not keep (e.g. .pyc it never wrote)
            continue
        target = dest / file.as_posix()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
        count, size = count + 1, size + src.stat().st_size
    return count, size


def main(argv: List[str]) -> int:
    if len(argv) < 2:
        print("\n".join(__doc__.strip().splitlines()[-2:]), file=sys.stderr)
        return 2
    dists = sorted(closure(argv[1:]).values(), key=lambda d: key(d.metadata["Name"]))
    if argv[0] == "--list":
        print("\n".join(f"{dist.metadata['Name']} {dist.version}" for dist in dists))
        return 0
    for dist in dists:
        count, size = stage(Path(argv[0]), dist)
        if count == 0:
            print(f"{dist.metadata['Name']}: no files listed (installed without a RECORD?)", file=sys.stderr)
            return 1
        print(dist.metadata["Name"], dist.version, count, size)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
