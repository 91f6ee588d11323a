"""The program of ``utils.booth``: evaluates Booth's function at (x1, x2) and records the result.

Booth's function, ``(x1 + 2*x2 - 7)^2 + (2*x1 + x2 - 5)^2``, has its minimum 0 at (1, 3): a cheap
objective for trying out hyper-parameter searches. The result is stored the way TorchX's
``FsspecResultTracker`` stores one, so either side can read the other's: the file ``TRACKER_BASE/TRIAL``
holds the JSON object ``{"booth_eval": VALUE}`` (indented, so a person can read it too).

Run: ``python -m jupyter_sched.components.apps.booth --x1 1 --x2 3 --trial_idx 0 --tracker_base DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional


def booth(x1: float, x2: float) -> float:
    """Booth's function at (x1, x2)."""
    return (x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2


def result_path(tracker_base: str, key: object) -> str:
    """Where the result of trial ``key`` is kept below ``tracker_base``."""
    return os.path.join(tracker_base, str(key))


def write_result(tracker_base: str, key: object, results: Dict[str, Any]) -> str:
    """Stores ``results`` for ``key`` (replacing what was there) and returns the file's path."""
    path = result_path(tracker_base, key)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    os.replace(tmp, path)  # a reader never sees half a file
    return path


def read_result(tracker_base: str, key: object) -> Dict[str, Any]:
    """The results stored for ``key`` (``{}`` if there are none)."""
    try:
        with open(result_path(tracker_base, key), encoding="utf-8") as f:
            out: Dict[str, Any] = json.load(f)
            return out
    except FileNotFoundError:
        return {}


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="evaluates Booth's function at (x1, x2)")
    parser.add_argument("--x1", type=float, required=True)
    parser.add_argument("--x2", type=float, required=True)
    parser.add_argument("--trial_idx", type=int, default=0, help="the trial's key in the results")
    parser.add_argument("--tracker_base", required=True, help="the directory results are kept in")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    value = booth(args.x1, args.x2)
    path = write_result(args.tracker_base, args.trial_idx, {"booth_eval": value})
    print(f"booth({args.x1:g}, {args.x2:g}) = {value:g} -> {path}")


if __name__ == "__main__":
    main()
