"""Shared helpers for the benchmark scripts: timing, medians, and the RESULT line format.

Every benchmark measures jupyter_sched and a raw baseline (Popen, plain file reads, the docker SDK) in
the same process, alternating run by run so background load hits both alike, and prints the ratio of
medians. Results are read by people (``RESULT`` lines) and by tools (``JSON`` lines).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Callable, Dict, List


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(xs: List[float]) -> float:
    return statistics.median(xs)


def fmt_ms(x: float) -> str:
    return f"{x * 1000:.2f} ms"


def result(name: str, ours: float, raw: float, unit: str = "s", higher_is_better: bool = False, **extra: object) -> None:
    """Prints one comparison; ``ratio`` is ours/raw (or raw/ours... see ``higher_is_better``)."""
    ratio = (ours / raw) if raw else float("nan")
    if unit == "s":
        shown = f"{fmt_ms(ours)} vs raw {fmt_ms(raw)}"
    else:
        shown = f"{ours:,.0f} {unit} vs raw {raw:,.0f} {unit}"
    print(f"RESULT {name}: {shown} -> ratio {ratio:.2f}x")
    data: Dict[str, object] = {"name": name, "ours": ours, "raw": raw, "unit": unit, "ratio": ratio}
    data.update(extra)
    print("JSON " + json.dumps(data))


def note(name: str, value: str, **extra: object) -> None:
    print(f"RESULT {name}: {value}")
    print("JSON " + json.dumps({"name": name, "value": value, **extra}))
