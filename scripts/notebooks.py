"""Builds the tutorial notebooks in notebooks/ from their sources in notebooks/src/, and executes them.

    .venv/bin/python scripts/notebooks.py                  # rebuild every notebook, execute, store outputs
    .venv/bin/python scripts/notebooks.py quickstart       # only notebooks/quickstart.ipynb
    .venv/bin/python scripts/notebooks.py --no-execute     # cells only (outputs dropped)
    .venv/bin/python scripts/notebooks.py --check          # exit 1 if an .ipynb's cells differ from its source

A source is a Python file in the "percent" format: ``# %%`` starts a code cell, ``# %% [markdown]`` a
markdown cell (its lines start with ``# ``), and ``tags=[...]`` after either sets the cell's tags (e.g.
``# %% tags=["nbval-ignore-output"]``). Lines before the first ``# %%`` are notes for maintainers and are
not part of the notebook.

Executing stores the outputs nbval compares against (``pytest --nbval``, see tests/notebooks/). It runs with
the notebook's directory as the working directory and a throwaway ``JUPYTER_SCHED_LOG_DIR``, through this
interpreter's ``python3`` kernel, headless and without widget state, as papermill or ``nbconvert --execute``
would: each job cell keeps its record (final state and log tail) in ``text/html`` and ``text/plain``. The
stored outputs then name no path of the machine that ran them: the checkout, the interpreter's prefix, the
home directory and the PATH are replaced by neutral stand-ins (``scrub``), which notebooks/sanitize.cfg
maps to the same tokens as the real paths of a fresh run. Edit the source, never the .ipynb by hand:
--check (run by the tests) fails when they drift apart.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
SOURCES = NOTEBOOKS / "src"

_MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?(?P<rest>.*)$")
_TAGS = re.compile(r"tags=(\[[^\]]*\])")
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def _trim(lines: List[str]) -> str:
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def parse(source: Path) -> nbformat.NotebookNode:
    """The notebook (cells only) that ``source`` describes."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    kind: Optional[str] = None
    tags: List[str] = []
    body: List[str] = []

    def flush() -> None:
        if kind is None:
            return
        if kind == "markdown":
            text = _trim([re.sub(r"^# ?", "", line) for line in body])
            cell = nbformat.v4.new_markdown_cell(text)
        else:
            cell = nbformat.v4.new_code_cell(_trim(list(body)))
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)

    for line in source.read_text().splitlines():
        match = _MARKER.match(line)
        if match:
            flush()
            kind = "markdown" if match.group("md") else "code"
            found = _TAGS.search(match.group("rest"))
            tags = json.loads(found.group(1)) if found else []
            body = []
        elif kind is not None:
            body.append(line)
    flush()
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{source.stem.replace('_', '-')}-{i:02d}"
    return nb


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int = 600) -> None:
    """Runs every cell in a fresh kernel and stores the outputs (and widget state) in ``nb``."""
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="jsched-notebooks-") as state:
        old = os.environ.get("JUPYTER_SCHED_LOG_DIR")
        os.environ["JUPYTER_SCHED_LOG_DIR"] = state
        try:
            NotebookClient(
                nb,
                timeout=timeout,
                kernel_name="python3",
                resources={"metadata": {"path": str(cwd)}},
                record_timing=False,
                coalesce_streams=True,
                store_widget_state=False,
            ).execute()
        finally:
            if old is None:
                os.environ.pop("JUPYTER_SCHED_LOG_DIR", None)
            else:
                os.environ["JUPYTER_SCHED_LOG_DIR"] = old


PATH_STANDIN = "/usr/local/bin:/usr/bin:/bin"


def _replacements() -> List[tuple]:
    """(machine-specific text, stand-in), longest first, each also in its JSON-escaped form."""
    pairs = {
        os.environ.get("PATH", ""): PATH_STANDIN,
        str(REPO): "/path/to/jupyter_sched",
        sys.prefix: "/path/to/venv",
        os.path.realpath(sys.prefix): "/path/to/venv",
        os.path.expanduser("~"): "~",
    }
    pairs = {k: v for k, v in pairs.items() if k and len(k) > 1}
    out = sorted(pairs.items(), key=lambda kv: -len(kv[0]))
    return out + [(json.dumps(k)[1:-1], json.dumps(v)[1:-1]) for k, v in out if json.dumps(k)[1:-1] != k]


def scrub(nb: nbformat.NotebookNode) -> int:
    """Replaces the machine's paths in every stored output (text, HTML, JSON); returns how many outputs
    changed."""
    replacements = _replacements()

    def clean(value: object) -> object:
        if isinstance(value, str):
            for old, new in replacements:
                value = value.replace(old, new)
            return value
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    changed = 0
    for cell in nb.cells:
        for i, out in enumerate(cell.get("outputs", [])):
            cleaned = nbformat.from_dict(clean(out))
            if cleaned != out:
                cell.outputs[i] = cleaned
                changed += 1
    return changed


def cell_sources(nb: nbformat.NotebookNode) -> List[tuple]:
    return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]


def check(names: List[str]) -> List[str]:
    """Names whose .ipynb is missing or whose cells differ from the source."""
    stale = []
    for name in names:
        target = NOTEBOOKS / f"{name}.ipynb"
        if not target.exists() or cell_sources(nbformat.read(str(target), as_version=4)) != cell_sources(
            parse(SOURCES / f"{name}.py")
        ):
            stale.append(name)
    return stale


def all_names() -> List[str]:
    return sorted(p.stem for p in SOURCES.glob("*.py") if not p.name.startswith("_"))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="notebooks to build (default: all sources)")
    parser.add_argument("--no-execute", action="store_true", help="write cells only, without outputs")
    parser.add_argument("--check", action="store_true", help="only check that the .ipynb files match")
    args = parser.parse_args(argv)
    names = args.names or all_names()
    unknown = [n for n in names if not (SOURCES / f"{n}.py").exists()]
    if unknown:
        parser.error(f"no source for {', '.join(unknown)} in {SOURCES} (have: {', '.join(all_names())})")
    if args.check:
        stale = check(names)
        for name in stale:
            print(f"notebooks/{name}.ipynb does not match notebooks/src/{name}.py;"
                  f" run: .venv/bin/python scripts/notebooks.py {name}")  # fmt: skip
        return 1 if stale else 0
    for name in names:
        started = time.monotonic()
        nb = parse(SOURCES / f"{name}.py")
        if not args.no_execute:
            execute(nb, NOTEBOOKS)
            scrub(nb)
        nbformat.validate(nb)
        nbformat.write(nb, str(NOTEBOOKS / f"{name}.ipynb"))
        print(f"notebooks/{name}.ipynb: {len(nb.cells)} cells ({time.monotonic() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
