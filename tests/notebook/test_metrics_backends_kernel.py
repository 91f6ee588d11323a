"""Issue 34's promise on every backend: a script on ``local_docker``, a function job on ``slurm`` and a
function job on ``torchx:ray``, launched side by side from one IPython shell with the extension (as
test_metrics_pane.py's local_cwd job is), each chart their ``loss`` live in the job's pane, and the final
record keeps the chart. Each job logs its first steps, then waits for a file the test writes, so "live" is
an event, not a race: the pane shows a step below the last while the job is RUNNING.

The sidebar's side is its data: a real Jupyter server with the extension (tests/server/conftest.py's
``start_server``), sharing the kernel's state directory as a server and a kernel on one machine do, answers
``GET jobs/<handle>/metrics`` with each job's loss series, live and at the end. The sidebar draws exactly
that answer; the browser's rendering of it is covered once, for a local_cwd job, by
tests/e2e/test_metrics_sidebar.py.

The three records travel three ways: the container writes into its bind-mounted metrics directory (the
test image lacks the package, so its source is mounted), the Slurm job writes under the shared job
directory, and the Ray replica prints marked stderr lines that the pane's log follower stores here.
Docker, Slurm and Ray are required (skipped locally when missing, a failure under CI=true)."""

from __future__ import annotations

import shlex
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from nbhelpers import wait_for  # type: ignore[import-not-found]
from test_metrics_pane import chart_texts  # type: ignore[import-not-found]

from jupyter_sched.frontend.job import Job
from jupyter_sched.notebook.panes.job_view import mimebundle
from jupyter_sched.specs import AppState
from tests.conftest import require_module, require_ray
from tests.server.conftest import JobsServer, quote, start_server, stop_server

require_module("torchx", "the torchx extra: pip install jupyter_sched[torchx]")
require_ray()

# three engines start jobs on a loaded machine: the waits below are generous, and say what they waited for
# before this module's limit would cut them short
pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parents[2]
FIRST, STEPS = 5, 10
"""Each job logs steps 0..FIRST-1, waits for its gate file, then logs up to STEPS-1 (loss 1/(step+1))."""

TRAIN = f"""
def train(gate):
    import os, time
    from jupyter_sched import track
    track.define_metric("loss", goal="min")
    for i in range({STEPS}):
        if i == {FIRST}:
            track.flush()
            while not os.path.exists(gate):
                time.sleep(0.1)
        track.log({{"loss": 1.0 / (i + 1)}})
    track.flush()
    return "trained"
"""


@pytest.fixture
def server(slurm_cluster: Any, ray_cluster: str, tmp_path_factory: pytest.TempPathFactory,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[JobsServer]:  # fmt: skip
    """A jobs server started after the engines' fixtures (it inherits JUPYTER_SCHED_SLURM_DIR and
    RAY_ADDRESS), whose state directory this process's jobs then use too."""
    started = start_server(tmp_path_factory.mktemp("metrics_backends_server"))
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(started.log_dir))
    yield started
    stop_server(started)


def losses(server: JobsServer, handle: str) -> List[Any]:
    """``GET jobs/<handle>/metrics``'s loss series as (step, value) pairs (what the sidebar charts)."""
    body = server.api("GET", f"jobs/{quote(handle)}/metrics?" + urllib.parse.urlencode({"keys": "loss"}))
    return [(p["step"], p["value"]) for p in body["series"].get("loss", [])]


def expected(last: int) -> List[Any]:
    return [(i, 1.0 / (i + 1)) for i in range(last + 1)]


def label(step: int) -> str:
    return f"last {round(1.0 / (step + 1), 2):g} @ {step}"


@pytest.mark.usefixtures("docker_engine")
def test_docker_slurm_and_ray_jobs_chart_their_loss_live_in_the_pane_and_for_the_sidebar(
    ip: Any, widgets: Any, server: JobsServer, tmp_path: Path
) -> None:
    gates = {name: tmp_path / "gates" / name for name in ("docker", "slurm", "ray")}
    gates["docker"].parent.mkdir()
    try:
        check_live_and_final(ip, server, tmp_path, gates)
    finally:  # a failed check leaves no job waiting at its gate for ever
        for gate in gates.values():
            gate.touch()


def check_live_and_final(ip: Any, server: JobsServer, tmp_path: Path, gates: Dict[str, Path]) -> None:
    ip.run_cell(TRAIN, store_history=False).raise_error()
    # the container sees the gates' folder as /gates, and the package's source as /src/jupyter_sched
    mounts = (
        f"type=bind,src={REPO / 'jupyter_sched'},dst=/src/jupyter_sched,readonly,"
        f"type=bind,src={tmp_path / 'gates'},dst=/gates"
    )
    script = TRAIN + "\ntrain('/gates/docker')\n"
    line = f"-s local_docker utils.python --image jupyter-sched/python:local --env PYTHONPATH=/src --mounts {mounts}"
    docker = ip.run_line_magic("sched_run", f"{line} -c {shlex.quote(script)}")
    assert isinstance(docker, Job)
    launch = "import jupyter_sched\n" + "\n".join(
        f"{name}_job = jupyter_sched.submit(train, {str(gates[name])!r}, scheduler={scheduler!r})"
        for name, scheduler in (("slurm", "slurm"), ("ray", "torchx:ray"))
    )
    ip.run_cell(launch, store_history=False).raise_error()
    jobs: Dict[str, Job] = {"docker": docker, "slurm": ip.user_ns["slurm_job"], "ray": ip.user_ns["ray_job"]}
    assert jobs["slurm"].handle.startswith("slurm://") and jobs["ray"].handle.startswith("torchx:ray://")
    panes = {}
    for name, job in jobs.items():
        mimebundle(job)  # the cell's display: the view and its Metrics section, following the job
        panes[name] = job.view().metrics

    def charted(name: str, step: int) -> bool:
        html = panes[name].charts.value
        return "jsched-metric-chart" in html and label(step) in chart_texts(html, "loss")

    # live: the first steps are charted in the pane, and served, while each job waits at its gate
    for name, job in jobs.items():
        wait_for(lambda name=name: charted(name, FIRST - 1), 180, f"the {name} job's pane charting step {FIRST - 1}")
        wait_for(lambda job=job: losses(server, job.handle) == expected(FIRST - 1), 120,
                 f"the server's loss series of the {name} job, steps 0..{FIRST - 1}")  # fmt: skip
        status = job.fetch_status()
        assert status is not None and status.state == AppState.RUNNING, f"{name}: {status}"
    for gate in gates.values():
        gate.touch()
    # the end: the final record keeps the whole curve, and the server serves it
    for name, job in jobs.items():
        status = job.wait(timeout=300)
        assert status is not None and status.state == AppState.SUCCEEDED, f"{name}: {status}\n{list(job.logs())}"
        wait_for(lambda name=name: charted(name, STEPS - 1), 120, f"the {name} job's pane charting its last step")
        bundle = job.view().record_bundle()
        labels = chart_texts(bundle["text/html"], "loss")
        assert label(STEPS - 1) in labels and f"min {round(1.0 / STEPS, 2):g} @ {STEPS - 1}" in labels, name
        assert losses(server, job.handle) == expected(STEPS - 1), name
