"""What a reader follows stays inside the repository, on anyone's machine: every link in README and docs
resolves to a file of the checkout, no text points a reader at a relative path that leaves it, and the
tutorial notebooks' stored outputs name no machine's paths (only system ones, or scripts/notebooks.py's
``/path/to/...`` placeholders). Comparisons name TorchX rather than a vague "peer"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator, List

ROOT = Path(__file__).resolve().parent.parent
VAGUE = ("the " + "peer", "peer " + "interface")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target) and ![alt](target)
UPWARD = re.compile(r"(?<![\w.])((?:\.\./)+[\w.-]+(?:/[\w.-]+)*)")  # up one or more folders: a path to follow
ABSOLUTE = re.compile(r"(?<![\w.:/~$-])(/(?:[\w.-]+/)*[\w.-]+)")
SYSTEM = ("/tmp/", "/usr/", "/bin/", "/sbin/", "/dev/", "/proc/", "/sys/", "/etc/", "/var/", "/run/", "/opt/",
          "/path/to/", "/jupyter_sched/")  # fmt: skip
# /jupyter_sched/ is inside a docker replica: where its app's metrics directory is mounted, on every machine


def texts() -> Iterator[Path]:
    yield ROOT / "README.md"
    for folder, pattern in (("docs", "*.md"), ("jupyter_sched", "*.py"), ("tests", "*.py"), ("scripts", "*"),
                            ("examples", "*"), ("notebooks", "*.ipynb")):  # fmt: skip
        yield from (p for p in (ROOT / folder).rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)


def _inside(path: Path) -> bool:
    return path.resolve().is_relative_to(ROOT)


def test_every_link_in_readme_and_docs_resolves_inside_the_repository() -> None:
    broken: List[str] = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            path = (doc.parent / target.split("#")[0]).resolve()
            if not _inside(path) or not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_no_text_points_a_reader_at_a_path_outside_the_repository() -> None:
    found: List[str] = []
    for path in texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        for rel in UPWARD.findall(text):
            if not _inside(path.parent / rel):
                found.append(f"{path.relative_to(ROOT)}: {rel!r}")
        found += [f"{path.relative_to(ROOT)}: {word!r}" for word in VAGUE if word in text.lower()]
        found += [f"{path.relative_to(ROOT)}: the checkout's own path" for word in (str(ROOT) + "/",) if word in text]
    assert not found, found


def test_stored_notebook_outputs_name_no_machines_paths() -> None:
    found: List[str] = []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                text = json.dumps(output).replace("\\n", "\n").replace('\\"', '"')
                for absolute in ABSOLUTE.findall(text):
                    if absolute.count("/") > 1 and not (absolute + "/").startswith(SYSTEM):
                        found.append(f"{notebook.name}: {absolute}")
    assert not found, sorted(set(found))[:20]


def test_the_checks_above_catch_what_they_are_for(tmp_path: Path) -> None:
    up = "../"  # spelled apart, so that this file does not trip the check it tests
    assert UPWARD.findall(f"see {up}shared/design.md or {up}{up}x") == [f"{up}shared/design.md", f"{up}{up}x"]
    assert not _inside(ROOT / f"{up}shared/design.md") and _inside(ROOT / f"docs/{up}README.md")
    assert LINK.findall("[a](docs/usage.md) ![b](docs/img/x.png \"t\") [c](https://x.org)") == [
        "docs/usage.md", "docs/img/x.png", "https://x.org"]  # fmt: skip
    assert ABSOLUTE.findall('cwd: "/home/ana/proj/notebooks" and /tmp/x') == ["/home/ana/proj/notebooks", "/tmp/x"]


def test_the_scripts_name_only_test_paths_that_exist() -> None:
    """A lane that names a moved test file would stop with pytest's 'file or directory not found'."""
    missing = [
        f"{script.relative_to(ROOT)}: {path}"
        for script in sorted((ROOT / "scripts").rglob("*.sh"))
        for path in re.findall(r"(?<![\w/.-])tests/[\w/.*-]+", script.read_text(encoding="utf-8"))
        if not list(ROOT.glob(path.rstrip("/.")))
    ]
    assert not missing, missing
