"""Built-in utility components: ``utils.echo``, ``utils.sh``, ``utils.python``, ``utils.touch`` and
``utils.booth``.

Each takes the shared flags ``--name --image --num_replicas --cpu --gpu --memMB --h --env --max_retries
--mounts`` (see ``jupyter-sched run utils.echo --help``).
"""

from __future__ import annotations

import os
import shlex
from typing import Dict, List, Optional

from jupyter_sched.components._common import PYTHON, common_args, make_app
from jupyter_sched.components.builder import rest_after
from jupyter_sched.components.images import DEFAULT_IMAGE
from jupyter_sched.specs import AppDef


@common_args
def echo(
    msg: str = "hello world",
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Prints a message (runs ``echo MSG``): the smallest job there is.

    Args:
        msg: the message to print
    """
    return make_app(
        name or "echo", "echo", "echo", [msg], image=image, num_replicas=num_replicas, cpu=cpu, gpu=gpu,
        memMB=memMB, h=h, env=env, max_retries=max_retries, mounts=mounts,
    )  # fmt: skip


@common_args
def sh(
    *args: str,
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Runs a shell command with ``sh -c``.

    Several arguments are a command and its arguments: each is quoted, so ``utils.sh echo "a  b"`` prints
    ``a  b`` exactly. A single argument is a shell script and runs as written, so pipes, ``&&`` and
    ``$VARS`` work: ``utils.sh 'echo $HOSTNAME | tr a-z A-Z'``. ``${replica_id}`` and ``${app_id}`` are
    replaced per replica, and ``$$`` becomes ``$``.

    Args:
        args: the command and its arguments, or one shell script
    """
    if not args:
        raise ValueError("give the command to run, e.g. utils.sh echo hello")
    script = args[0] if len(args) == 1 else " ".join(shlex.quote(a) for a in args)
    return make_app(
        name or "sh", "sh", "sh", ["-c", script], image=image, num_replicas=num_replicas, cpu=cpu, gpu=gpu,
        memMB=memMB, h=h, env=env, max_retries=max_retries, mounts=mounts,
    )  # fmt: skip


@rest_after("m", "c", "script")
@common_args
def python(
    *args: str,
    m: Optional[str] = None,
    c: Optional[str] = None,
    script: Optional[str] = None,
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Runs Python: a module (-m), a string of code (-c) or a script (--script), with the rest as its argv.

    As with ``python`` itself, everything after ``-m MODULE``, ``-c CODE`` or ``--script FILE`` is passed
    to the program, so put this component's flags first: ``utils.python --num_replicas 2 -m train --lr 1``.
    In an image it runs ``python3``; on the local schedulers it runs the interpreter jupyter_sched runs
    under (``sys.executable``, e.g. your notebook's kernel), so the job sees the same packages.

    Args:
        args: arguments passed to the module, code or script (sys.argv[1:])
        m: a module to run, as python -m
        c: code to run, as python -c
        script: a .py file to run
    """
    given = [
        flag for flag, value in (("-m", m), ("-c", c), ("--script", script)) if value is not None
    ]
    if len(given) != 1:
        what = "none was given" if not given else f"got {' and '.join(given)}"
        raise ValueError(f"give exactly one of -m MODULE, -c CODE or --script FILE ({what})")
    if m is not None:
        argv, default_name = ["-m", m], m.rsplit(".", 1)[-1]
    elif c is not None:
        argv, default_name = ["-c", c], "python"
    else:
        argv, default_name = (
            [str(script)],
            os.path.splitext(os.path.basename(str(script)))[0] or "python",
        )
    return make_app(
        name or _app_name(default_name), "python", PYTHON, [*argv, *args], image=image,
        num_replicas=num_replicas, cpu=cpu, gpu=gpu, memMB=memMB, h=h, env=env, max_retries=max_retries,
        mounts=mounts, base_env={"PYTHONUNBUFFERED": "1"}, python_arg=0,
    )  # fmt: skip


@common_args
def touch(
    file: str,
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Creates an empty file, or updates its time (runs ``touch FILE``).

    Args:
        file: the file to touch (relative to the replica's working directory)
    """
    return make_app(
        name or "touch", "touch", "touch", [file], image=image, num_replicas=num_replicas, cpu=cpu, gpu=gpu,
        memMB=memMB, h=h, env=env, max_retries=max_retries, mounts=mounts,
    )  # fmt: skip


@common_args
def booth(
    x1: float,
    x2: float,
    trial_idx: int = 0,
    tracker_base: str = "/tmp/jupyter-sched-booth",
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Evaluates Booth's function (x1 + 2*x2 - 7)^2 + (2*x1 + x2 - 5)^2: a toy objective for searches.

    The value is written as ``{"booth_eval": VALUE}`` (JSON) to the file TRACKER_BASE/TRIAL_IDX, the
    layout TorchX's ``FsspecResultTracker(TRACKER_BASE)[TRIAL_IDX]`` reads. The minimum is 0, at (1, 3).
    It runs ``python -m jupyter_sched.components.apps.booth``, so an image must have jupyter_sched.

    Args:
        x1: the first coordinate
        x2: the second coordinate
        trial_idx: the trial's number, the key of its result (for hyper-parameter searches)
        tracker_base: the directory results are written to, as seen by the replica
    """
    args = ["-m", "jupyter_sched.components.apps.booth", "--x1", str(x1), "--x2", str(x2),
            "--trial_idx", str(trial_idx), "--tracker_base", tracker_base]  # fmt: skip
    return make_app(
        name or "booth", "booth", PYTHON, args, image=image, num_replicas=num_replicas, cpu=cpu, gpu=gpu,
        memMB=memMB, h=h, env=env, max_retries=max_retries, mounts=mounts,
        base_env={"PYTHONUNBUFFERED": "1"}, python_arg=0,
    )  # fmt: skip


def _app_name(text: str) -> str:
    """A valid app name from a module or script name (``my script`` -> ``my_script``)."""
    cleaned = "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in text).lstrip("_.-")
    return cleaned or "python"
