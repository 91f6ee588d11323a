"""``frontend.follow`` merges several replicas' logs in the order they were written (issue 12, item 9).

Two real replicas take turns through a file in their shared directory: replica 0 prints ``ping i`` and
hands over 30 ms later (300 ms on Slurm), replica 1 prints ``pong i`` and hands back. Each line is written
after the other replica's previous one, so write order is known; the merged output must be exactly that order. (The gap
is there because a backend records when it *read* a chunk: lines of two replicas a millisecond apart may
be read in either order.) On Slurm each
replica's log is polled on its own, so in arrival order the turns come out swapped now and then.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any, List, Tuple

from jupyter_sched.frontend.logview.follow import FollowRenderer, TailOptions, follow
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role, resource

TURNS = 6
TAKE_TURNS = (
    "import os, sys, time\n"
    "k = int(os.environ['JUPYTER_SCHED_REPLICA_ID'])\n"
    "baton = sys.argv[1]\n"
    "for i in range({turns}):\n"
    "    mine = f'{{baton}}.{{2 * i + k}}'\n"
    "    while k + i and not os.path.exists(mine):\n"
    "        time.sleep(0.001)\n"
    "    print(('ping', 'pong')[k], i, flush=True)\n"
    "    time.sleep({gap})\n"
    "    open(f'{{baton}}.{{2 * i + k + 1}}', 'w').close()\n"
)
WRITTEN = [f"{('ping', 'pong')[k]} {i}\n" for i in range(TURNS) for k in (0, 1)]


class Recorder(FollowRenderer):
    def __init__(self) -> None:
        self.items: List[Tuple[Tuple[str, int], str]] = []

    def on_items(self, items: List[Tuple[Tuple[str, int], str]]) -> None:
        self.items += items


def _follow(scheduler: str, cfg: Any, baton: str, gap: float = 0.03) -> List[str]:
    args = ["-c", TAKE_TURNS.format(turns=TURNS, gap=gap), baton]
    role = Role("py", ".", entrypoint=sys.executable, args=args, num_replicas=2, resource=resource(cpu=1, memMB=128))
    with get_runner("follow-order") as runner:
        handle = runner.run(AppDef("turns", roles=[role]), scheduler, cfg)
        recorder = Recorder()
        errors = follow(runner, handle, [("py", 0), ("py", 1)], TailOptions(follow=True), recorder)
        assert errors == []
        return [item for _, item in recorder.items]


def test_replicas_are_merged_in_write_order_local(tmp_path: Any) -> None:
    assert _follow("local_cwd", {"log_dir": str(tmp_path)}, str(tmp_path / "baton")) == WRITTEN


def test_replicas_are_merged_in_write_order_slurm(slurm_cluster: Any) -> None:
    # Slurm's logs are polled per replica, so under load one replica's line can be read later than the
    # other's next one by more than the follow's hold (0.15 s): the turns are 0.3 s apart here
    assert _follow("slurm", {}, f"{slurm_cluster.job_root}/baton-{uuid.uuid4().hex}", gap=0.3) == WRITTEN
