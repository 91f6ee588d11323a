"""``jupyter-sched metrics``: real function jobs on local_cwd log with ``jupyter_sched.track`` (functions in
tests/track/metric_jobs.py), and the real command prints their summary table, their records as JSON lines and
as CSV, follows a running job's records until it ends, and says so for a job without metrics or an unknown
handle."""

from __future__ import annotations

import csv
import io
import json
import os
import queue
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

import jupyter_sched
from tests.track.metric_jobs import logs, logs_nothing, logs_until_gate


@pytest.fixture(scope="module")
def session_cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """A Cli in this test session's state directory, where ``jupyter_sched.submit`` records its apps."""
    return Cli(tmp_path_factory.mktemp("metrics_cli"), dict(os.environ))


@pytest.fixture(scope="module")
def logged() -> str:
    job = jupyter_sched.submit(logs, 100)
    assert job.result(timeout=180) == 100
    return str(job.handle)


def test_the_table_has_a_row_per_key_with_last_min_max_count_step_and_goal(session_cli: Cli, logged: str) -> None:
    proc = session_cli("metrics", logged)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["ROLE", "REPLICA", "KEY", "LAST", "MIN", "MAX", "COUNT", "STEP", "GOAL"]
    rows = {line.split()[2]: line.split() for line in lines[1:]}
    assert rows["loss"] == ["logs", "0", "loss", "0.01", "0.01", "1", "100", "99", "min"]
    assert rows["odd"] == ["logs", "0", "odd", "99", "0", "99", "100", "99", "-"], "NaN is never a min or max"
    end = lines[0].index("COUNT") + len("COUNT")  # numbers are right-aligned under their header
    assert all(line[:end].endswith(" 100") for line in lines[1:]), proc.stdout


def test_jsonl_is_the_records_as_stored_with_role_and_replica(session_cli: Cli, logged: str) -> None:
    proc = session_cli("metrics", logged, "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} is not strict JSON"))
               for line in proc.stdout.splitlines()]  # fmt: skip
    steps = [r for r in records if "metrics" in r]
    assert [r["step"] for r in steps] == list(range(100))
    assert steps[3]["metrics"] == {"loss": 0.25, "odd": "NaN"}
    assert {(r["role"], r["replica"]) for r in records} == {("logs", 0)}
    assert any(r.get("define") == {"loss": "min"} for r in records)
    seqs = [r["seq"] for r in records]
    assert seqs == sorted(set(seqs)), "each record once, in the writer's order"


def test_csv_is_the_long_form_and_key_selects(session_cli: Cli, logged: str) -> None:
    proc = session_cli("metrics", logged, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert list(rows[0]) == ["step", "t", "key", "value", "role", "replica"]
    assert len(rows) == 200
    odd = {int(r["step"]): r["value"] for r in rows if r["key"] == "odd"}
    assert odd[3] == "NaN" and float(odd[4]) == 4.0
    loss = [float(r["value"]) for r in rows if r["key"] == "loss"]
    assert loss[-1] == pytest.approx(0.01) and all(float(r["t"]) > 1e9 for r in rows)
    only = list(csv.DictReader(io.StringIO(session_cli("metrics", logged, "--format", "csv", "--key", "loss").stdout)))
    assert len(only) == 100 and {r["key"] for r in only} == {"loss"}


def _reader(stream: Any) -> "queue.Queue[str]":
    lines: "queue.Queue[str]" = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")  # the end

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_follow_prints_records_as_written_and_ends_with_the_app(session_cli: Cli, tmp_path: Path) -> None:
    """The job logs 5 steps, then waits for a file the test makes only after the follower printed them:
    so those lines came while the job ran; then 5 more, and the command ends after the app, each record once."""
    gate = tmp_path / "gate"
    job = jupyter_sched.submit(logs_until_gate, str(gate), 5, 5)
    proc = session_cli.popen("metrics", str(job.handle), "--follow", "--format", "jsonl")
    try:
        lines = _reader(proc.stdout)
        got: List[Dict[str, Any]] = []
        while len(got) < 5:
            line = lines.get(timeout=120)
            assert line, f"the follow ended before the gate: {proc.stderr.read() if proc.stderr else ''}"
            got.append(json.loads(line))
        gate.touch()
        while True:
            line = lines.get(timeout=120)
            if not line:
                break
            got.append(json.loads(line))
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
    assert job.result(timeout=60) == 10
    assert [r["step"] for r in got] == list(range(10)), "every record once, in order"


def test_a_job_without_metrics_says_so_in_one_line(session_cli: Cli) -> None:
    job = jupyter_sched.submit(logs_nothing)
    assert job.result(timeout=120) == "quiet"
    proc = session_cli("metrics", str(job.handle))
    assert proc.returncode == 0 and proc.stdout == ""
    said = f"{job.handle}: no metrics (nothing was logged with jupyter_sched.track)"
    assert proc.stderr.strip().splitlines() == [said]


def test_an_unknown_handle_is_status_s_error(session_cli: Cli, logged: str) -> None:
    unknown = logged + "x"
    metrics, status = session_cli("metrics", unknown), session_cli("status", unknown)
    assert status.returncode == 1 and "no app" in status.stderr
    assert (metrics.returncode, metrics.stderr) == (status.returncode, status.stderr)


def test_a_table_cannot_follow_and_the_error_names_the_fix(session_cli: Cli, logged: str) -> None:
    proc = session_cli("metrics", logged, "--follow")
    assert proc.returncode == 2 and "--follow needs --format jsonl or csv" in proc.stderr
    bad = session_cli("metrics", logged, "--key", "bad key")
    assert bad.returncode == 2 and "metric 'bad key'" in bad.stderr and "train/loss" in bad.stderr, bad.stderr
