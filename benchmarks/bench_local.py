"""local_cwd against raw Popen and plain file reads, and against TorchX's local scheduler, in one process.

    .venv/bin/python benchmarks/bench_local.py [--runs 7] [--lines 1000000] [--only submit,wait]

1. submit latency, 1/8/32 replicas, ``scheduler.submit`` vs bare ``Popen`` with file redirection, and vs
   TorchX's ``LocalScheduler.submit`` (the ``[torchx]`` extra; left out when TorchX is not installed)
2. exit-to-finished seen by ``Runner.wait``: a job that ends on its own, from its exit to ``wait`` returning;
   beside it ``Popen.wait`` and TorchX's ``Runner.wait(wait_interval=0.1)`` (its default interval is 10 s)
3. ``log_iter`` throughput over a 1M-line log vs ``for line in open(f)``
4. tail latency: a line written by the replica to the line yielded by a following ``log_iter``
5. reader memory: peak RSS growth while reading logs of 100k and 1M lines (flat = bounded)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import median, note, result, timed  # noqa: E402

from jupyter_sched.runner import get_runner  # noqa: E402
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler  # noqa: E402
from jupyter_sched.specs import AppDef, Role  # noqa: E402


def torchx_local() -> Optional[Any]:
    """TorchX's local scheduler module, or None (with a note) when TorchX is not installed."""
    try:
        from torchx.schedulers import local_scheduler
    except ImportError:
        note("TorchX", "not installed: its columns are left out (pip install 'jupyter_sched[torchx]')")
        return None
    return local_scheduler


def bench_submit(runs: int, tmp: str) -> None:
    sched = create_cwd_scheduler("bench", log_dir=tmp)
    sched.submit(AppDef("warm", [Role("r", "x", entrypoint="true")]), {})  # starts the IO thread and reaper
    tx_local = torchx_local()
    tx = tx_local.create_scheduler("bench", cache_size=10_000) if tx_local is not None else None
    for n in (1, 8, 32):
        app = AppDef("echo", [Role("r", "x", entrypoint="echo", args=["hi"], num_replicas=n)])
        ours, raw, theirs = [], [], []
        if tx is not None:
            from torchx import specs as tx_specs

            tx_app = tx_specs.AppDef("echo", [tx_specs.Role("r", "x", entrypoint="echo", args=["hi"], num_replicas=n)])
            tx.submit(tx_app, {})  # warm
        for i in range(runs):
            ours.append(timed(lambda: sched.submit(app, {})))
            if tx is not None:
                time.sleep(0.05)
                theirs.append(timed(lambda: tx.submit(tx_app, {})))
            out_dir = tempfile.mkdtemp(dir=tmp)

            def popen_all() -> None:
                procs = []
                for k in range(n):
                    with open(os.path.join(out_dir, f"{k}.log"), "wb") as f:
                        procs.append(subprocess.Popen(["echo", "hi"], stdout=f, stderr=subprocess.STDOUT))
                popen_all.procs = procs  # type: ignore[attr-defined]

            raw.append(timed(popen_all))
            for p in popen_all.procs:  # type: ignore[attr-defined]
                p.wait()
            time.sleep(0.05)
        result(f"submit {n} replica(s)", median(ours), median(raw), replicas=n)
        if theirs:
            result(f"submit {n} replica(s), against TorchX", median(ours), median(theirs), replicas=n,
                   note="raw = TorchX's LocalScheduler.submit")  # fmt: skip
    sched.close()
    if tx is not None:
        tx.close()


def bench_wait(runs: int, tmp: str) -> None:
    """The replica writes its exit time just before exiting; wait() returns as soon as it sees the exit.
    Ours, a bare ``Popen.wait`` and TorchX's runner (when installed) alternate run by run."""
    stamp = os.path.join(tmp, "exit_time")
    code = f"import time; time.sleep(0.05); open({stamp!r}, 'w').write(repr(time.time()))"
    app = AppDef("wait", [Role("r", "x", entrypoint=sys.executable, args=["-c", code])])
    tx_runner: Any = None
    if torchx_local() is not None:
        from torchx import specs as tx_specs
        from torchx.runner import get_runner as tx_get_runner

        tx_app = tx_specs.AppDef("wait", [tx_specs.Role("r", "x", entrypoint=sys.executable, args=["-c", code])])
        tx_runner = tx_get_runner("bench")

    def lag() -> float:
        return time.time() - float(open(stamp).read())

    lags, raw, theirs = [], [], []
    with get_runner("bench", log_dir=tmp) as runner:
        for _ in range(runs):
            runner.wait(runner.run(app, "local_cwd"))
            lags.append(lag())
            subprocess.Popen([sys.executable, "-c", code]).wait()
            raw.append(lag())
            if tx_runner is not None:
                tx_runner.wait(tx_runner.run(tx_app, "local_cwd", {"log_dir": tmp}), wait_interval=0.1)
                theirs.append(lag())
    result("exit-to-finished seen by wait (50 ms job)", median(lags), median(raw), max_ms=max(lags) * 1000)
    if tx_runner is not None:
        tx_runner.close()
        result("exit-to-finished seen by wait, against TorchX", median(lags), median(theirs),
               note="raw = TorchX's Runner.wait(wait_interval=0.1)")  # fmt: skip


