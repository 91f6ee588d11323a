"""Notebooks run as jobs on local_cwd, for real: each replica starts an ipykernel with nbclient.

The notebooks are written here with nbformat; the kernels are real processes, found in /proc by the job
directory their environment carries, so a kernel left behind by a cancel is seen."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import warnings
from typing import Any, Dict, List

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import jupyter_sched
from jupyter_sched.functions import FunctionError
from jupyter_sched.specs import AppState

PARAMS = """lr: float = 0.1  # learning rate
epochs = 3  # type: int
tag = "a"
layers = {
    "width": 8,  # not the help
    "depth": 2,
}  # the network
"""


def write(path: str, *sources: str, params: str = PARAMS, kernelspec: bool = True) -> str:
    cells = [new_markdown_cell("# a notebook job")]
    if params:
        cells.append(new_code_cell(params, metadata={"tags": ["parameters"]}))
    cells += [new_code_cell(s) for s in sources]
    meta = {"kernelspec": {"name": "no-such-kernel-here", "display_name": "elsewhere", "language": "python"}}
    nbformat.write(new_notebook(cells=cells, metadata=meta if kernelspec else {}), path)
    return path


def read(path: str) -> Dict[str, Any]:
    with open(path) as f:
        return dict(json.load(f))


def outputs_text(path: str, index: int) -> str:
    """Cell ``index``'s saved outputs as JSON text, "" while the output notebook is not written yet."""
    try:
        return json.dumps(read(path)["cells"][index]["outputs"])
    except (OSError, ValueError, IndexError):
        return ""


def source(cell: Dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else str(cell["source"])


def kernels_of(job_dir: str) -> List[int]:
    """The ipykernel processes started for the job whose directory is ``job_dir`` (from /proc)."""
    mark = f"JUPYTER_SCHED_FN_DIR={job_dir}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if b"ipykernel" in cmd and mark in env:
            found.append(int(pid))
    return found


def function_dirs() -> set:
    from jupyter_sched.functions.launch import job_root
    from jupyter_sched.runner import DEFAULT_SESSION
    from jupyter_sched.runner.shared import shared_runner

    root = job_root(shared_runner(DEFAULT_SESSION), "local_cwd", None)
    return set(os.listdir(root)) if os.path.isdir(root) else set()


def until(check: Any, what: str, deadline: float = 120) -> Any:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"not within {deadline} s: {what}")


def test_parameters_are_injected_and_the_recorded_values_come_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        str(tmp_path / "train.ipynb"),
        "import jupyter_sched, os\nprint('training with', lr, tag)\njupyter_sched.record('loss', lr * epochs)",
        "jupyter_sched.record('seen', {'tag': tag, 'steps': steps, 'cwd': os.getcwd()})\n"
        "jupyter_sched.record('odd', {1, 2})",
    )
    before = open(path, "rb").read()
    with pytest.warns(UserWarning, match="parameter steps not defined"):
        job = jupyter_sched.submit(jupyter_sched.Notebook(path), lr=0.01, tag='say "hi"\n', raw={"steps": "2 + 3"})
    got = job.result(timeout=180)
    assert got["loss"] == pytest.approx(0.03)
    assert got["seen"] == {"tag": 'say "hi"\n', "steps": 5, "cwd": str(tmp_path)}, "runs in the notebook's folder"
    assert got["odd"] == {1, 2}, "a value JSON cannot hold comes back pickled"
    assert open(path, "rb").read() == before, "the user's file is never written"

    out = read(job.output_path)
    assert job.output_path.startswith(job.job_dir) and job.output_path.endswith("train.output.ipynb")
    cells = out["cells"]
    assert "parameters" in cells[1]["metadata"]["tags"]
    injected = cells[2]
    assert injected["metadata"]["tags"] == ["injected-parameters"], "right after the parameters cell"
    assert source(injected).splitlines() == ["# Parameters", "lr = 0.01", "tag = 'say \"hi\"\\n'", "steps = 2 + 3"]
    assert out["metadata"]["papermill"]["parameters"] == {"lr": 0.01, "tag": 'say "hi"\n', "steps": "2 + 3"}
    assert out["metadata"]["papermill"]["exception"] is False
    for cell in cells[1:]:
        meta = cell["metadata"]["papermill"]
        assert meta["status"] == "completed" and meta["exception"] is False and meta["duration"] >= 0, meta
    assert [c["execution_count"] for c in cells[1:]] == [1, 2, 3, 4]
    assert any("training with 0.01" in line for line in job.logs()), "cell output goes to the replica's log"
    progress = job.notebook_progress()
    assert progress is not None and progress["state"] == "completed" and (progress["cell"], progress["cells"]) == (4, 4)


