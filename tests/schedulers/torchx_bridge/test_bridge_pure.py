"""The bridge's pure parts. Following a log its backend cannot tail (TorchX's Ray): each read returns the
whole log; each line is yielded once, a line still being written waits for its newline, and the read after
the end is the last. What a failed Ray job's log says went wrong."""

from __future__ import annotations

from typing import List

from jupyter_sched.schedulers.torchx_bridge.poll import poll_lines


def test_each_line_once_partial_lines_held_and_a_last_read_after_the_end() -> None:
    logs = [[], ["a\n", "b"], ["a\n", "b\n", "c\n"], ["a\n", "b\n", "c\n", "d"], ["a\n", "b\n", "c\n", "d"]]
    reads: List[int] = []
    ended_after = 3  # the app has ended when it is asked the fourth time

    def read() -> List[str]:
        reads.append(1)
        return logs[len(reads) - 1]

    out = list(poll_lines(read, lambda: len(reads) >= ended_after, 0.0, follow=True, sleep=lambda s: None))
    assert out == ["a\n", "b\n", "c\n", "d"]  # the unterminated last line comes once the app has ended
    assert len(reads) == 4


def test_without_follow_one_read_with_everything() -> None:
    assert list(poll_lines(lambda: ["x\n", "y"], lambda: False, 1.0, follow=False)) == ["x\n", "y"]


def test_a_failed_ray_jobs_log_names_the_failed_replicas_last_line_and_exit_code() -> None:
    from jupyter_sched.schedulers.torchx_bridge.ray import failure_summary

    log = [
        "Entering main loop, start executing the script on worker nodes\n",
        "\x1b[36m(CommandActor pid=11)\x1b[0m KeyError: 'y'\n",
        "\x1b[36m(CommandActor pid=12)\x1b[0m step 5 of 5\n",
        "ray.exceptions.RayTaskError(RuntimeError): \x1b[36mray::CommandActor.exec_module()\x1b[39m"
        " (pid=11, ip=10.0.0.1, actor_id=04)\n",
        "RuntimeError: exec_module failed with return code 1\n",
    ]
    assert failure_summary(log) == "KeyError: 'y'; exit code 1"
    assert failure_summary(["just a line\n"]) is None


def test_a_failed_drivers_reason_is_rays_message_in_one_line() -> None:
    """A job whose driver failed before any actor ran (the cluster's ``python3`` has no Ray) names the
    exception Ray's message quotes, then what Ray says of the entrypoint; TorchX reports only "FAILED"."""
    from jupyter_sched.schedulers.torchx_bridge.ray import job_message_summary

    message = (
        "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n"
        "Traceback (most recent call last):\n"
        '  File "/tmp/ray/session_latest/runtime_resources/working_dir_files/_ray_pkg_x/ray_driver.py", line 22,'
        " in <module>\n"
        "    import ray\n"
        "ModuleNotFoundError: No module named 'ray'\n\n"
    )
    assert job_message_summary(message) == (
        "ModuleNotFoundError: No module named 'ray'; Job entrypoint command failed with exit code 1"
    )
    assert job_message_summary("Job supervisor actor could not be scheduled") == (
        "Job supervisor actor could not be scheduled"
    )
    assert job_message_summary("") is None and job_message_summary(None) is None


def test_a_masked_request_may_reach_a_typing_alias() -> None:
    """A request's object graph can reach a typing alias (``os.PathLike[str]``), whose ``vars()`` is its
    class's read-only mappingproxy: masking walks past it (a CI run's Kubernetes dry run raised TypeError)."""
    import os

    from jupyter_sched.schedulers.torchx_bridge.text import masked_copy

    class Holder:
        pass

    holder = Holder()
    holder.alias = os.PathLike[str]  # type: ignore[attr-defined]
    holder.arg = "--token=SECRET"  # type: ignore[attr-defined]
    masked = masked_copy(holder, ["SECRET"])
    assert masked.arg == "--token=********" and masked.alias == os.PathLike[str]


def test_masking_a_request_changes_nothing_the_request_shares() -> None:
    """What a deep copy shares rather than copies (a logger, an object that copies as itself) is never
    masked, nor what it reaches: a CI run's Kubernetes dry run reached a test module's globals through its
    request and masked the test's own constant there."""
    import logging
    import types

    from jupyter_sched.schedulers.torchx_bridge.text import masked_copy

    class Shared:
        def __deepcopy__(self, memo: dict) -> "Shared":
            return self

    module = types.ModuleType("holds_a_secret")
    module.TOKEN = "SECRET"  # type: ignore[attr-defined]
    shared = Shared()
    shared.module = module  # type: ignore[attr-defined]
    shared.note = "SECRET"  # type: ignore[attr-defined]
    logger = logging.getLogger("jupyter_sched.test.SECRET")
    request = {"env": {"HF_TOKEN": "SECRET"}, "shared": shared, "logger": logger, "args": ("a", ["SECRET"])}
    masked = masked_copy(request, ["SECRET"])
    assert masked["env"] == {"HF_TOKEN": "********"} and masked["args"] == ("a", ["********"])
    assert masked["shared"] is shared and shared.note == "SECRET" and module.TOKEN == "SECRET"
    assert masked["logger"] is logger and logger.name == "jupyter_sched.test.SECRET"
    assert request["env"] == {"HF_TOKEN": "SECRET"} and request["args"] == ("a", ["SECRET"])
