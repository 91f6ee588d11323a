"""Nothing in the code, README, docs, tests or scripts points outside the repository, and comparisons name
TorchX rather than a vague "peer". The tutorial notebooks' stored outputs are checked too (no machine paths)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = ("../" + "shared/", "/work/" + "shared", "/work/" + "main", "/work/" + "wt/")
VAGUE = ("the " + "peer", "peer " + "interface")


def texts() -> Iterator[Path]:
    yield ROOT / "README.md"
    for folder, pattern in (("docs", "*.md"), ("jupyter_sched", "*.py"), ("tests", "*.py"), ("scripts", "*"),
                            ("examples", "*"), ("notebooks", "*.ipynb")):  # fmt: skip
        yield from (p for p in (ROOT / folder).rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)


def test_nothing_points_outside_the_repository_or_says_the_peer() -> None:
    found = []
    for path in texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {word!r}" for word in OUTSIDE if word in text]
        found += [f"{path.relative_to(ROOT)}: {word!r}" for word in VAGUE if word in text.lower()]
    assert not found, found
