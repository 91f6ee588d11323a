"""Components for the tutorials: the training job with the knobs we change most."""
from typing import Dict, Optional

from jupyter_sched.specs import AppDef, Role, resource


def train(
    steps: int = 20,
    lr: float = 0.01,
    replicas: int = 1,
    fail: bool = False,
    env: Optional[Dict[str, str]] = None,
    image: str = "jupyter-sched/python:local",
) -> AppDef:
    """Trains the tutorial model (scripts/train.py).

    Args:
        steps: optimisation steps
        lr: learning rate (the script reads it from $LR)
        replicas: how many copies of the trainer to run
        fail: make every replica fail at the end, to see what a failure looks like
        env: extra environment variables, e.g. A=1,B=2
        image: the container image (local_cwd ignores it)
    """
    args = ["scripts/train.py", "--steps", str(steps)] + (["--fail"] if fail else [])
    trainer = Role(
        name="trainer", image=image, entrypoint="python3", args=args, num_replicas=replicas,
        env={"LR": str(lr), **(env or {})}, resource=resource(cpu=1, memMB=512),
    )
    return AppDef(name="train", roles=[trainer])
