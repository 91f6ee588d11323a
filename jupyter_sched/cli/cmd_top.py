"""``jupyter-sched top APP_HANDLE [--json] [--interval S]``: what each replica uses (CPU, memory, GPU).

In a terminal the table redraws every ``--interval`` seconds until the app ends (then it shows the
totals and returns) or Ctrl-C; piped, it prints one snapshot. ``--json`` prints one snapshot as a JSON
array with one object per replica (``role``, ``replica``, ``cpu_percent``, ``cpu_seconds``, ``rss_bytes``,
``peak_rss_bytes``, ``mem_limit_bytes``, and ``gpus`` when present).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import List

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.specs.status.usage import UsageSample, format_bytes

_CLEAR = "\x1b[H\x1b[2J"
HEADER = ("REPLICA", "CPU%", "CPU TIME", "MEM", "PEAK", "LIMIT", "GPU")


def _gpu_cell(sample: UsageSample) -> str:
    if not sample.gpus:
        return "-"
    return " ".join(
        f"{g.index}:{g.utilization_percent:.0f}%/{format_bytes(g.memory_used_bytes)}" for g in sample.gpus
    )


def render_table(samples: List[UsageSample]) -> str:
    """A fixed-width table, one row per replica; an ended replica shows ``ended`` in the CPU% column and
    its totals."""
    rows = [HEADER]
    for s in samples:
        rows.append((
            common.shown(f"{s.role}[{s.replica}]"),
            f"{s.cpu_percent:.0f}" if s.running else "ended",
            f"{s.cpu_seconds:.1f}s",
            format_bytes(s.rss_bytes) if s.running else "-",
            format_bytes(s.peak_rss_bytes),
            format_bytes(s.mem_limit_bytes),
            _gpu_cell(s),
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1])] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    if args.interval <= 0:
        raise CliUsageError(f"--interval {args.interval}: give a positive number of seconds, e.g. --interval 1")
    with common.open_runner(config) as runner:
        status = targets.require_status(runner, handle)
        try:
            samples = runner.usage(handle)
        except ValueError as e:
            raise CliError(str(e)) from None
        if args.json:
            print(json.dumps([s.to_json() for s in samples], indent=2))
            return 0
        if not sys.stdout.isatty():
            print(f"{handle}: {status.state}\n{render_table(samples)}")
            return 0
        try:
            while True:
                sys.stdout.write(f"{_CLEAR}{handle}: {status.state}  (every {args.interval:g}s, Ctrl-C to quit)\n")
                sys.stdout.write(render_table(samples) + "\n")
                sys.stdout.flush()
                if status.is_terminal():
                    return 0
                time.sleep(args.interval)
                status = targets.require_status(runner, handle)
                samples = runner.usage(handle)
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            return 0
