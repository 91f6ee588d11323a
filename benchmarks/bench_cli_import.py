"""The command line's start-up cost: ``import jupyter_sched.cli.main`` (``python -X importtime``, the module's
cumulative line), and the wall time of ``jupyter-sched --help`` and of ``jupyter-sched status`` on a handle
that does not exist, against a bare ``python -c pass`` (the interpreter's own start).

``--against REV`` measures a git revision's package beside this checkout's, alternating run by run (the
revision is extracted with ``git archive`` and put first on ``PYTHONPATH``), so a before/after pair sees the
same load. Usage: ``python benchmarks/bench_cli_import.py [--runs 10] [--against REV]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

from common import median

ROOT = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "jupyter-sched")
UNKNOWN = "local_cwd://default/none-0000000000"


def _env(tree: Optional[str]) -> Dict[str, str]:
    return {**os.environ, "PYTHONPATH": tree} if tree else dict(os.environ)


def _import_ms(tree: Optional[str]) -> float:
    """The cumulative time of ``jupyter_sched.cli.main`` in one fresh interpreter."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import jupyter_sched.cli.main"], cwd="/",
                         env=_env(tree), capture_output=True, text=True, check=True).stderr  # fmt: skip
    (line,) = [x for x in err.splitlines() if x.rstrip().endswith("| jupyter_sched.cli.main")]
    return int(line.split("|")[1]) / 1000


def _wall_ms(argv: List[str], tree: Optional[str] = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd="/", env=_env(tree), capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000


def _extract(rev: str, into: str) -> str:
    archive = subprocess.run(["git", "archive", rev, "jupyter_sched"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--against", metavar="REV", help="a git revision to measure beside this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees: Dict[str, Optional[str]] = {"this checkout": None}
        if args.against:
            trees[args.against] = _extract(args.against, tmp)
        times: Dict[str, List[float]] = {}
        for _ in range(args.runs):
            times.setdefault("python -c pass", []).append(_wall_ms([sys.executable, "-c", "pass"]))
            for name, tree in trees.items():
                times.setdefault(f"{name}: import jupyter_sched.cli.main", []).append(_import_ms(tree))
                times.setdefault(f"{name}: jupyter-sched --help", []).append(_wall_ms([CLI, "--help"], tree))
                times.setdefault(f"{name}: jupyter-sched status", []).append(_wall_ms([CLI, "status", UNKNOWN], tree))
    for what, ms in times.items():
        print(f"RESULT {what}: median {median(ms):.1f} ms (min {min(ms):.1f}, {len(ms)} runs)")


if __name__ == "__main__":
    main()
