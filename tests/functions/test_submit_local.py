"""Function jobs on local_cwd, for real: the replicas are processes that unpickle and call the function."""

from __future__ import annotations

import os
import threading

import pytest

import jupyter_sched
from jupyter_sched.frontend.job import Job
from jupyter_sched.functions import FunctionError, UnpicklableError
from jupyter_sched.specs import AppState


def test_a_closure_over_a_variable_returns_its_value() -> None:
    secret = {"lr": 0.1, "name": "notebook variable"}

    def train(scale: int) -> dict:
        print("training with", secret["lr"])
        return {"loss": secret["lr"] * scale, "name": secret["name"]}

    job = jupyter_sched.submit(train, 3)
    assert isinstance(job, Job)
    assert job.result(timeout=60) == {"loss": pytest.approx(0.3), "name": "notebook variable"}
    assert job.state == AppState.SUCCEEDED
    assert any("training with 0.1" in line for line in job.logs()), "prints go to the logs"


def test_two_replicas_return_their_ranks_and_identity() -> None:
    def who() -> tuple:
        env = os.environ
        return int(env["RANK"]), int(env["WORLD_SIZE"]), env["MASTER_ADDR"], int(env["MASTER_PORT"]) > 0

    job = jupyter_sched.submit(who, num_replicas=2)
    assert job.results(timeout=60) == [(0, 2, "localhost", True), (1, 2, "localhost", True)]
    assert job.result() == (0, 2, "localhost", True)


def test_lambdas_classes_and_kwargs() -> None:
    class Model:
        def __init__(self, width: int) -> None:
            self.width = width

        def score(self) -> int:
            return self.width * 2

    assert jupyter_sched.submit(lambda a, b=1: a + b, 1, b=5).result(timeout=60) == 6
    model = jupyter_sched.submit(Model, 21).result(timeout=60)
    assert type(model).__name__ == "Model" and model.score() == 42


def test_an_exception_reraises_with_the_remote_traceback_and_the_replica() -> None:
    def fails(rank_that_fails: int) -> int:
        if int(os.environ["RANK"]) == rank_that_fails:
            raise KeyError("no such column: 'lr'")
        return 1

    job = jupyter_sched.submit(fails, 1, num_replicas=2)
    with pytest.raises(FunctionError) as info:
        job.result(timeout=60)
    err = info.value
    assert err.replica.endswith("/1") and err.rank == 1
    assert err.exc_type == "KeyError"
    assert "in fails" in err.remote_traceback and "KeyError" in err.remote_traceback
    assert "bootstrap.py" not in err.remote_traceback, "the traceback starts at the user's function"
    assert isinstance(err.exception, KeyError)
    assert "remote traceback" in str(err) and "raise KeyError" in str(err)
    assert job.state == AppState.FAILED
    assert any("KeyError" in line for line in job.logs(streams="stderr")), "the traceback is in the logs too"


def test_unpicklable_objects_are_refused_before_launch_naming_the_culprit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    before = _function_dirs()
    lock = threading.Lock()

    def uses_lock() -> None:
        with lock:
            pass

    with pytest.raises(UnpicklableError) as info:
        jupyter_sched.submit(uses_lock)
    assert "closure variable 'lock'" in str(info.value) and "_thread.lock" in str(info.value)

    class Logger:
        def __init__(self, path: str) -> None:
            self.fh = open(path, "w")

    log = Logger(str(tmp_path / "x.log"))

    def uses_logger() -> None:
        log.fh.write("x")

    with pytest.raises(UnpicklableError) as info:
        jupyter_sched.submit(uses_logger)
    assert info.value.path == "function " + uses_logger.__qualname__ + " -> closure variable 'log' -> attribute 'fh'"
    assert "open file" in str(info.value)

    with open(tmp_path / "data.txt", "w") as f:
        f.write("read me")
    with open(tmp_path / "data.txt") as reader:  # cloudpickle would send a snapshot; we refuse
        with pytest.raises(UnpicklableError, match="keyword argument 'src'"):
            jupyter_sched.submit(lambda src: src.read(), src=reader)
    log.fh.close()
    assert _function_dirs() == before, "nothing was written or launched"


def test_a_value_that_cannot_be_pickled_back_is_an_error_naming_it() -> None:
    job = jupyter_sched.submit(lambda: threading.Lock())
    with pytest.raises(FunctionError, match="cannot be pickled"):
        job.result(timeout=60)


def _function_dirs() -> set:
    from jupyter_sched.schedulers.common.state_dir import default_log_dir

    root = os.path.join(default_log_dir(), "default", "functions")
    return set(os.listdir(root)) if os.path.isdir(root) else set()


def test_a_replica_that_dies_without_a_result_is_a_job_failure_naming_it() -> None:
    from jupyter_sched.frontend.job import JobFailed

    job = jupyter_sched.submit(lambda: os._exit(3))
    with pytest.raises(JobFailed, match="exit code 3"):
        job.result(timeout=60)
    assert job.outcome(0) is None


def test_another_process_attaches_to_a_function_job_and_reads_its_result() -> None:
    import subprocess
    import sys

    job = jupyter_sched.submit(lambda: {"answer": 42})
    job.wait(timeout=60)
    code = f"from jupyter_sched import attach\nprint(attach({job.handle!r}).result())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{'answer': 42}"


def test_sched_job_in_another_kernel_gives_the_function_job_with_its_result() -> None:
    """``%sched_job HANDLE`` in a kernel that did not launch the function job (after a restart) returns
    the FunctionJob, whose ``result()`` reads what the replica wrote."""
    import subprocess
    import sys

    job = jupyter_sched.submit(lambda: {"answer": 42})
    job.wait(timeout=60)
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'jupyter_sched')\n"
        f"j = ip.run_line_magic('sched_job', {job.handle!r})\n"
        "print(type(j).__name__, j.result(timeout=60))\n"
        f"plain = ip.run_line_magic('sched_job', {job.handle!r})\n"
        "print(plain is j)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()  # (the job's text display comes between the prints)
    assert "FunctionJob {'answer': 42}" in lines and lines[-1] == "True", out.stdout
