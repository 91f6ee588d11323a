"""``jupyter_sched.track`` in real processes: inside a job (the variables a scheduler sets, pointing at a
temporary metrics directory) and outside one; what is written, what is refused, and what survives SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional

from jupyter_sched.frontend.jobs.metrics import read_all, read_records, read_summary
from jupyter_sched.logs.metric_lines import parse_marked_line, parse_record

REPO = Path(__file__).resolve().parents[2]


def job_env(metrics_dir: Optional[Path], role: str = "trainer", replica: int = 0) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED_", "TORCHX_"))}
    env.update({"JUPYTER_SCHED_JOB_ID": "local_cwd://t/app-1", "JUPYTER_SCHED_APP_ID": "app-1",
                "JUPYTER_SCHED_ROLE_NAME": role, "JUPYTER_SCHED_REPLICA_ID": str(replica)})  # fmt: skip
    if metrics_dir is not None:
        env["JUPYTER_SCHED_METRICS_DIR"] = str(metrics_dir)
    return env


def run(code: str, env: Dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """Runs ``code``; ``stdout``/``stderr`` as text, and ``stderr_bytes`` as written."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd, capture_output=True,
                         timeout=60)  # fmt: skip
    out.stderr_bytes = out.stderr  # type: ignore[attr-defined]
    out.stdout, out.stderr = out.stdout.decode().replace("\r\n", "\n"), out.stderr.decode().replace("\r", "\n")
    return out


def strict(text: str) -> object:
    def reject(name: str) -> None:
        raise ValueError(f"bare {name}")

    return json.loads(text, parse_constant=reject)


