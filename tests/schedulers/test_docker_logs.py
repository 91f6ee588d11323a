"""``log_iter`` of the docker backend on a real engine: line assembly, ``\\r``, UTF-8, streams, regex,
since/until, and following (live, across restarts, without losing or repeating lines)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, List

import docker
import pytest

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.docker_scheduler import DockerNotAvailableError, DockerScheduler
from jupyter_sched.specs import AppDef, AppState, BindMount, Role

from .docker_fixtures import (  # noqa: F401 - fixtures
    BUSYBOX,
    PYTHON,
    docker_images_fixture,
    docker_network_cleanup_fixture,
    EngineProxy,
    docker_sched_fixture,
    engine_proxy_fixture,
    session_name_fixture,
)
from .test_docker_scheduler import sh, wait_done

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


def _gated(tmp_path: Path) -> AppDef:
    """Prints 1..3, waits until the test creates ``go`` in a bind-mounted directory, prints 4..6."""
    gate = tmp_path / "gate"
    gate.mkdir()
    script = "seq 1 3; while [ ! -e /gate/go ]; do sleep 0.05; done; seq 4 6"
    return AppDef("gated", [Role("main", BUSYBOX, entrypoint="sh", args=["-c", script], mounts=[BindMount(str(gate), "/gate")])])


def test_follow_resumes_after_a_dropped_connection(
    docker_sched: DockerScheduler, session_name: str, engine_proxy: EngineProxy, tmp_path: Path
) -> None:
    app_id = docker_sched.submit(_gated(tmp_path), {})
    via_proxy = DockerScheduler(session_name, docker_client=docker.DockerClient(base_url=engine_proxy.url))
    try:
        reader = via_proxy.log_iter(app_id, "main", should_tail=True)
        it = iter(reader)
        assert [next(it) for _ in range(3)] == ["1\n", "2\n", "3\n"]
        engine_proxy.drop()  # the follow connection breaks while the replica still runs
        (tmp_path / "gate" / "go").touch()
        assert list(it) == ["4\n", "5\n", "6\n"]
        assert reader.resumes >= 1  # type: ignore[attr-defined]
    finally:
        via_proxy.close()


def test_log_iter_when_the_engine_goes_away_says_how_to_start_one(
    docker_sched: DockerScheduler, session_name: str, engine_proxy: EngineProxy, tmp_path: Path
) -> None:
    app_id = docker_sched.submit(_gated(tmp_path), {"cancel_grace": 0})
    via_proxy = DockerScheduler(session_name, docker_client=docker.DockerClient(base_url=engine_proxy.url))
    try:
        it = iter(via_proxy.log_iter(app_id, "main", should_tail=True))
        assert next(it) == "1\n"
        engine_proxy.close()
        with pytest.raises(DockerNotAvailableError, match=r"lost the connection to the Docker engine.*docker info"):
            list(it)
    finally:
        via_proxy.close()
        docker_sched.cancel(app_id)