def bench_throughput(runs: int, lines: int, tmp: str) -> None:
    sched = create_cwd_scheduler("bench", log_dir=tmp)
    app = AppDef("seq", [Role("r", "x", entrypoint="seq", args=[str(lines)])])
    app_id = sched.submit(app, {})
    while not sched.describe(app_id).state.is_terminal:
        sched.wait_for_change(app_id, 1.0)
    log = os.path.join(tmp, "bench", app_id, "r", "0", "combined.log")
    ours, raw = [], []
    for _ in range(runs):
        count = [0]

        def read_ours() -> None:
            n = 0
            for _ in sched.log_iter(app_id, "r", 0):
                n += 1
            count[0] = n

        def read_raw() -> None:
            n = 0
            with open(log, encoding="utf-8", errors="replace") as f:
                for _ in f:
                    n += 1

        ours.append(timed(read_ours))
        raw.append(timed(read_raw))
        assert count[0] == lines, count
    result(
        f"log_iter throughput, {lines:,} lines",
        lines / median(ours),
        lines / median(raw),
        unit="lines/s",
        higher_is_better=True,
    )
    sched.close()


def bench_tail_latency(samples: int, tmp: str) -> None:
    """The replica prints its clock in each line at jittered 5-15 ms intervals; the follower compares."""
    sched = create_cwd_scheduler("bench", log_dir=tmp)
    code = (
        "import random, sys, time\n"
        f"for i in range({samples}):\n"
        "    time.sleep(random.uniform(0.005, 0.015)); print(repr(time.time()), flush=True)\n"
    )
    app_id = sched.submit(AppDef("tail", [Role("r", "x", entrypoint=sys.executable, args=["-c", code])]), {})
    lags = sorted(time.time() - float(line) for line in sched.log_iter(app_id, "r", 0, should_tail=True))
    note(
        "tail latency (line written -> yielded, combined stream)",
        f"median {lags[len(lags) // 2] * 1000:.2f} ms, p95 {lags[int(len(lags) * 0.95)] * 1000:.2f} ms,"
        f" max {lags[-1] * 1000:.2f} ms (n={len(lags)})",
        median_ms=lags[len(lags) // 2] * 1000,
    )
    sched.close()


def bench_memory(tmp: str) -> None:
    """Peak RSS growth of a fresh reader process over logs of 100k and 1M lines."""
    code = (
        "import resource, sys\n"
        "from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler\n"
        "from jupyter_sched.specs import AppDef, Role\n"
        "s = create_cwd_scheduler('mem', log_dir=sys.argv[2])\n"
        "a = s.submit(AppDef('seq', [Role('r', 'x', entrypoint='seq', args=[sys.argv[1]])]), {})\n"
        "while not s.describe(a).state.is_terminal: s.wait_for_change(a, 1.0)\n"
        "def hwm():\n"
        "    return int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])\n"
        "before = hwm()\n"
        "n = sum(1 for _ in s.log_iter(a, 'r', 0))\n"
        "print(n, hwm() - before)\n"
    )
    growth = {}
    for n in (100_000, 1_000_000):
        out = subprocess.run([sys.executable, "-c", code, str(n), tmp], check=True, capture_output=True, text=True)
        got, kb = out.stdout.split()
        assert int(got) == n
        growth[n] = int(kb)
    note(
        "reader peak RSS growth",
        f"{growth[100_000] / 1024:.1f} MB for 100k lines, {growth[1_000_000] / 1024:.1f} MB for 1M lines",
        kb=growth,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--tail-samples", type=int, default=200)
    parser.add_argument("--only", default="", help="comma-separated: submit, wait, throughput, tail, memory")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        if not only or "submit" in only:
            bench_submit(args.runs, tmp)
        if not only or "wait" in only:
            bench_wait(args.runs, tmp)
        if not only or "throughput" in only:
            bench_throughput(max(3, args.runs // 2), args.lines, tmp)
        if not only or "tail" in only:
            bench_tail_latency(args.tail_samples, tmp)
        if not only or "memory" in only:
            bench_memory(tmp)


if __name__ == "__main__":
    main()
