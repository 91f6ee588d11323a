"""An opt-in memory limit for local replicas (run option ``memory_limit``; never set by default: a
default ``Resource`` carries 1024 MB that nobody asked for, so ``resource.memMB`` is not used).

How it is enforced depends on the machine:

* ``cgroup``: where a cgroup v2 hierarchy with the memory controller is writable, each replica runs in a
  cgroup of its own with ``memory.max``: the kernel kills the tree at the limit (counted in
  ``memory.events`` ``oom_kill``) and ``memory.peak`` gives the exact peak.
* ``rlimit``: otherwise ``RLIMIT_AS`` (address space) is set on the replica and inherited by its
  children: an allocation past the limit fails (Python raises MemoryError) instead of the process being
  killed. Address space counts mappings that are not resident, so set it with some headroom.

The replica is started through this module (``python -m jupyter_sched.schedulers.local.usage.limit``), which
applies the limit to itself and then ``exec``s the replica's command: same pid, no extra process. The
limit is also given to the replica in ``JUPYTER_SCHED_MEMORY_LIMIT`` (bytes).
"""

from __future__ import annotations

import os
import re
import resource
import sys
from typing import List, Optional

from jupyter_sched.specs import InvalidRunConfigException, runopts
from jupyter_sched.specs.status.usage import format_bytes, oom_message

LIMIT_ENV = "JUPYTER_SCHED_MEMORY_LIMIT"
CGROUP_ENV = "JUPYTER_SCHED_MEMORY_CGROUP"
CGROUP_ROOT = "/sys/fs/cgroup"
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_OOM_MARKERS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")


def add_memory_limit_opt(opts: runopts) -> None:
    opts.add(
        "memory_limit",
        str,
        "limit each replica's memory, e.g. 512m or 2g (docker's units; none by default). Enforced with a"
        " cgroup where one is writable, else with RLIMIT_AS (address space)",
        default=None,
    )


def parse_limit(text: object) -> Optional[int]:
    """Bytes of ``512m``/``2g``/``65536k``; None for an empty value. Raises InvalidRunConfigException (a
    ValueError) naming the option: a bad run option, refused before anything starts."""
    if text in (None, ""):
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)i?b?\s*", str(text).lower())
    if not match or float(match.group(1)) <= 0:
        raise InvalidRunConfigException(
            f"memory_limit={text!r}: give a positive size with a unit, e.g. memory_limit=512m or 2g", "memory_limit"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def enforcement() -> str:
    """``cgroup`` if a cgroup v2 memory controller is writable here, else ``rlimit``."""
    return "cgroup" if _cgroup_parent() is not None else "rlimit"


def _cgroup_parent() -> Optional[str]:
    """The cgroup v2 directory new replica cgroups go under: this process's own cgroup's parent
    (a cgroup with processes cannot have children with controllers), if it offers ``memory``."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = [ln.strip() for ln in f if ln.startswith("0::")]
        with open(os.path.join(CGROUP_ROOT, "cgroup.controllers")) as f:
            if "memory" not in f.read().split():
                return None
    except OSError:
        return None
    if not lines:
        return None
    own = os.path.join(CGROUP_ROOT, lines[0][3:].lstrip("/"))
    parent = os.path.dirname(own.rstrip("/")) if own.rstrip("/") != CGROUP_ROOT else CGROUP_ROOT
    try:
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            if "memory" not in f.read().split():
                return None
    except OSError:
        return None
    return parent if os.access(parent, os.W_OK) else None


def wrap_args(args: List[str], env: dict, limit: int, app_id: str, role: str, k: int) -> List[str]:
    """The argv that starts ``args`` under the limit; records the limit (and cgroup) in ``env``."""
    env[LIMIT_ENV] = str(limit)
    parent = _cgroup_parent()
    if parent is not None:
        env[CGROUP_ENV] = os.path.join(parent, f"jupyter_sched-{app_id}-{role}-{k}")
    return [sys.executable, "-m", "jupyter_sched.schedulers.local.usage.limit", str(limit), *args]


def limit_of(env: dict) -> Optional[int]:
    value = env.get(LIMIT_ENV)
    return int(value) if value else None


def cgroup_peak(env: dict) -> Optional[int]:
    """The exact peak of a replica's cgroup (None without one)."""
    path = env.get(CGROUP_ENV)
    return _read_int(os.path.join(path, "memory.peak")) if path else None


def cgroup_oom_killed(env: dict) -> bool:
    path = env.get(CGROUP_ENV)
    if not path:
        return False
    try:
        with open(os.path.join(path, "memory.events")) as f:
            events = dict(line.split() for line in f if line.strip())
    except (OSError, ValueError):
        return False
    return int(events.get("oom_kill", 0)) > 0


def remove_cgroup(env: dict) -> None:
    path = env.get(CGROUP_ENV)
    if path:
        try:
            os.rmdir(path)
        except OSError:
            pass


def limit_message(env: dict, exit_code: Optional[int], stderr_path: str, peak: Optional[int]) -> Optional[str]:
    """What to tell the user about a replica with a limit that failed at it, else None.

    cgroup: the kernel's ``oom_kill`` count says it was killed. rlimit: nothing is killed; an allocation
    failed, which shows as a non-zero exit with an out-of-memory error at the end of its stderr.
    """
    limit = limit_of(env)
    if limit is None or not exit_code:
        return None
    if env.get(CGROUP_ENV):
        return oom_message(limit, peak) if cgroup_oom_killed(env) else None
    try:
        with open(stderr_path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            tail = f.read()
    except OSError:
        return None
    if not any(marker in tail for marker in _OOM_MARKERS):
        return None
    return (
        f"failed: out of memory (limit {format_bytes(limit)}, peak {format_bytes(peak or 0)} in use: the limit"
        " also counts memory reserved but not used)"
    )


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _apply(limit: int) -> None:
    cgroup = os.environ.get(CGROUP_ENV)
    if cgroup:
        os.makedirs(cgroup, exist_ok=True)
        with open(os.path.join(cgroup, "memory.max"), "w") as f:
            f.write(str(limit))
        with open(os.path.join(cgroup, "memory.swap.max"), "w") as f:
            f.write("0")
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    else:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: List[str]) -> None:
    limit, args = int(argv[0]), argv[1:]
    try:
        _apply(limit)
    except OSError as e:
        sys.stderr.write(f"jupyter_sched: could not apply memory_limit={limit}: {e}\n")
        sys.exit(126)
    try:
        os.execvp(args[0], args)
    except OSError as e:
        sys.stderr.write(f"jupyter_sched: could not run {args[0]!r}: {e}\n")
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
