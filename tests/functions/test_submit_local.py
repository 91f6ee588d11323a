"""Function jobs on local_cwd, for real: the replicas are processes that unpickle and call the function."""

from __future__ import annotations

import os
import threading

import pytest

import jupyter_sched
from jupyter_sched.frontend.job import Job
from jupyter_sched.functions import FunctionError, UnpicklableError
from jupyter_sched.specs import AppState
from jupyter_sched.specs.output.labels import app_label


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


def test_the_job_directory_follows_the_log_dir_run_option(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With ``log_dir`` given, a function job's files go beside its logs (nothing under the default log
    dir), and another process finds the job from its handle alone."""
    import subprocess
    import sys

    before = _function_dirs()
    log_dir = tmp_path / "elsewhere"
    job = jupyter_sched.submit(lambda: {"answer": 7}, cfg={"log_dir": str(log_dir)})
    assert job.result(timeout=60) == {"answer": 7}
    assert job.job_dir.startswith(str(log_dir / "default" / "functions") + os.sep), job.job_dir
    assert os.path.isfile(os.path.join(job.job_dir, "result-0.pkl"))
    assert _function_dirs() == before, "nothing was written under the default log dir"
    code = f"from jupyter_sched import attach\nprint(attach({job.handle!r}).result())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{'answer': 7}"
    sweep = jupyter_sched.sweep(lambda k: k, {"k": [1, 2]}, cfg={"log_dir": str(log_dir)})
    assert sweep.results(timeout=120) == [1, 2]
    assert sweep.manifest == str(log_dir / "default" / "sweeps" / f"{sweep.name}.json")
    assert all(r.job.job_dir.startswith(str(log_dir)) for r in sweep.runs)


def modes_under(root: str) -> dict:
    """Every directory and file under ``root`` (itself included) -> its permission bits."""
    import stat

    out = {root: stat.S_IMODE(os.lstat(root).st_mode)}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(here, name)
            out[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return out


def test_a_fresh_log_dir_holds_only_private_files_after_a_submit_and_a_sweep(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The call (arguments), results (return values), meta, bootstrap and the sweep's manifest are the
    owner's alone, as the logs are: 0600 files, 0700 directories, the log dir and session dir included."""
    log_dir = str(tmp_path / "fresh" / "logs")
    old = os.umask(0o022)  # the usual umask: what makes files 0644 and directories 0755 unless told
    try:
        job = jupyter_sched.submit(lambda secret: {"token": secret}, "s3cr3t", num_replicas=2, cfg={"log_dir": log_dir})
        assert job.results(timeout=60) == [{"token": "s3cr3t"}] * 2
        sweep = jupyter_sched.sweep(lambda k: k, {"k": [1, 2]}, cfg={"log_dir": log_dir})
        assert sweep.results(timeout=120) == [1, 2]
    finally:
        os.umask(old)
    modes = modes_under(str(tmp_path / "fresh"))
    names = {os.path.basename(p) for p in modes}
    assert {"call.pkl", "result-0.pkl", "result-1.pkl", "meta.json", "bootstrap.py", f"{sweep.name}.json"} <= names
    assert os.path.join(log_dir, "default", "sweeps") in modes and job.job_dir in modes
    wrong = {p: oct(m) for p, m in modes.items() if m != (0o700 if os.path.isdir(p) else 0o600)}
    wrong.pop(str(tmp_path / "fresh"), None)  # made by the test (tmp_path's child), not by jupyter_sched
    assert not wrong, wrong


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a replica running as root (a container's user)")
def test_a_replica_running_as_root_hands_its_result_to_the_job_directorys_owner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """In a container the replica is often root while the job directory is its user's: the private result
    file is given to that user, who could not read a private root-owned file."""
    import subprocess
    import sys

    from jupyter_sched.functions.calls.pack import pack
    from jupyter_sched.functions.launch import bootstrap_source

    job_dir = tmp_path / "job"
    job_dir.mkdir(mode=0o700)
    (job_dir / "call.pkl").write_bytes(pack(lambda: 42, (), {}))
    os.chown(job_dir, 65534, 65534)
    out = subprocess.run([sys.executable, bootstrap_source(), str(job_dir)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    st = os.stat(job_dir / "result-0.pkl")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o600)


# -- results that cannot be had -----------------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):  # type: ignore[no-untyped-def]
    """A 2 MB tmpfs mounted for the test (we run as root; CI must be able to)."""
    import subprocess

    from tests.conftest import missing_engine

    mnt = tmp_path / "small"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        missing_engine("a tmpfs mount", proc.stderr.strip() or f"mount exited {proc.returncode}")
    try:
        yield str(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_result_that_does_not_fit_on_the_disk_is_an_error_naming_it(small_disk: str) -> None:
    from jupyter_sched.functions import ResultError

    job = jupyter_sched.submit(lambda n: b"x" * n, 4_000_000, cfg={"log_dir": small_disk})
    with pytest.raises(ResultError) as info:
        job.result(timeout=60)
    err = info.value
    path = os.path.join(job.job_dir, "result-0.pkl")
    assert err.writing and err.path == path and err.replica == f"{job.role}/0" and err.handle == job.handle
    assert "No space left on device" in str(err) and app_label(job.handle) in str(err) and path in str(err)
    assert "4,000,0" in err.reason, "the size that did not fit"
    assert not [n for n in os.listdir(job.job_dir) if n.endswith(".tmp")], "no temporary file is left behind"
    assert job.state == AppState.FAILED
    assert any("No space left on device" in line for line in job.logs(streams="stderr")), "the logs say so too"


def test_a_damaged_result_file_is_an_error_naming_the_job_replica_and_file() -> None:
    from jupyter_sched.functions import ResultError

    job = jupyter_sched.submit(lambda: {"weights": list(range(1000))})
    assert job.result(timeout=60)["weights"][-1] == 999
    path = os.path.join(job.job_dir, "result-0.pkl")
    with open(path, "rb") as f:
        whole = f.read()
    for damaged, why in ((whole[: len(whole) // 2], "truncated"), (b"not a pickle at all", "truncated"),
                         (b"", "truncated"), (__import__("pickle").dumps([1, 2]), "holds a list")):  # fmt: skip
        with open(path, "wb") as f:
            f.write(damaged)
        with pytest.raises(ResultError) as info:
            job.result()
        text = str(info.value)
        label = app_label(job.handle)
        assert text.startswith(f"cannot read the result of replica {job.role}/0 of {label} from {path}: ")
        assert why in text and not info.value.writing


def test_a_value_of_a_class_that_exists_only_in_the_replica_is_an_error_naming_the_module(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from jupyter_sched.functions import ResultError

    where = str(tmp_path / "replica_only")
    name = f"replica_only_{os.getpid()}"

    def make() -> object:
        import importlib
        import sys

        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, f"{name}.py"), "w") as f:
            f.write("class Weights:\n    pass\n")
        sys.path.insert(0, where)
        return importlib.import_module(name).Weights()

    job = jupyter_sched.submit(make)
    with pytest.raises(ResultError) as info:
        job.result(timeout=60)
    assert f"module '{name}'" in info.value.reason and "cannot import" in info.value.reason
    assert app_label(job.handle) in str(info.value) and f"{job.role}/0" in str(info.value)
    sweep = jupyter_sched.sweep(lambda k: make() if k == 2 else k, {"k": [1, 2, 3]})
    with pytest.raises(ResultError, match=name):
        sweep.results(timeout=120)
    got = sweep.results(errors="return")
    assert got[0] == 1 and got[2] == 3 and isinstance(got[1], ResultError)
    from jupyter_sched.notebook.panes.sweep_view import record_bundle  # the table a notebook saves

    assert f"module '{name}'" in record_bundle(sweep)["text/plain"]


def test_the_dry_run_says_how_the_replicas_start() -> None:
    import sys

    from jupyter_sched.functions.launch import prepare
    from jupyter_sched.runner.shared import shared_runner
    from jupyter_sched.schedulers.local.warm_starts.zygote import disabled

    runner = shared_runner("default", "")
    start = prepare(runner, lambda: 1).summary()["replicas start"]
    if disabled():  # JUPYTER_SCHED_ZYGOTE=0 or the portable path: the fallback, and why
        assert start == f"exec {sys.executable} (a cold start: {disabled()})"
    else:
        assert start.startswith(f"forked from a warm {sys.executable} (a zygote that has loaded cloudpickle")
        assert "bootstrap.py" in start
    detached = prepare(runner, lambda: 1, cfg={"outlive_owner": True})
    assert detached.summary()["replicas start"].startswith(f"exec {sys.executable} (a cold start: ")
    assert "replicas start: " in repr(detached)