def test_inspect_notebook_gives_papermills_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "p.ipynb"), "pass")
    assert jupyter_sched.inspect_notebook(path) == {
        "lr": {"name": "lr", "inferred_type_name": "float", "default": "0.1", "help": "learning rate"},
        "epochs": {"name": "epochs", "inferred_type_name": "int", "default": "3", "help": ""},
        "tag": {"name": "tag", "inferred_type_name": "None", "default": '"a"', "help": ""},
        "layers": {"name": "layers", "inferred_type_name": "None", "default": '{"width": 8,"depth": 2,}',
                   "help": "the network"},
    }  # fmt: skip
    assert jupyter_sched.inspect_notebook(write(str(tmp_path / "none.ipynb"), "pass", params="")) == {}


def test_strict_refuses_unknown_names_before_launch_and_the_default_warns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "s.ipynb"), "pass")
    before = function_dirs()
    with pytest.raises(ValueError) as info:
        jupyter_sched.submit(jupyter_sched.Notebook(path, strict=True), lr=0.2, learning_rate=0.2, epocs=3)
    text = str(info.value)
    assert "learning_rate, epocs" in text and "lr, epochs, tag, layers" in text, text
    assert function_dirs() == before, "nothing was written or launched"
    with pytest.raises(ValueError, match="epocs"):  # a sweep refuses before any run starts
        jupyter_sched.sweep(jupyter_sched.Notebook(path, strict=True), {"lr": [0.1], "epocs": [1]})
    assert function_dirs() == before
    with pytest.warns(UserWarning, match="learning_rate") as caught:
        job = jupyter_sched.submit(jupyter_sched.Notebook(path), learning_rate=0.2)
    assert [w.filename for w in caught] == [__file__], "the warning points at the submit line"
    assert job.result(timeout=180) == {}


def test_no_parameters_cell_puts_the_values_first_with_a_warning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "bare.ipynb"), "import jupyter_sched\njupyter_sched.record('x', x)", params="")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        job = jupyter_sched.submit(jupyter_sched.Notebook(path), x=[1, None, True])
    assert any("no cell tagged 'parameters'" in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert job.result(timeout=180) == {"x": [1, None, True]}
    assert read(job.output_path)["cells"][0]["metadata"]["tags"] == ["injected-parameters"]


def test_a_failing_cell_fails_the_job_naming_it_and_keeps_the_output(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "fails.ipynb"), "print('before')", "x = 1\nx / 0", "print('never')")
    job = jupyter_sched.submit(jupyter_sched.Notebook(path))
    with pytest.raises(FunctionError) as info:
        job.result(timeout=180)
    assert info.value.message == "cell 5 (In [4]) raised ZeroDivisionError: division by zero", info.value.message
    if sys.version_info >= (3, 11):  # exception notes are printed from 3.11 on
        assert "the cell's traceback:" in info.value.remote_traceback and "----> 2 x / 0" in info.value.remote_traceback
    assert job.state == AppState.FAILED
    cells = read(job.output_path)["cells"]
    failed, later = cells[4], cells[5]
    assert failed["metadata"]["papermill"]["status"] == "failed" and failed["metadata"]["papermill"]["exception"]
    assert any(o["output_type"] == "error" and o["ename"] == "ZeroDivisionError" for o in failed["outputs"])
    assert later["metadata"]["papermill"]["status"] == "pending" and later["outputs"] == []
    assert later["execution_count"] is None, "later cells are not run"
    progress = job.notebook_progress()
    assert progress is not None and progress["state"] == "failed" and progress["line"] == "x = 1"
    assert any("ZeroDivisionError" in line for line in job.logs(streams="stderr"))


def test_a_missing_named_kernel_fails_at_start_listing_the_installed_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "k.ipynb"), "pass")
    job = jupyter_sched.submit(jupyter_sched.Notebook(path, kernel="no-such-kernel-here"))
    with pytest.raises(FunctionError) as info:
        job.result(timeout=180)
    assert "kernel 'no-such-kernel-here' is not installed" in info.value.message
    assert "python3" in info.value.message, "it lists the kernels that exist there"


