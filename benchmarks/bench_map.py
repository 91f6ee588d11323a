"""``jupyter_sched.map`` of a trivial function over N items against joblib and concurrent.futures, alternating.

    pip install joblib     # the peer, for this benchmark only: not a dependency of jupyter_sched
    .venv/bin/python benchmarks/bench_map.py [--n 10000] [--concurrent 2] [--rounds 3] [--chunksize N]

Each round runs, one after the other in this process, ``jupyter_sched.map(f, range(N),
max_concurrent=C).results()`` on local_cwd (chunks forked from the warm zygote) with map's own chunk size
(about four chunks per slot, unless ``--chunksize`` is given) and with one chunk per slot
(``chunksize=ceil(N / C)``: the fewest apps), ``joblib.Parallel(n_jobs=C)`` over the N calls on its warm
worker pool (the issue's aim: ours within 2x), and ``concurrent.futures.ProcessPoolExecutor(C).map`` on a
warm pool, with its default ``chunksize=1`` and with map's chunk size. Ratios of medians over the rounds.

It also reports what a map leaves on disk: the bytes (and disk blocks) of its chunks' job directories
and app log directories, per item, and how many directories that is; and, for scale, the time and disk
per item of a short map with ``chunksize=1`` (``--per-item``, default 100 items: an app per item, what
every map did before chunking).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import median, note, result, timed  # noqa: E402

import jupyter_sched  # noqa: E402
from jupyter_sched.functions.sweeps.maps import chunk_size  # noqa: E402


def trivial(x: int) -> int:
    return x + 1


def footprint(m: Any) -> Tuple[int, int, int]:
    """``(bytes, bytes of disk blocks, directories)`` of the map's app log and job directories."""
    root = m.runner.shared_root("local_cwd", None)
    size = blocks = dirs = 0
    for path, _, files in os.walk(root):
        if m.name not in path:
            continue
        dirs += os.path.basename(path).startswith(m.name)
        for name in files:
            st = os.stat(os.path.join(path, name))
            size += st.st_size
            blocks += st.st_blocks * 512
    return size, blocks, dirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="items (default 10,000)")
    parser.add_argument("--concurrent", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunksize", type=int, default=None, help="map's chunk size (default: its own rule)")
    parser.add_argument("--per-item", type=int, default=100, help="items of the chunksize=1 map (0: none)")
    args = parser.parse_args()
    n, c = args.n, args.concurrent
    size = args.chunksize or chunk_size(n, c)
    expected = [trivial(x) for x in range(n)]
    try:
        joblib: Any = __import__("joblib")  # a peer for this benchmark only: not a dependency
    except ImportError:
        joblib = None
        note("joblib", "not installed: its column is left out (pip install joblib)")
    jupyter_sched.submit(trivial, 1).result()  # warm: the runner, its IO thread, reaper and zygote
    pool = joblib.Parallel(n_jobs=c) if joblib is not None else None
    if pool is not None:
        pool(joblib.delayed(trivial)(x) for x in range(c))  # its workers start here, once
    executor = concurrent.futures.ProcessPoolExecutor(c)
    list(executor.map(trivial, range(c)))  # its workers start here, once
    times: Dict[str, List[float]] = {k: [] for k in ("ours", "ours_per_slot", "joblib", "futures_1", "futures_chunked")}
    maps: List[Any] = []
    per_slot = -(-n // c)

    def ours(chunksize: Optional[int] = args.chunksize) -> None:
        m = jupyter_sched.map(trivial, range(n), chunksize=chunksize, max_concurrent=c)
        assert m.results() == expected
        maps[:] = [*maps[-1:], m]  # the last two only: maps kept alive would slow the collector's passes

    def check(values: List[int]) -> None:
        assert values == expected

    for _ in range(args.rounds):
        times["ours"].append(timed(ours))
        times["ours_per_slot"].append(timed(lambda: ours(per_slot)))
        if pool is not None:
            times["joblib"].append(timed(lambda: check(pool(joblib.delayed(trivial)(x) for x in range(n)))))
        times["futures_1"].append(timed(lambda: check(list(executor.map(trivial, range(n))))))
        times["futures_chunked"].append(timed(lambda: check(list(executor.map(trivial, range(n), chunksize=size)))))
    executor.shutdown()
    label = f"map of a trivial function over {n:,} items, {c} at a time (chunks of {size:,}: {-(-n // size)} apps)"
    ours_t = median(times["ours"])
    if times["joblib"]:
        joblib_t = median(times["joblib"])
        result(f"{label}, vs joblib Parallel(n_jobs={c}), warm pool", ours_t, joblib_t, aim="<= 2x")
        result(f"map over {n:,} items, one chunk per slot (chunksize={per_slot:,}: {c} apps), vs joblib"
               f" Parallel(n_jobs={c}), warm pool", median(times["ours_per_slot"]), joblib_t, aim="<= 2x")  # fmt: skip
    result(f"{label}, vs ProcessPoolExecutor({c}).map, chunksize=1, warm pool", ours_t, median(times["futures_1"]))
    result(f"{label}, vs ProcessPoolExecutor({c}).map, chunksize={size}, warm pool", ours_t,
           median(times["futures_chunked"]))  # fmt: skip
    size_b, blocks_b, dirs = footprint(maps[-2])  # map's own chunk size
    note(
        f"disk left by a map of {n:,} items",
        f"{size_b:,} bytes ({blocks_b:,} in disk blocks) in {dirs} directories: {size_b / n:,.1f} bytes"
        f" ({blocks_b / n:,.1f} in blocks) per item",
        bytes=size_b, blocks=blocks_b, directories=dirs, items=n,
    )  # fmt: skip
    if args.per_item:
        k = args.per_item
        small: List[Any] = []

        def per_item() -> None:
            small.append(jupyter_sched.map(trivial, range(k), chunksize=1, max_concurrent=c))
            assert small[0].results() == expected[:k]

        took = timed(per_item)
        size_b, blocks_b, dirs = footprint(small[0])
        note(
            f"chunksize=1 (an app per item, as before chunking) over {k} items",
            f"{took / k * 1000:.1f} ms per item; {size_b / k:,.0f} bytes ({blocks_b / k:,.0f} in disk blocks)"
            f" and {dirs / k:.0f} directories per item",
            seconds=took, bytes=size_b, blocks=blocks_b, directories=dirs, items=k,
        )  # fmt: skip

if __name__ == "__main__":
    main()