def test_outside_a_job_every_call_is_a_no_op_that_writes_nothing_and_never_raises(tmp_path: Path) -> None:
    env = job_env(None)
    for name in ("JUPYTER_SCHED_JOB_ID", "JUPYTER_SCHED_APP_ID"):
        env.pop(name)
    out = run(
        """
        from jupyter_sched import track
        track.log({"loss": 0.5}); track.log({"bad key!": object()}, step="x"); track.log_metric("a", "text")
        track.log_metrics({"a": 1}, step=3); track.report({"a": 1}); track.define_metric("a", goal="sideways")
        track.summary["x"] = object(); track.flush()
        print(track.current().is_noop, track.should_stop(), len(track.summary))
        """,
        env,
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True False 0" and out.stderr == ""
    assert list(tmp_path.iterdir()) == [], "nothing written"


def test_bad_keys_and_values_are_errors_at_the_call_naming_them(tmp_path: Path) -> None:
    out = run(
        """
        import numpy, torch
        from jupyter_sched import track
        def err(call):
            try:
                call()
            except (TypeError, ValueError) as e:
                return f"{type(e).__name__}: {e}"
        print(err(lambda: track.log({"loss": "0.3"})))
        print(err(lambda: track.log({"loss": [1, 2]})))
        print(err(lambda: track.log({"w": torch.ones(3)})))
        print(err(lambda: track.log({"bad key": 1})))
        print(err(lambda: track.log({"x" * 129: 1})))
        print(err(lambda: track.define_metric("loss", goal="best")))
        track.log({"np": numpy.float32(0.5), "t": torch.tensor(2.0), "i": numpy.int64(3), "b": True, "g/a.b-c": 1})
        """,
        job_env(tmp_path / "m"),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("TypeError: metric 'loss': a builtins.str is not a number")
    assert lines[1].startswith("TypeError: metric 'loss': a builtins.list is not a number")
    assert lines[2].startswith("TypeError: metric 'w': torch.Tensor is not a scalar")
    assert lines[3].startswith("ValueError: metric key 'bad key' has other characters")
    assert lines[4].startswith("ValueError: metric key 'xxxx") and "is 129 characters long" in lines[4]
    assert lines[5] == "ValueError: define_metric('loss', goal='best'): goal is 'min' or 'max'"
    records = read_records(str(tmp_path / "m"), "trainer", 0).records
    assert [r.metrics for r in records] == [{"np": 0.5, "t": 2.0, "i": 3.0, "b": 1.0, "g/a.b-c": 1.0}]


def test_non_finite_values_are_kept_as_strings_in_strict_json(tmp_path: Path) -> None:
    out = run(
        """
        import math
        from jupyter_sched import track
        track.define_metric("loss", goal="min")
        track.log({"loss": math.nan, "up": math.inf, "down": -math.inf})
        track.log({"loss": 0.5}, step=7)
        track.log_metric("loss", 0.25, timestamp=1_700_000_000_000)
        track.summary["best"] = math.nan
        """,
        job_env(tmp_path / "m", role="my role"),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "m" / "my%20role.0.jsonl").read_text()
    rows = [strict(line) for line in text.splitlines()]
    assert rows[1]["metrics"] == {"loss": "NaN", "up": "Infinity", "down": "-Infinity"}  # type: ignore[index]
    assert [r.get("step") for r in rows] == [None, 0, 7, 8, None]  # type: ignore[union-attr]
    assert rows[3]["t"] == 1_700_000_000.0  # type: ignore[index]
    assert [r["seq"] for r in rows] == [0, 1, 2, 3, 4], "seq increases strictly"  # type: ignore[index]
    summary_text = (tmp_path / "m" / "my%20role.0.summary.json").read_text()
    summary = strict(summary_text)
    loss = summary["metrics"]["loss"]  # type: ignore[index]
    assert (loss["count"], loss["last"], loss["min"], loss["min_step"], loss["max_step"], loss["goal"]) == (
        3, 0.25, 0.25, 8, 7, "min",
    )  # fmt: skip
    assert summary["summary"] == {"best": "NaN"}  # type: ignore[index]
    (rep,) = read_all(str(tmp_path / "m"))
    assert (rep.role, rep.replica, rep.skipped) == ("my role", 0, 0)


def test_without_a_metrics_dir_records_are_marked_lines_on_stderr(tmp_path: Path) -> None:
    out = run(
        """
        import sys
        from jupyter_sched import track
        sys.stderr.write("progress 10%\\r")
        track.log({"loss": 1.5}); track.log({"loss": 1.25})
        track.flush()
        print("ok", track.should_stop())
        """,
        job_env(None),
        tmp_path,
    )
    assert out.returncode == 0 and out.stdout == "ok False\n", out.stderr
    stderr = out.stderr_bytes.decode()  # as written: text mode would turn the \r into a newline
    records = [parse_marked_line(line) for line in stderr.split("\n")]
    assert [(r.step, r.metrics) for r in records if r is not None] == [(0, {"loss": 1.5}), (1, {"loss": 1.25})]
    assert stderr.startswith("progress 10%\r@@jupyter_sched:metrics {"), "after a \\r, a line still parses"


def test_a_stop_file_turns_should_stop_true(tmp_path: Path) -> None:
    metrics = tmp_path / "m"
    metrics.mkdir()
    code = """
        import time, sys
        from jupyter_sched import track
        print(track.should_stop(), flush=True)
        sys.stdin.readline()
        time.sleep(0.3)
        print(track.should_stop(), flush=True)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=job_env(metrics, replica=2),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == "False\n"
    (metrics / "trainer.2.stop").touch()
    proc.stdin.write("\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == "True\n"
    assert proc.wait(timeout=30) == 0


def test_sigterm_writes_what_was_logged_and_the_process_still_dies_of_it(tmp_path: Path) -> None:
    code = """
        import time
        from jupyter_sched import track
        for i in range(50):
            track.log({"loss": 1.0 / (i + 1)})
        print("logged", flush=True)
        time.sleep(60)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=job_env(tmp_path / "m"),
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "logged\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM, "it still ends by the signal"
    assert len(read_records(str(tmp_path / "m"), "trainer", 0).records) == 50


def test_torn_and_corrupt_lines_are_skipped_and_counted_and_a_partial_last_line_waits(tmp_path: Path) -> None:
    good = '{"v":1,"w":"a","seq":%d,"t":1.5,"step":%d,"metrics":{"loss":0.5}}'
    path = tmp_path / "trainer.0.jsonl"
    lines: List[str] = [good % (0, 0), '{"v":1,"seq":1,"t":1.5,"st', "not json", '{"v":1,"seq":2,"t":NaN}',
                        "\xff", good % (3, 3)]  # fmt: skip
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape") + (good % (4, 4))[:20].encode())
    chunk = read_records(str(tmp_path), "trainer", 0)
    assert [r.seq for r in chunk.records] == [0, 3] and chunk.skipped == 4
    with open(path, "a") as f:
        f.write((good % (4, 4))[20:] + "\n")
    more = read_records(str(tmp_path), "trainer", 0, chunk.cursor)
    assert [r.seq for r in more.records] == [4] and more.skipped == 0, "the line completed later is read whole"
    assert read_summary(str(tmp_path), "trainer", 0) is None
    (rep,) = read_all(str(tmp_path))
    assert rep.skipped == 4 and rep.summary["loss"]["count"] == 3, "the summary recomputed from the records"


def test_a_record_written_by_the_writer_parses_as_one(tmp_path: Path) -> None:
    out = run(
        "from jupyter_sched import track\ntrack.log({'a': 1e-300, 'b': -0.0, 'c': 123456789012345678})\n",
        job_env(tmp_path),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    record = parse_record((tmp_path / "trainer.0.jsonl").read_text())
    assert record is not None and record.metrics == {"a": 1e-300, "b": -0.0, "c": 123456789012345678.0}
    assert time.time() - record.t < 600
