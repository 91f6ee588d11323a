"""A row's metrics (``frontend.jobs.metrics.LastValues``): which keys (those with a goal first, then the
others, each alphabetical, at most 8), strict-JSON values, and each summary file read again only when its
mtime or size changed, so a listing of many apps does not re-read unchanged summaries."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional

from jupyter_sched.frontend.jobs.metrics import LastValues, last_values
from jupyter_sched.frontend.jobs.rows import MetricLast
from jupyter_sched.track.layout import SUMMARY_SUFFIX, replica_stem


def stats(last: Any, goal: Optional[str] = None, lo: Any = 0.0, hi: Any = 1.0) -> Dict[str, Any]:
    return {"count": 3, "last": last, "last_step": 2, "min": lo, "min_step": 0, "max": hi, "max_step": 1,
            "goal": goal}  # fmt: skip


class Dirs:
    """What :class:`LastValues` asks of a Runner: an app's metrics directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.asked = 0

    def metrics_dir(self, handle: str) -> str:
        self.asked += 1
        return str(self.directory)


def write(directory: Path, role: str, metrics: Dict[str, Any], mtime: float) -> None:
    path = directory / (replica_stem(role, 0) + SUMMARY_SUFFIX)
    path.write_text(json.dumps({"v": 1, "metrics": metrics, "goals": {}, "summary": {}}))
    os.utime(path, (mtime, mtime))


def test_goals_first_then_alphabetical_at_most_eight_strict_json() -> None:
    metrics = {f"k{i:02d}": stats(float(i)) for i in range(12)}
    metrics.update(zeta=stats("NaN", "max", hi=7.5), alpha=stats("-Infinity", "min", lo="-Infinity"))
    metrics["bad key"] = stats(1.0)
    got = last_values({"metrics": metrics}, 8)
    assert got is not None
    assert [m.key for m in got] == ["alpha", "zeta", "k00", "k01", "k02", "k03", "k04", "k05"]
    assert got[0] == MetricLast("alpha", "-Infinity", 2, "-Infinity", "min")
    assert got[1] == MetricLast("zeta", "NaN", 2, 7.5, "max")
    assert got[2] == MetricLast("k00", 0.0, 2, None, None)
    assert last_values({"metrics": {}}, 8) is None and last_values(None, 8) is None


def test_a_summary_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    runner = Dirs(tmp_path)
    cache = LastValues()
    assert cache.of(runner, "h", None) is None, "no role known yet: nothing read"
    assert cache.of(runner, "h", "train er") is None, "no summary yet"
    write(tmp_path, "train er", {"loss": stats(0.5, "min")}, 1_000_000.0)
    first = cache.of(runner, "h", "train er")
    assert first == [MetricLast("loss", 0.5, 2, 0.0, "min")] and cache.reads == 1
    for _ in range(1000):
        assert cache.of(runner, "h", "train er") == first
    assert cache.reads == 1 and runner.asked == 1, "unchanged: neither read again nor its directory asked again"
    write(tmp_path, "train er", {"loss": stats(0.25, "min")}, 1_000_001.0)
    assert cache.of(runner, "h", "train er") == [MetricLast("loss", 0.25, 2, 0.0, "min")] and cache.reads == 2
