"""``list`` reads an ended app's record once per version of its state file: a long-lived lister (the Jupyter
server's Jobs sidebar) lists a large history cheaply, and still sees a record that was rewritten."""

from __future__ import annotations

import json
import os

from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler, create_dir_scheduler
from jupyter_sched.specs import AppState

from ..helpers import sh_app, wait_until


def test_an_ended_app_is_listed_again_as_its_file_now_says(log_dir: str) -> None:
    owner = create_cwd_scheduler("cache", log_dir=log_dir)
    app_id = owner.submit(sh_app("echo hi", name="cached"), {})
    wait_until(lambda: owner.describe(app_id).state == AppState.SUCCEEDED, what="the app ended")  # type: ignore[union-attr]
    owner.close()

    reader = create_cwd_scheduler("cache", log_dir=log_dir)  # another process's view: only the file
    first = [(a.app_id, a.state, a.name) for a in reader.list()]
    assert first == [(app_id, AppState.SUCCEEDED, "cached")]
    assert [(a.app_id, a.state, a.name) for a in reader.list()] == first  # listed again: the same
    assert create_dir_scheduler("cache", log_dir=log_dir).list() == []  # local_dir's list: not its app

    state = os.path.join(log_dir, "cache", app_id, "state.json")
    data = json.loads(open(state).read())
    data["name"] = "renamed-on-disk"
    with open(state, "w") as f:
        json.dump(data, f)
    assert [(a.app_id, a.name) for a in reader.list()] == [(app_id, "renamed-on-disk")]
    os.remove(state)
    assert reader.list() == []
    reader.close()
