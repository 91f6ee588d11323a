"""``log_iter`` of the docker backend on a real engine: line assembly, ``\\r``, UTF-8, streams, regex,
since/until, and following (live, across restarts, without losing or repeating lines)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, List

import docker
import pytest

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.docker_scheduler import DockerNotAvailableError, DockerScheduler
from jupyter_sched.specs import AppDef, AppState, BindMount, Role

from .fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    PYTHON,
    EngineProxy,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    docker_sched_fixture,
    engine_proxy_fixture,
    session_name_fixture,
)
from .test_scheduler import sh, wait_done

pytestmark = pytest.mark.timeout(120)


def finished(sched: DockerScheduler, script: str, image: str = BUSYBOX, entrypoint: str = "sh", **kwargs: Any) -> str:
    app = AppDef("logs", [Role("main", image, entrypoint=entrypoint, args=["-c", script], **kwargs)])
    app_id = sched.submit(app, {})
    wait_done(sched, app_id)
    return app_id


def items(sched: DockerScheduler, app_id: str, **kwargs: Any) -> List[str]:
    return list(sched.log_iter(app_id, "main", 0, **kwargs))


def test_lines_progress_frames_and_a_final_partial_line(docker_sched: DockerScheduler) -> None:
    app_id = finished(docker_sched, r"printf 'step 1\rstep 2\rstep 3\n'; printf 'a\r\nb\n'; printf 'no newline'")
    assert items(docker_sched, app_id) == ["step 1\r", "step 2\r", "step 3\n", "a\r\n", "b\n", "no newline"]
    assert items(docker_sched, app_id, should_tail=True) == items(docker_sched, app_id)


def test_utf8_is_decoded_safely(docker_sched: DockerScheduler) -> None:
    # the json-file driver stores invalid bytes as U+FFFD; multi-byte characters survive any read split
    app_id = finished(docker_sched, r"printf 'h\303\251llo \342\234\223\n'; printf 'bad \377\376 bytes\n'")
    assert items(docker_sched, app_id) == ["héllo ✓\n", "bad \ufffd\ufffd bytes\n"]


def test_lines_longer_than_the_drivers_16k_records_come_back_whole(docker_sched: DockerScheduler) -> None:
    app_id = finished(docker_sched, "print('é' * 40000); print('end')", image=PYTHON, entrypoint="python3")
    assert items(docker_sched, app_id) == ["é" * 40000 + "\n", "end\n"]


def test_combined_streams_keep_each_streams_lines_whole(docker_sched: DockerScheduler) -> None:
    # stdout's long line is stored as a 16 KiB partial record and the rest; stderr's line lands in between.
    # Each stream's text is assembled on its own: no stdout line carries stderr text, and the two final
    # lines without a newline stay apart.
    script = (
        "import sys, time\n"
        "sys.stdout.write('x' * 20000); sys.stdout.flush(); time.sleep(0.5)\n"
        "sys.stderr.write('err\\n'); sys.stderr.flush(); time.sleep(0.5)\n"
        "sys.stdout.write('end\\n'); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stderr.write('err-tail'); sys.stderr.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('out-tail'); sys.stdout.flush()\n"
    )
    app_id = finished(docker_sched, script, image=PYTHON, entrypoint="python3")
    expected = sorted(["x" * 20000 + "end\n", "err\n", "err-tail", "out-tail"])
    assert sorted(items(docker_sched, app_id)) == expected
    assert sorted(items(docker_sched, app_id, should_tail=True)) == expected
    assert items(docker_sched, app_id, streams=Stream.STDOUT) == ["x" * 20000 + "end\n", "out-tail"]


def test_streams_and_regex(docker_sched: DockerScheduler) -> None:
    app_id = finished(docker_sched, "echo out1; echo err1 >&2; sleep 0.1; echo out2; echo err2 >&2")
    assert items(docker_sched, app_id, streams=Stream.STDOUT) == ["out1\n", "out2\n"]
    assert items(docker_sched, app_id, streams=Stream.STDERR) == ["err1\n", "err2\n"]
    assert sorted(items(docker_sched, app_id)) == ["err1\n", "err2\n", "out1\n", "out2\n"]
    assert sorted(items(docker_sched, app_id, streams="combined")) == sorted(items(docker_sched, app_id))
    assert sorted(items(docker_sched, app_id, regex=r"2$")) == ["err2\n", "out2\n"]
    with pytest.raises(ValueError, match="unsupported streams"):
        docker_sched.log_iter(app_id, "main", streams="both")  # type: ignore[arg-type]


def test_since_and_until(docker_sched: DockerScheduler) -> None:
    app_id = finished(docker_sched, "echo a; sleep 0.6; echo b; sleep 0.6; echo c")
    raw = docker.from_env().containers.get(f"{app_id}-main-0").logs(timestamps=True).decode().splitlines()
    stamp = {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in raw}
    b_time = datetime.strptime(stamp["b"][:26] + "Z", "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    assert items(docker_sched, app_id, since=b_time) == ["b\n", "c\n"]
    assert items(docker_sched, app_id, until=b_time - timedelta(microseconds=1)) == ["a\n"]
    assert items(docker_sched, app_id, since=b_time, until=b_time + timedelta(milliseconds=100)) == ["b\n"]
    naive_local = b_time.astimezone().replace(tzinfo=None)  # naive datetimes are local time, like datetime.now()
    assert items(docker_sched, app_id, since=naive_local) == ["b\n", "c\n"]
    # with until, should_tail does not follow (the local backend does the same)
    assert items(docker_sched, app_id, until=b_time - timedelta(microseconds=1), should_tail=True) == ["a\n"]


def test_follow_yields_lines_while_the_replica_runs(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(sh("echo start; sleep 600; echo end"), {"cancel_grace": 1})
    it = iter(docker_sched.log_iter(app_id, "main", should_tail=True))
    assert next(it) == "start\n"
    # the first line came while the replica still runs (it sleeps until we cancel it)
    assert docker_sched.describe(app_id).state == AppState.RUNNING  # type: ignore[union-attr]
    docker_sched.cancel(app_id)
    assert list(it) == []
    assert wait_done(docker_sched, app_id).state == AppState.CANCELLED


def test_follow_is_complete_for_a_big_log(docker_sched: DockerScheduler) -> None:
    n = 50000
    app_id = docker_sched.submit(AppDef("seq", [Role("main", BUSYBOX, entrypoint="seq", args=[str(n)])]), {})
    got = list(docker_sched.log_iter(app_id, "main", should_tail=True))
    assert got == [f"{i}\n" for i in range(1, n + 1)]
    assert items(docker_sched, app_id) == got


def test_follow_resumes_across_restarts_without_repeats(docker_sched: DockerScheduler) -> None:
    # each restart ends the engine's follow stream while the replica has not ended: the iterator re-reads
    # from the last timestamp it saw
    app_id = docker_sched.submit(sh("echo run; seq 3; sleep 0.3; exit 1", max_retries=2), {})
    reader = docker_sched.log_iter(app_id, "main", should_tail=True)
    got = list(reader)
    assert got == ["run\n", "1\n", "2\n", "3\n"] * 3
    assert reader.resumes >= 2  # type: ignore[attr-defined]
    assert wait_done(docker_sched, app_id).roles_statuses[0].replicas[0].num_restarts == 2


def test_follow_of_a_cancelled_app_ends(docker_sched: DockerScheduler) -> None:
    app_id = docker_sched.submit(sh('trap "" TERM; echo up; sleep 100'), {"cancel_grace": 1})
    it = iter(docker_sched.log_iter(app_id, "main", should_tail=True))
    assert next(it) == "up\n"
    docker_sched.cancel(app_id)
    assert list(it) == []  # the follow ends with the app (it would block for 100 s otherwise)
    assert docker_sched.describe(app_id).state == AppState.CANCELLED  # type: ignore[union-attr]


def test_unknown_role_or_replica(docker_sched: DockerScheduler) -> None:
    app_id = finished(docker_sched, "true")
    with pytest.raises(ValueError, match="has no role 'nope'; its roles are: main"):
        docker_sched.log_iter(app_id, "nope")
    with pytest.raises(ValueError, match=r"role 'main' of app .* has replicas 0..0, not 3"):
        docker_sched.log_iter(app_id, "main", 3)


def until(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _gated(tmp_path: Path) -> AppDef:
    """Prints 1..3, waits until the test creates ``go`` in a bind-mounted directory, prints 4..6."""
    gate = tmp_path / "gate"
    gate.mkdir()
    script = "seq 1 3; while [ ! -e /gate/go ]; do sleep 0.05; done; seq 4 6"
    mounts = [BindMount(str(gate), "/gate")]
    return AppDef("gated", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", script], mounts=mounts)])


def test_follow_resumes_after_a_dropped_connection(
    docker_sched: DockerScheduler, session_name: str, engine_proxy: EngineProxy, tmp_path: Path
) -> None:
    app_id = docker_sched.submit(_gated(tmp_path), {})
    via_proxy = DockerScheduler(session_name, docker_client=docker.DockerClient(base_url=engine_proxy.url))
    try:
        reader = via_proxy.log_iter(app_id, "main", should_tail=True)
        it = iter(reader)
        assert [next(it) for _ in range(3)] == ["1\n", "2\n", "3\n"]
        until(lambda: reader.follow_opens >= 1 and reader.live_opens >= 1)  # type: ignore[attr-defined]
        engine_proxy.drop()  # both follow connections break while the replica still runs
        until(lambda: reader.resumes >= 1)  # type: ignore[attr-defined]
        (tmp_path / "gate" / "go").touch()
        assert list(it) == ["4\n", "5\n", "6\n"]
    finally:
        via_proxy.close()


def test_log_iter_when_the_engine_goes_away_says_how_to_start_one(
    docker_sched: DockerScheduler, session_name: str, engine_proxy: EngineProxy, tmp_path: Path
) -> None:
    app_id = docker_sched.submit(_gated(tmp_path), {"cancel_grace": 0})
    via_proxy = DockerScheduler(session_name, docker_client=docker.DockerClient(base_url=engine_proxy.url))
    try:
        reader = via_proxy.log_iter(app_id, "main", should_tail=True)
        it = iter(reader)
        assert next(it) == "1\n"
        until(lambda: reader.follow_opens >= 1)  # type: ignore[attr-defined]
        engine_proxy.close()
        with pytest.raises(DockerNotAvailableError, match=r"lost the connection to the Docker engine.*docker info"):
            list(it)
    finally:
        via_proxy.close()
        docker_sched.cancel(app_id)


# -- live frames: the history joined with the container's live output ------------------------------------------


def _gate_app(tmp_path: Path, script: str) -> AppDef:
    gate = tmp_path / "gate"
    gate.mkdir(exist_ok=True)
    mounts = [BindMount(str(gate), "/gate")]
    return AppDef("live", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", script], mounts=mounts)])


WAIT_GO = "while [ ! -e /gate/go ]; do sleep 0.02; done"


def touch_when_live(reader: Any, path: Path) -> None:
    """Creates ``path`` once the follow has opened the container's live stream (the generator runs only
    while the test is in ``next``, so a thread does it)."""

    def run() -> None:
        until(lambda: reader.live_opens >= 1)
        path.touch()

    threading.Thread(target=run, daemon=True).start()


def test_follow_shows_an_unterminated_frame_while_the_replica_runs(
    docker_sched: DockerScheduler, tmp_path: Path
) -> None:
    # the json-file driver would store "\r10%" only when the line ends (here: never before the exit)
    script = f"{WAIT_GO}; echo epoch 1; printf '\\r10%%'; sleep 600"
    app_id = docker_sched.submit(_gate_app(tmp_path, script), {"cancel_grace": 0})
    reader = docker_sched.log_iter(app_id, "main", should_tail=True)
    it = iter(reader)
    touch_when_live(reader, tmp_path / "gate" / "go")
    assert [next(it), next(it), next(it)] == ["epoch 1\n", "\r", "10%"]
    assert docker_sched.describe(app_id).state == AppState.RUNNING  # type: ignore[union-attr]
    docker_sched.cancel(app_id)
    assert list(it) == []
    # a plain read afterwards has the same bytes: the frame was not repeated by the history
    assert items(docker_sched, app_id) == ["epoch 1\n", "\r", "10%"]


def test_follow_of_a_bare_progress_frame(docker_sched: DockerScheduler, tmp_path: Path) -> None:
    # the repro: printf '\r10%'; sleep 2 -- "10%" comes while the replica still sleeps
    app_id = docker_sched.submit(_gate_app(tmp_path, f"{WAIT_GO}; printf '\\r10%%'; sleep 2"), {})
    reader = docker_sched.log_iter(app_id, "main", should_tail=True)
    it = iter(reader)
    touch_when_live(reader, tmp_path / "gate" / "go")
    assert next(it) == "10%"
    assert docker_sched.describe(app_id).state == AppState.RUNNING  # type: ignore[union-attr]
    # the line's start up to the first live "\r" (here the "\r" itself) was held by the engine: the follow
    # cannot know whether the line began before it, and skips it once shown frames overwrote it
    assert list(it) == []
    assert items(docker_sched, app_id) == ["\r", "10%"]  # a snapshot has every byte


def test_follow_that_starts_in_the_middle_of_a_line_loses_and_repeats_nothing(
    docker_sched: DockerScheduler, tmp_path: Path
) -> None:
    script = (
        "printf 'epoch 3 lo'; touch /gate/wrote; " + WAIT_GO + "; printf 'ss\\r10%%'; "
        "while [ ! -e /gate/go2 ]; do sleep 0.02; done; printf '\\r20%%\\n'; echo next"
    )
    app_id = docker_sched.submit(_gate_app(tmp_path, script), {})
    until(lambda: (tmp_path / "gate" / "wrote").exists())
    reader = docker_sched.log_iter(app_id, "main", should_tail=True)
    it = iter(reader)
    touch_when_live(reader, tmp_path / "gate" / "go")
    assert next(it) == "10%"  # live, while the engine still holds "epoch 3 loss\r10%"
    (tmp_path / "gate" / "go2").touch()
    rest = list(it)
    assert rest == ["\r", "20%\n", "next\n"]  # "epoch 3 loss\r", overwritten by "10%", is not repeated late
    assert items(docker_sched, app_id) == ["epoch 3 loss\r", "10%\r", "20%\n", "next\n"]


def test_follow_of_many_lines_with_live_frames_is_exact(docker_sched: DockerScheduler, tmp_path: Path) -> None:
    script = (
        WAIT_GO + "; i=0; while [ $i -lt 300 ]; do printf 'step %d\\r' $i; echo line $i; i=$((i+1)); done; printf tail"
    )
    app_id = docker_sched.submit(_gate_app(tmp_path, script), {})
    reader = docker_sched.log_iter(app_id, "main", should_tail=True)
    it = iter(reader)
    touch_when_live(reader, tmp_path / "gate" / "go")
    got = list(it)
    assert "".join(got) == "".join(f"step {i}\rline {i}\n" for i in range(300)) + "tail"
    assert got == items(docker_sched, app_id)


def test_a_follow_that_loses_both_streams_mid_bar_loses_and_repeats_nothing(
    docker_sched: DockerScheduler, session_name: str, engine_proxy: EngineProxy, tmp_path: Path
) -> None:
    # the follow starts after "1\n2\n" were stored: the bar's line is the seam line, shown live from "10%"
    script = (
        "seq 1 2; touch /gate/wrote; " + WAIT_GO + "; printf '\\r10%%'; while [ ! -e /gate/go2 ]; do sleep 0.02;"
        " done; printf '\\r20%%\\n'; echo end"
    )
    app_id = docker_sched.submit(_gate_app(tmp_path, script), {})
    until(lambda: (tmp_path / "gate" / "wrote").exists())
    via_proxy = DockerScheduler(session_name, docker_client=docker.DockerClient(base_url=engine_proxy.url))
    try:
        reader = via_proxy.log_iter(app_id, "main", should_tail=True)
        it = iter(reader)
        touch_when_live(reader, tmp_path / "gate" / "go")
        assert [next(it), next(it), next(it)] == ["1\n", "2\n", "10%"]  # "10%" shown live
        until(lambda: reader.follow_opens >= 1)  # type: ignore[attr-defined]
        engine_proxy.drop()  # the history and the live stream break in the middle of the bar's line
        until(lambda: reader.resumes >= 1)  # type: ignore[attr-defined]
        (tmp_path / "gate" / "go2").touch()
        assert list(it) == ["\r", "20%\n", "end\n"]  # "10%" is not repeated when its line is stored
    finally:
        via_proxy.close()
