"""An owner SIGKILLed at any instant, a submit under way included, leaves no replica running and nothing
unlisted: a process submitting apps in a loop is killed at random instants, several times.

Apps meant to outlive their owner (``outlive_owner``) keep running once submitted, and are listed; one whose
submit was cut short is undone like the others. Every process of a try is found by a variable the test puts
in the owner's environment, which its replicas, their children and its reaper inherit.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import textwrap
import uuid
from typing import Dict, List

import pytest

from jupyter_sched.schedulers.local.record.state import load_record
from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
from jupyter_sched.specs import AppState

from ..helpers import PY, wait_until

TOKEN_ENV = "OWNER_DEATH_TEST_TOKEN"

SUBMITTER = textwrap.dedent(
    """
    import sys
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.specs import AppDef, Role
    s = create_cwd_scheduler("death", log_dir=sys.argv[1])
    kinds = [
        (AppDef("pair", [Role("main", "x", entrypoint="sleep", args=["600"], num_replicas=2)]), {}),
        (AppDef("tree", [Role("main", "x", entrypoint="sh", args=["-c", "sleep 600 & exec sleep 601"])]), {}),
        (AppDef("quick", [Role("main", "x", entrypoint="true", num_replicas=3)]), {}),
        (AppDef("detached", [Role("main", "x", entrypoint="sleep", args=["602"])]), {"outlive_owner": True}),
    ]
    print("ready", flush=True)
    i = 0
    while True:
        app, cfg = kinds[i % len(kinds)]
        s.submit(app, {"log_dir": sys.argv[1], **cfg})
        i += 1
    """
)


def _environ(pid: str) -> Dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            items = f.read().split(b"\0")
    except OSError:
        return {}
    return dict(item.decode(errors="replace").partition("=")[::2] for item in items if b"=" in item)


def _processes(token: str) -> Dict[int, Dict[str, str]]:
    """Every live process (zombies aside) of the try: pid -> its environment."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        env = _environ(pid)
        if env.get(TOKEN_ENV) == token:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue
            except OSError:
                continue
            found[int(pid)] = env
    return found


def _detached_running(session_dir: str, app_id: str) -> bool:
    record = load_record(os.path.join(session_dir, app_id))
    return record is not None and record.outlive_owner and not record.done


def _settled(token: str, session_dir: str) -> bool:
    """The reaper is done: what is left of the try are the detached apps it was told of."""
    return all(
        "JUPYTER_SCHED_APP_ID" in e and _detached_running(session_dir, e["JUPYTER_SCHED_APP_ID"])
        for e in _processes(token).values()
    )


def _kill_an_owner_mid_loop(log_dir: str, attempt: int, rng: random.Random) -> None:
    token = uuid.uuid4().hex
    session_dir = os.path.join(log_dir, "death")
    env = {**os.environ, TOKEN_ENV: token}
    owner = subprocess.Popen([PY, "-c", SUBMITTER, log_dir], env=env, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None and owner.stdout.readline() == "ready\n"
    try:
        owner.wait(timeout=rng.uniform(0.1, 1.5))  # it never exits by itself
    except subprocess.TimeoutExpired:
        pass
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    wait_until(lambda: _settled(token, session_dir), 60, f"try {attempt}: the reaper to stop or undo every app")
    survivors: List[str] = sorted({e["JUPYTER_SCHED_APP_ID"] for e in _processes(token).values()})

    reader = create_cwd_scheduler("death", log_dir=log_dir)
    try:
        listed = {a.app_id: a.state for a in reader.list()}
        on_disk = set(os.listdir(session_dir)) if os.path.isdir(session_dir) else set()
        assert on_disk == set(listed), f"try {attempt}: unlisted app directories {on_disk - set(listed)}"
        for app_id, state in listed.items():
            if app_id in survivors:
                assert state == AppState.RUNNING  # outlive_owner: what the user asked for
                reader.cancel(app_id)
            else:
                assert state.is_terminal, (attempt, app_id, state)
        wait_until(lambda: not _processes(token), 60, "the detached apps to end after their cancel")
    finally:
        reader.close()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the test finds processes through /proc")
def test_an_owner_killed_at_any_instant_leaves_no_replica_and_nothing_unlisted(log_dir: str) -> None:
    rng = random.Random()
    for attempt in range(8):
        _kill_an_owner_mid_loop(log_dir, attempt, rng)
