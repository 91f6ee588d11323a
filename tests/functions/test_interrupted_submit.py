"""A function submit killed on the way leaves nothing: the next process that uses the root removes the job
directory of a submit whose app was never recorded (its pickled call holds the arguments, secrets
included), and never one whose app was.

The probe: a process submitting function jobs in a loop (quick ones, sleepers, one and two replicas) is
SIGKILLed at a random instant, round after round (seeded: the seed is in the failure message). Then every
marker is made older than the sweep's minimum age with ``os.utime`` (the age is one constant, so nothing
waits a minute), and a new process submits one more job under the same log dir. Afterwards every job
directory there records an app that ``list`` shows, no marker and no temporary file is left, and every
directory that recorded an app before is still there.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import textwrap
import time
import uuid
from typing import Dict, List, Set

import pytest

from jupyter_sched.functions import incomplete
from jupyter_sched.schedulers.common.process_identity import this_process
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import parse_app_handle

from ..schedulers.helpers import PY, wait_until

TOKEN_ENV = "INTERRUPTED_SUBMIT_TEST_TOKEN"
SECRET = "sk-interrupted-0123456789"

SUBMITTER = textwrap.dedent(
    """
    import sys, time
    import jupyter_sched
    cfg = {"log_dir": sys.argv[1]}
    jupyter_sched.submit(lambda: 0, cfg=cfg).result(timeout=60)  # warm: imports, reaper, zygote
    print("ready", flush=True)
    i = 0
    while True:
        if i % 3 == 0:
            jupyter_sched.submit(lambda token: len(token), sys.argv[2], cfg=cfg)
        elif i % 3 == 1:
            jupyter_sched.submit(lambda token: time.sleep(600), sys.argv[2], num_replicas=2, cfg=cfg)
        else:
            jupyter_sched.submit(lambda: time.sleep(600), cfg=cfg)
        i += 1
    """
)

NEXT_PROCESS = textwrap.dedent(
    """
    import sys
    import jupyter_sched
    print(jupyter_sched.submit(lambda: 42, cfg={"log_dir": sys.argv[1]}).result(timeout=60))
    """
)


def _live_processes(token: str) -> List[int]:
    """Processes of the try (zombies aside), found by the variable the owner passed on to everything."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"{TOKEN_ENV}={token}".encode() not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        found.append(int(pid))
    return found


def _recorded(functions: str) -> Dict[str, str]:
    """Job directory -> the handle its ``meta.json`` records."""
    out = {}
    for name in os.listdir(functions) if os.path.isdir(functions) else []:
        try:
            with open(os.path.join(functions, name, "meta.json")) as f:
                out[os.path.join(functions, name)] = json.load(f)["handle"]
        except (OSError, ValueError, KeyError):
            continue
    return out


def _leftovers(functions: str) -> List[str]:
    """What an interrupted submit could leave: a directory without a record, a marker, a temporary file."""
    found = []
    for name in sorted(os.listdir(functions)):
        path = os.path.join(functions, name)
        if name.endswith(incomplete.SUFFIX):
            found.append(f"marker {name}")
        elif not os.path.isfile(os.path.join(path, "meta.json")):
            found.append(f"unrecorded {name}: {sorted(os.listdir(path))}")
        else:
            found += [f"temporary {name}/{f}" for f in os.listdir(path) if f.endswith(".tmp")]
    return found


def _age_markers(functions: str) -> None:
    old = time.time() - 2 * incomplete.INCOMPLETE_AGE
    for name in os.listdir(functions):
        if name.endswith(incomplete.SUFFIX):
            os.utime(os.path.join(functions, name), (old, old), follow_symlinks=False)


