"""Why a replica failed, and what the app's message adds, as the panes and JobFailed say it (issue 26)."""

from __future__ import annotations

from jupyter_sched.frontend.jobs.reasons import (
    app_message,
    app_reason,
    failure_line,
    first_failure,
    replica_reason,
)
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus, RoleStatus
from jupyter_sched.specs.output.labels import app_label


def status(msg: str, *replicas: ReplicaStatus, state: AppState = AppState.FAILED) -> AppStatus:
    return AppStatus(state, msg=msg, roles=[RoleStatus("python", list(replicas))])


def failed(k: int = 0, code: int = 1, msg: str = "", error: str = "<NONE>") -> ReplicaStatus:
    return ReplicaStatus(k, AppState.FAILED, "python", "h", structured_error_msg=error, exit_code=code, msg=msg)


def test_out_of_memory_leads_in_plain_words() -> None:
    rep = failed(msg="failed: out of memory (limit 128 MiB, peak 21 MiB in use: the limit also counts memory"
                     " reserved but not used)")  # fmt: skip
    app = status("python[0]: " + rep.msg, rep)
    reason = replica_reason(rep, app, ["Traceback (most recent call last):", "MemoryError"])
    assert reason.startswith("out of memory (limit 128 MiB, peak 21 MiB in use")
    killed = failed(code=137, msg="killed: out of memory (limit 64 MiB, peak 63.9 MiB)")
    assert replica_reason(killed, status("", killed)) == "out of memory (limit 64 MiB, peak 63.9 MiB)"
    # the replica's note is said with the replica (spelled python/0), not again in the app's message
    assert app_message(app) == ""


def test_an_owner_that_exited_is_named_and_a_kernel_is_called_a_kernel() -> None:
    rep = failed(code=-15)
    app = status("owner process 4242 exited; its replicas were stopped", rep)
    assert replica_reason(rep, app, kernel_pid=4242) == (
        "stopped when the kernel that launched it (process 4242) was restarted or shut down; launch with"
        " --detach to keep a job through a restart"
    )
    assert replica_reason(rep, app) == "stopped when its owner, process 4242, exited"
    assert app_message(app) == ""  # the replica's reason says it
    crashed = failed(code=1)  # an exit of its own before the owner left: its own reason
    assert replica_reason(crashed, status(app.msg, crashed), ["KeyError: 'y'"], 4242) == "KeyError: 'y'"


def test_the_reason_falls_back_to_the_error_file_then_stderr_then_the_exit_code() -> None:
    rep = failed(error='{"message": {"message": "RuntimeError: boom"}}')
    assert replica_reason(rep, status("", rep), ["other"]) == "RuntimeError: boom"
    assert replica_reason(failed(), None, ["", "KeyError: 'y'", " "]) == "KeyError: 'y'"
    assert replica_reason(failed(code=3), None, []) == "exit code 3"


def test_one_app_reads_the_same_first_failure_and_stderr_only_when_it_explains() -> None:
    """Issue 32: the panes, JobFailed, ``status`` and the server take the app's failure from here; its
    stderr is asked for only when nothing in the status says why, so a listing reads no log for the rest."""
    asked = []

    def stderr_of(role: str, k: int) -> list:
        asked.append((role, k))
        return ["Traceback (most recent call last):", "error: loss is NaN"]

    later = ReplicaStatus(0, AppState.FAILED, "python", "h", exit_code=1, started=1.0, finished=9.0)
    first = ReplicaStatus(1, AppState.FAILED, "python", "h", exit_code=3, started=1.0, finished=5.0)
    app = status("", later, first)
    assert first_failure(app, stderr_of) == (first, "error: loss is NaN")  # first to fail, not first listed
    assert asked == [("python", 1)]
    assert app_reason("train", app, stderr_of) == "train FAILED: python/1 error: loss is NaN"
    assert failure_line(first, "error: loss is NaN") == "python/1 FAILED (exit code 3): error: loss is NaN"
    assert failure_line(first, "exit code 3") == "python/1 FAILED (exit code 3)"  # not the code twice
    asked.clear()
    explained = failed(error='{"message": {"message": "RuntimeError: boom"}}')
    assert app_reason("train", status("", explained), stderr_of) == "train FAILED: python/0 RuntimeError: boom"
    oom = failed(code=137, msg="killed: out of memory (limit 64 MiB, peak 63.9 MiB)")
    assert app_reason("train", status("", oom), stderr_of).endswith("out of memory (limit 64 MiB, peak 63.9 MiB)")
    assert app_reason("train", status("", failed(), state=AppState.RUNNING), stderr_of) == ""
    assert asked == []


def test_slurm_state_words_are_not_repeated_under_the_pill() -> None:
    running = ReplicaStatus(0, AppState.RUNNING, "python", "node1")
    assert app_message(status("RUNNING", running, state=AppState.RUNNING)) == ""
    assert app_message(status("COMPLETED", state=AppState.SUCCEEDED)) == ""
    assert app_message(status("PENDING (Resources)", state=AppState.PENDING)) == "PENDING (Resources)"
    assert app_message(status("RUNNING; requeued 1 time(s)", running, state=AppState.RUNNING)) == "requeued 1 time(s)"
    oom = failed(code=137, msg="killed: out of memory (limit 64 MiB, peak 222.5 MiB)")
    assert app_message(status("OUT_OF_MEMORY: python[0]: " + oom.msg, oom)) == ""
    assert app_message(status("<NONE>")) == ""


def test_an_app_in_stream_output_is_named_without_a_handle() -> None:
    assert app_label("local_cwd://default/train-b3k2x9q0d1") == "train-b3k2x9q0d1 on local_cwd"
    assert app_label("not a handle") == "not a handle"


def test_a_secret_in_an_error_file_stderr_or_the_apps_message_is_masked_in_every_shape() -> None:
    """The reasons are shown in the panes, JobFailed, the saved record and the server's rows: each shape an
    error file, a stderr line or an app's message may hold a secret in comes out masked (issue 31, 33)."""
    secret = "sk-Zq7live9"
    errors = [
        f'{{"message": {{"message": "RuntimeError: WANDB_API_KEY={secret}"}}}}',
        f'{{"message": "{{\\"WANDB_API_KEY\\": \\"{secret}\\"}}"}}',
        f'{{"WANDB_API_KEY": "{secret}"}}',
        f'{{"WANDB_API_KEY": ["{secret}"], "other": 1}}',
        f'{{"message": {{"message": "bad", "extraInfo": {{"auth": {{"user": "{secret}"}}}}}}}}',
        f"{{'WANDB_API_KEY': '{secret}'}}",
        f"clone https://me:{secret}@example.com/r.git failed",
        f"--token {secret}\nsecond line",
    ]
    for error in errors:
        rep = failed(error=error)
        reason = replica_reason(rep, status("", rep))
        assert secret not in reason and "sk-" not in reason and reason, (error, reason)
    assert replica_reason(failed(), None, [f"ValueError: {{'HF_TOKEN': '{secret}'}}"]) == (
        "ValueError: {'HF_TOKEN': '********'}"
    )
    rep = failed()
    message = app_message(status(f'submit said {{"api_key": "{secret}"}}; HF_TOKEN={secret}', rep))
    assert message == 'submit said {"api_key": "********"}; HF_TOKEN=********'
