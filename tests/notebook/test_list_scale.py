"""``%sched_list`` over a history of 1,000 apps stays bounded: 50 entries on the first screen (running
first), "Show more" for the next 50, a sweep as one row, "this notebook" versus "all", and widget state
(what a notebook saves) under 200 KB."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Dict, Set

import pytest

from jupyter_sched.specs import AppDef, AppState, Role, random_id

HISTORY = 1000


def reachable_state(root: Any) -> Dict[str, Any]:
    """The widget state (as a notebook saves it: defaults dropped) of ``root`` and every model it refers to."""
    import ipywidgets

    every = ipywidgets.Widget.get_manager_state(drop_defaults=True)["state"]
    seen: Set[str] = set()
    todo = [root.model_id]
    while todo:
        model_id = todo.pop()
        if model_id in seen or model_id not in every:
            continue
        seen.add(model_id)
        todo += re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(every[model_id]["state"]))
    return {m: every[m] for m in seen}


@pytest.fixture
def history(widgets: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A session of its own with 1,000 ended apps, a sweep of 3 runs, and two apps "this notebook" launched."""
    import jupyter_sched

    widgets.session_name = f"scale-{random_id()[:6]}"
    runner = widgets.session.runner
    app = AppDef("old", [Role("main", image="", entrypoint="true", args=[])])
    handles = [runner.run(app, "local_cwd") for _ in range(HISTORY)]
    for handle in handles:
        runner.wait(handle, wait_interval=1)
    widgets.shell.run_cell("def square(x: int) -> int:\n    return x * x\n")  # as a notebook defines it
    sweep = jupyter_sched.sweep(widgets.shell.user_ns["square"], {"x": [1, 2, 3]}, max_concurrent=3)
    assert sweep.results() == [1, 4, 9]
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/user/project/analysis.ipynb")  # as Jupyter tells its kernels
    widgets.interactive = False
    mine = [widgets.shell.run_line_magic("sched_run", f"--wait utils.sh --name mine{i} 'echo {i}'") for i in (1, 2)]
    widgets.interactive = True
    return sweep, mine


def test_the_first_screen_is_bounded_and_saves_little_state(widgets: Any, recorder: Any, history: Any) -> None:
    sweep, mine = history
    ip = widgets.shell
    started = time.monotonic()
    listing = ip.run_line_magic("sched_list", "")
    print(f"%sched_list over {HISTORY} apps: {time.monotonic() - started:.2f} s")  # a measurement, not a check
    try:
        # in a notebook, "this notebook" first: what its kernel launched (the sweep, two apps), not the history
        assert listing.scope.value == "notebook"
        assert sorted(listing.rows) == sorted(j.handle for j in mine) and len(listing.body.children) == 3
        assert list(listing.sweeps) == [sweep.name]
        listing.scope.value = "all"
        children = listing.body.children
        assert len(children) == 50
        sweeps = [s for s in listing.sweeps.values() if s.widget in children]
        assert len(sweeps) == 1 and sweep.name in sweeps[0].html.value and "3 runs: 3 SUCCEEDED" in sweeps[0].html.value
        assert not any(sweep.name in h for h in listing.rows)  # its runs have no rows of their own
        total = HISTORY + 2 + 1  # the apps, mine, the sweep's one entry
        assert listing.more.layout.display == "" and f"({total - 50} not shown)" in listing.more.description
        state = reachable_state(listing.widget)
        size = len(json.dumps(state))
        print(f"saved widget state of the first screen: {len(state)} models, {size / 1024:.0f} KB")
        assert size < 200_000, f"{len(state)} models, {size} bytes"

        listing.more.click()
        assert len(listing.body.children) == 100
        assert all(r.row.state == AppState.SUCCEEDED.name for r in listing.rows.values())
        text = listing.record_bundle(None)["text/plain"]
        assert len(text.splitlines()) < 60 and f"... and {total - 50} more" in text
    finally:
        listing.stop()


def test_text_mode_lists_the_first_screen_and_says_how_to_see_the_rest(magics: Any, history: Any,
                                                                      capsys: Any) -> None:  # fmt: skip
    sweep, _ = history
    magics.interactive = False
    magics.shell.run_line_magic("sched_list", "")
    out = capsys.readouterr().out
    assert "(%sched_list -n 0 lists them all)" in out and f"sweep {sweep.name}" in out
    assert len([line for line in out.splitlines() if "local_cwd://" in line]) == 49  # and the sweep's line
    magics.shell.run_line_magic("sched_list", "-n 0")
    assert len([line for line in capsys.readouterr().out.splitlines() if "local_cwd://" in line]) == HISTORY + 2