def _kill_a_submitter(log_dir: str, rng: random.Random, where: str) -> None:
    """Starts a process submitting function jobs in a loop, SIGKILLs it at a random instant and waits for
    its reaper to stop every replica."""
    token = uuid.uuid4().hex
    env = {**os.environ, TOKEN_ENV: token}
    owner = subprocess.Popen([PY, "-c", SUBMITTER, log_dir, SECRET], env=env, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None and owner.stdout.readline() == "ready\n", where
    try:
        owner.wait(timeout=rng.uniform(0.0, 1.0))  # it never exits by itself
    except subprocess.TimeoutExpired:
        pass
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    owner.stdout.close()
    wait_until(lambda: not _live_processes(token), 60, f"{where}: the reaper to stop every replica")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the test finds the try's processes through /proc")
def test_function_submits_killed_at_random_instants_leave_no_unrecorded_job_directory(log_dir: str) -> None:
    seed = int(os.environ.get("INTERRUPTED_SUBMIT_SEED", "20261127"))
    rng = random.Random(seed)
    functions = os.path.join(log_dir, "default", "functions")
    left_by_kills = 0
    seen: Set[str] = set()
    for attempt in range(20):
        _kill_a_submitter(log_dir, rng, f"seed {seed}, try {attempt}")
        now = set(_leftovers(functions))
        left_by_kills += bool(now - seen)
        seen = now
    print(f"seed {seed}: {left_by_kills} of 20 kills left an unrecorded directory, a marker or a temporary file")

    recorded_before = _recorded(functions)
    _age_markers(functions)
    out = subprocess.run([PY, "-c", NEXT_PROCESS, log_dir], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "42", out.stderr

    assert not _leftovers(functions), f"seed {seed}: {_leftovers(functions)}"
    recorded = _recorded(functions)
    removed = set(recorded_before) - set(recorded)
    assert not removed, f"seed {seed}: recorded jobs removed: {removed}"
    reader = create_cwd_scheduler("default", log_dir=log_dir)
    try:
        listed = {a.app_id for a in reader.list()}
    finally:
        reader.close()
    unlisted = {d: h for d, h in recorded.items() if parse_app_handle(h).app_id not in listed}
    assert not unlisted, f"seed {seed}: job directories of apps that list does not show: {unlisted}"


def _gone_identity() -> str:
    """The identity of a process that has ended."""
    out = subprocess.run(
        [PY, "-c", "from jupyter_sched.schedulers.common.process_identity import this_process; print(this_process())"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def _job(root: str, name: str, owner: str, age: float, recorded: bool) -> str:
    job_dir = os.path.join(root, name)
    os.symlink(owner, incomplete.marker_of(job_dir))
    os.mkdir(job_dir)
    with open(os.path.join(job_dir, "call.pkl"), "wb") as f:
        f.write(b"secret")
    if recorded:
        with open(os.path.join(job_dir, "meta.json"), "w") as f:
            json.dump({"handle": "local_cwd://default/x"}, f)
    then = time.time() - age
    os.utime(incomplete.marker_of(job_dir), (then, then), follow_symlinks=False)
    return job_dir


def test_the_sweep_removes_only_old_unrecorded_directories_of_submitters_that_are_gone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Of four marked directories only the one that is old, unrecorded and whose submitter has ended goes;
    the recorded one stays (its marker goes), a live submitter's and a recent one are left as they are."""
    root = str(tmp_path)
    gone = _gone_identity()
    old = 2 * incomplete.INCOMPLETE_AGE
    orphan = _job(root, "orphan", gone, old, recorded=False)
    kept = _job(root, "recorded", gone, old, recorded=True)
    mine = _job(root, "live-owner", this_process(), old, recorded=False)
    recent = _job(root, "recent", gone, incomplete.INCOMPLETE_AGE / 2, recorded=False)
    other_host = _job(root, "other-host", "elsewhere.example/1/1", old, recorded=False)

    assert incomplete.sweep(root, force=True) == [orphan]
    remaining: Set[str] = set(os.listdir(root))
    assert not os.path.lexists(orphan) and not os.path.lexists(incomplete.marker_of(orphan))
    assert os.path.isfile(os.path.join(kept, "call.pkl")) and not os.path.lexists(incomplete.marker_of(kept))
    for job_dir in (mine, recent, other_host):
        assert os.path.basename(job_dir) in remaining and os.path.islink(incomplete.marker_of(job_dir)), job_dir
