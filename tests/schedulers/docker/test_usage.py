"""Usage of docker replicas on the real engine: live stats, one stream per running container closed
when it ends, totals kept after the end, and an out-of-memory kill named with limit and peak."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest

from jupyter_sched.schedulers.docker_scheduler import DockerScheduler
from jupyter_sched.specs import AppDef, AppState, Role, resource

from ..helpers import wait_until
from ..usage_programs import MB, hog_code
from .fixtures import (  # noqa: F401 - fixtures
    PYTHON,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    session_name_fixture,
)

pytestmark = pytest.mark.timeout(180)

# 4 MB more every 200 ms, touched: it reaches the 64 MB limit after about 3 s, so the engine's stats (one
# sample a second) see it growing; a container killed within a second may end before its first sample
GROW = (
    "import time\nchunks = []\nfor i in range(100):\n"
    "    chunks.append(bytearray(4 << 20))\n    for j in range(0, 4 << 20, 4096):\n        chunks[-1][j] = 1\n"
    "    time.sleep(0.2)\n"
)


def py(code: str, name: str, mem_mb: int = 1024, num_replicas: int = 1) -> AppDef:
    return AppDef(name, [Role("main", PYTHON, entrypoint="python3", args=["-c", code], num_replicas=num_replicas,
                              resource=resource(cpu=1, gpu=0, memMB=mem_mb))])


def _stats_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("jsched-stats-")]


def test_live_stats_of_a_container_using_200mb_and_a_core(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(py(hog_code(200), "hog"), {})
    seen = []

    def busy_and_big() -> bool:  # each at some sample: a loaded 2-core machine lends a spinner less now and then
        time.sleep(0.5)  # poll interval: each call asks the backend
        seen.extend(docker_sched.usage(app_id))
        return any(s.rss_bytes >= 180 * MB for s in seen) and any(s.cpu_percent >= 50 for s in seen)
    wait_until(busy_and_big, 170, "a stats sample with >= 180 MB and >= 50% CPU")
    live = seen[-1]
    assert (live.role, live.replica, live.running, live.mem_limit_bytes) == ("main", 0, True, 1024 * MB)
    assert docker_sched._usage.streams() == 1  # noqa: SLF001 - one connection per running container
    docker_sched.usage(app_id)
    assert docker_sched._usage.streams() == 1  # noqa: SLF001 - asking again opens no second one

    docker_sched.cancel(app_id)
    wait_until(lambda: docker_sched.describe(app_id).state.is_terminal, 60, "the cancel")
    rep = docker_sched.describe(app_id).roles_statuses[0].replicas[0]
    assert rep.usage is not None and rep.usage.peak_rss_bytes >= 180 * MB and rep.usage.cpu_seconds > 0
    # The stream is closed once the engine reports the container ended.
    wait_until(lambda: docker_sched._usage.streams() == 0, 30, "the stats stream to close")  # noqa: SLF001
    wait_until(lambda: not _stats_threads(), 30, "the stream's thread (which closes its response) to end")

    # Another process sees the kept totals.
    script = (
        "from jupyter_sched.schedulers.docker_scheduler import DockerScheduler\n"
        f"s = DockerScheduler({docker_sched.session_name!r})\n"
        f"print(s.describe({app_id!r}).roles_statuses[0].replicas[0].usage.peak_rss_bytes)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == rep.usage.peak_rss_bytes


def test_a_container_over_its_memory_limit_is_named_out_of_memory(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(py(GROW, "oom", mem_mb=64), {})
    wait_until(lambda: docker_sched.describe(app_id).state.is_terminal, 90, "the OOM kill")
    desc = docker_sched.describe(app_id)
    rep = desc.roles_statuses[0].replicas[0]
    assert desc.state == AppState.FAILED and rep.state == AppState.FAILED and rep.exit_code == 137
    message = rep.structured_error_msg
    # the last sample before the kill is quoted when it saw the climb (>= 90% of the limit), else "unknown"
    match = re.fullmatch(r"killed: out of memory \(limit 64 MiB, peak (unknown|(\d+(\.\d)?) MiB)\)", message)
    assert match and (match.group(1) == "unknown" or float(match.group(2)) >= 0.9 * 64), message
    assert rep.msg == rep.structured_error_msg
    assert "killed: out of memory (limit 64 MiB" in desc.msg
    [final] = docker_sched.usage(app_id)
    assert not final.running and final.mem_limit_bytes == 64 * MB and 0 < final.peak_rss_bytes <= 64 * MB


# ~10 MiB while the engine samples it, then 200 MiB in one allocation: killed between two samples
BURST = "import time\ntime.sleep(2.5)\nb = b'x' * (200 << 20)\n"
# ~60 MiB for 3 s (the samples see it), then 16 MiB more: killed at the limit after a sample near it
HOLD = "import time\nb = b'x' * (57 << 20)\ntime.sleep(3)\nc = b'y' * (16 << 20)\n"


def test_an_oom_kill_between_two_samples_says_the_peak_is_unknown(docker_sched: DockerScheduler) -> None:
    """The engine samples once a second: the highest sample of a container that took its memory at once is
    its idle size, far below the limit it was killed at. That stale value is quoted nowhere."""
    burst = docker_sched.submit(py(BURST, "burst", mem_mb=64), {})
    hold = docker_sched.submit(py(HOLD, "hold", mem_mb=64), {})
    for app_id in (burst, hold):
        wait_until(lambda: len(docker_sched.usage(app_id)) == 1, 60, "a first stats sample")  # noqa: B023
    for app_id in (burst, hold):
        wait_until(lambda: docker_sched.describe(app_id).state.is_terminal, 90, "the OOM kill")  # noqa: B023
    rep = docker_sched.describe(burst).roles_statuses[0].replicas[0]
    assert rep.exit_code == 137 and rep.structured_error_msg == "killed: out of memory (limit 64 MiB, peak unknown)"
    assert rep.usage is not None and rep.usage.format().startswith("peak unknown, limit 64 MiB, cpu ")
    rep = docker_sched.describe(hold).roles_statuses[0].replicas[0]
    match = re.fullmatch(r"killed: out of memory \(limit 64 MiB, peak (\d+(\.\d)?) MiB\)", rep.structured_error_msg)
    assert rep.exit_code == 137 and match and 57.6 <= float(match.group(1)) <= 64, rep.structured_error_msg
    assert rep.usage is not None and rep.usage.format().startswith(f"peak {match.group(1)} MiB of 64 MiB")


def test_usage_of_many_containers_keeps_one_stream_each(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(py("import time; time.sleep(600)", "many", num_replicas=3), {})
    wait_until(lambda: len(docker_sched.usage(app_id)) == 3, 60, "three samples")
    assert [(s.role, s.replica) for s in docker_sched.usage(app_id)] == [("main", 0), ("main", 1), ("main", 2)]
    assert docker_sched._usage.streams() == 3  # noqa: SLF001
    docker_sched.cancel(app_id)
    wait_until(lambda: docker_sched._usage.streams() == 0, 60, "every stream to close")  # noqa: SLF001