def test_cancel_stops_the_kernel_and_keeps_the_partial_output(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        str(tmp_path / "slow.ipynb"),
        "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)",
        "print('never')",
    )
    job = jupyter_sched.submit(jupyter_sched.Notebook(path))
    until(lambda: (job.notebook_progress() or {}).get("line") == "import time", "the slow cell starts")
    kernels = until(lambda: kernels_of(job.job_dir), "the job's kernel is seen")
    until(lambda: "tick 3" in outputs_text(job.output_path, 3), "a long cell's output is saved")
    job.cancel()
    assert job.wait(timeout=60).state == AppState.CANCELLED
    until(lambda: not kernels_of(job.job_dir) and not any(os.path.exists(f"/proc/{p}") for p in kernels),
          "no kernel left", deadline=30)  # fmt: skip
    cell = read(job.output_path)["cells"][3]
    assert cell["metadata"]["papermill"]["status"] == "failed", "the cancelled cell is marked"
    assert "tick 3" in json.dumps(cell["outputs"]), "the partial output is kept"
    assert (job.notebook_progress() or {}).get("state") == "cancelled"


def test_four_notebooks_in_parallel_each_get_their_own_kernel(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        str(tmp_path / "par.ipynb"),
        "import jupyter_sched, os, time, json\ntime.sleep(2)\n"
        "jupyter_sched.record('me', {'tag': tag, 'kernel': os.getpid(), 'parent': os.getppid(),"
        " 'history': str(get_ipython().history_manager.hist_file)})",
    )
    notebook = jupyter_sched.Notebook(path)
    jobs = [jupyter_sched.submit(notebook, tag=f"run{i}") for i in range(4)]
    got = [job.result(timeout=240)["me"] for job in jobs]
    assert [g["tag"] for g in got] == ["run0", "run1", "run2", "run3"]
    assert len({g["kernel"] for g in got}) == 4 and len({g["parent"] for g in got}) == 4
    assert {g["history"] for g in got} == {":memory:"}, "no shared history file to lock"
    assert len({job.output_path for job in jobs}) == 4


def test_a_sweep_of_a_notebook_gives_one_output_per_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(str(tmp_path / "sw.ipynb"), "import jupyter_sched\njupyter_sched.record('loss', 1 / lr)")
    sweep = jupyter_sched.sweep(jupyter_sched.Notebook(path), {"lr": [0.5, 0.25]}, max_concurrent=2)
    assert sweep.results(timeout=240) == [{"loss": 2.0}, {"loss": 4.0}]
    outputs = [run.job.output_path for run in sweep.runs]
    assert len(set(outputs)) == 2
    for lr, output in zip([0.5, 0.25], outputs):
        assert read(output)["metadata"]["papermill"]["parameters"] == {"lr": lr}
    assert sweep.best("loss", mode="min")[0].params == {"lr": 0.5}
    rows = sweep.records()
    assert [(r["lr"], r["loss"], r["output_path"]) for r in rows] == [(0.5, 2.0, outputs[0]), (0.25, 4.0, outputs[1])]


def test_a_replica_killed_outright_takes_its_kernel_with_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL leaves the replica no handler to run: the kernel, its child, ends on its own (its parent
    poller), so an OOM kill or a node's hard stop leaves no kernel behind either."""
    path = write(str(tmp_path / "hang.ipynb"), "import time\ntime.sleep(600)")
    job = jupyter_sched.submit(jupyter_sched.Notebook(path))
    (kernel,) = until(lambda: kernels_of(job.job_dir), "the job's kernel is seen")
    with open(f"/proc/{kernel}/stat") as f:
        replica = int(f.read().rsplit(")", 1)[1].split()[1])
    with open(f"/proc/{kernel}/environ", "rb") as f:
        assert f"JPY_PARENT_PID={replica}".encode() in f.read().split(b"\0"), "the replica started the kernel"
    os.kill(replica, signal.SIGKILL)
    until(lambda: not os.path.exists(f"/proc/{kernel}"), "the kernel ends with its replica", deadline=60)
    assert job.wait(timeout=60).state == AppState.FAILED


def test_with_folder_timeout_formats_and_scrapbook_glue(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``with_folder`` runs in a copy of the folder (the user's is not written); a cell past ``timeout``
    fails naming it; ``output_formats`` writes the HTML beside the notebook; scrapbook's JSON scraps count
    as recorded values."""
    (tmp_path / "data.txt").write_text("42")
    scrap = (
        "{'application/scrapbook.scrap.json+json': {'name': 'glued', 'data': [1, 2], 'encoder': 'json', 'version': 1}}"
    )
    path = write(
        str(tmp_path / "folder.ipynb"),
        "import jupyter_sched, os\njupyter_sched.record('data', open('data.txt').read())\n"
        "open('written.txt', 'w').write('x')\njupyter_sched.record('cwd', os.getcwd())",
        f"from IPython.display import display\ndisplay({scrap}, raw=True)",
        "import time\nif slow: time.sleep(120)",
        params="slow = False",
    )
    notebook = jupyter_sched.Notebook(path, with_folder=True, timeout=3, output_formats=("ipynb", "html"))
    job = jupyter_sched.submit(notebook)
    got = job.result(timeout=180)
    assert got["data"] == "42" and got["glued"] == [1, 2]
    assert got["cwd"] == os.path.join(job.job_dir, "folder"), "it ran in the copy"
    assert not (tmp_path / "written.txt").exists(), "the user's folder is not written"
    html = job.output_path[: -len(".ipynb")] + ".html"
    assert "<html" in open(html).read()
    for written in (html, job.output_path, os.path.join(job.job_dir, "progress.json")):
        assert os.stat(written).st_mode & 0o777 == 0o600, f"{written} holds the parameters: private"

    slow = jupyter_sched.submit(notebook, slow=True)
    with pytest.raises(FunctionError) as info:
        slow.result(timeout=180)
    assert info.value.message == "cell 6 (In [5]) ran longer than timeout=3.0 s", info.value.message


def test_metrics_logged_in_the_notebook_reach_the_job(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The kernel inherits the replica's environment, so ``jupyter_sched.track`` in a cell records for the
    job; the kernel is shut down gracefully at the end so that its buffered records are written."""
    path = write(
        str(tmp_path / "m.ipynb"),
        "from jupyter_sched import track\nfor i in range(3):\n    track.log({'loss': 1 / (i + 1)})",
    )
    job = jupyter_sched.submit(jupyter_sched.Notebook(path))
    assert job.result(timeout=180) == {}
    frame = job.metrics()
    assert list(frame["value"]) == pytest.approx([1.0, 0.5, 1 / 3]) and set(frame["key"]) == {"loss"}


def test_early_stopping_reaches_a_notebook_through_track(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A sweep's stop rule marks the losing notebook run; ``track.should_stop()`` in its cell turns true, the
    notebook records where it stopped and ends on its own; the winner runs to its end."""
    path = write(
        str(tmp_path / "stop.ipynb"),
        "import time, jupyter_sched\nfrom jupyter_sched import track\nfor step in range(600 if rate == 0 else 3):\n"
        "    track.log({'loss': 10.0 if rate == 0 else 1 / (1 + step)})\n    if track.should_stop():\n"
        "        jupyter_sched.record('stopped_at', step)\n        break\n    time.sleep(0.1)\n"
        "jupyter_sched.record('steps', step + 1)",
        params="rate = 1.0",
    )

    def losing(run: Any, history: Any) -> Any:
        return "losing" if run.params["rate"] == 0 and len(run.values("loss")) >= 3 else None

    sweep = jupyter_sched.sweep(jupyter_sched.Notebook(path), {"rate": [1.0, 0.0]}, stop=losing, stop_grace=120)
    winner, loser = sweep.results(timeout=240)
    assert winner == {"steps": 3}
    assert loser["stopped_at"] >= 2 and loser["steps"] == loser["stopped_at"] + 1
    assert "losing" in (sweep.runs[1].stopped or "") and sweep.runs[0].stopped is None


def test_a_notebook_called_here_runs_in_this_process_and_leaves_its_environment(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``Notebook(path)(**params)`` runs it here (what ``err.rerun_here()`` does); only the kernel gets the
    mark that makes ``record`` publish, so this process's own ``record`` calls stay no-ops."""
    path = write(str(tmp_path / "here.ipynb"), "import jupyter_sched\njupyter_sched.record('twice', lr * 2)")
    assert jupyter_sched.Notebook(path)(lr=2) == {"twice": 4}
    assert "JUPYTER_SCHED_NOTEBOOK_JOB" not in os.environ
