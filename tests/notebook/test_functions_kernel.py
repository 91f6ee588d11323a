"""Function jobs and sweeps in a real kernel (nbclient, as nbconvert --execute and papermill run it):
the magic launches a notebook function with flags, --dryrun shows its facts, a raising function shows
its remote traceback once (in the job's record; the error says where it is), a job's error and a sweep's
say how to debug them in the same words, the kernel itself is refused, and a sweep's saved output is its
final table."""

from __future__ import annotations

from typing import Any, Dict, List

import nbformat
import pytest
from nbhelpers import run_headless

CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched, os",
    # 1: a function with typed flags, launched by the magic, waited for
    "scale = 10\n"
    "def train(lr: float = 0.1, epochs: int = 1, tag='x'):\n"
    "    print('training', lr, epochs, tag)\n"
    "    return {'score': lr * epochs * scale, 'tag': tag, 'rank': int(os.environ['RANK'])}\n"
    "job = %sched_run --wait train --lr 0.5 --epochs 4 --tag best\n"
    "print('RESULT', job.result())",
    # 2: dry run of the same, two replicas
    "%sched_run --dryrun train --lr 0.2 --num_replicas 2",
    # 3: an unknown flag is a usage error naming the parameters
    "%sched_run train --lrr 1",
    # 4: a raising function: the remote traceback is the cell's error, each frame with its cell and line
    "def pick(xs, n):\n    return xs[n]\ndef explode(n: int):\n    return pick([1, 2], n)\n"
    "%sched_run --wait explode --n 5",
    # 5: the kernel itself cannot be sent
    "shell = get_ipython()\njupyter_sched.submit(lambda: shell.user_ns)",
    # 6: a sweep's table, final in the saved notebook
    "sw = jupyter_sched.sweep(train, {'lr': [0.1, 0.2], 'epochs': [1, 2]}, max_concurrent=2)\nsw",
    "print('SWEEP', sw.results(timeout=120))",
    "import time; time.sleep(0.5)",
    # 9: a value whose class only the replica can import: one line naming the app, the replica, the file, the module
    "def replica_only():\n"
    "    import importlib, sys\n"
    "    os.makedirs('replica_pkgs', exist_ok=True)\n"
    "    with open('replica_pkgs/replica_only_mod.py', 'w') as f:\n"
    "        f.write('class Weights:\\n    pass\\n')\n"
    "    sys.path.insert(0, os.path.abspath('replica_pkgs'))\n"
    "    return importlib.import_module('replica_only_mod').Weights()\n"
    "%sched_run --wait replica_only",
    # 10, 11: a job's error and a sweep's say how to debug them, in the same words
    "job = jupyter_sched.submit(explode, 5)\njob.result(timeout=60)",
    "sw2 = jupyter_sched.sweep(explode, {'n': [0, 5]})\nsw2.results(timeout=120)",
    # 12: a sweep's run's log lines, gutter and all
    "print(*sw.job(0).logs(), sep='\\n')\nprint(sw.job(0).name, sw.job(0).app_id)",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("fn_kernel")
    return nbformat.read(str(run_headless(CELLS, base)), as_version=4)


def _text(cell: Any) -> str:
    """A cell's outputs as text. Consecutive chunks of one stream are joined as a front end shows them: the
    kernel may send one ``print`` in several messages (it flushes on a timer, between ``print``'s writes)."""
    parts: List[str] = []
    previous = None
    for out in cell.get("outputs", []):
        stream = out.get("name") if out.get("output_type") == "stream" else None
        if stream is not None and stream == previous:
            parts[-1] += out.get("text", "")
        elif stream is not None:
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts += [out.get("ename", ""), out.get("evalue", ""), *out.get("traceback", [])]
        else:
            data: Dict[str, Any] = out.get("data", {})
            parts.append(str(data.get("text/plain", "")))
            parts.append(str(data.get("text/html", "")))
        previous = stream
    return "\n".join(parts)


def test_the_magic_launches_a_notebook_function_with_typed_flags(saved) -> None:  # type: ignore[no-untyped-def]
    text = _text(saved.cells[1])
    assert "RESULT {'score': 20.0, 'tag': 'best', 'rank': 0}" in text
    assert "training 0.5 4 best" in text, "the job's prints are in its panes' record"


def test_dryrun_shows_the_function_source_size_interpreter_and_image(saved) -> None:  # type: ignore[no-untyped-def]
    text = _text(saved.cells[2])
    assert "function: train" in text and "defined at:" in text and "pickled size:" in text
    assert "interpreter:" in text and "image:" in text and "replicas: 2" in text


def test_an_unknown_flag_names_the_functions_parameters(saved) -> None:  # type: ignore[no-untyped-def]
    text = _text(saved.cells[3])
    assert "no parameter 'lrr'" in text and "--lr, --epochs, --tag" in text


def test_a_raising_function_shows_its_remote_traceback_once(saved) -> None:  # type: ignore[no-untyped-def]
    (error,) = [o for o in saved.cells[4].outputs if o.output_type == "error"]
    assert error.ename == "FunctionError"
    # the job's record above holds the traceback in its log tail, each frame with its cell and line ...
    record = "".join(str(o.get("data", {}).get("text/plain", "")) for o in saved.cells[4].outputs)
    cell = f"Cell In[{saved.cells[4].execution_count}]"  # as IPython prints a local traceback's frames
    assert f"{cell}, line 4, in explode" in record and "return pick([1, 2], n)" in record, record
    assert f"{cell}, line 2, in pick" in record and "return xs[n]" in record, record
    assert "<dynamic-code>" not in record
    # ... so the error is its line, where the traceback is, and how to debug it: the traceback once
    tb = "\n".join(error.traceback)
    assert "explode/0" in tb and "IndexError: list index out of range" in tb
    assert "its traceback is in the job's log above" in tb
    assert "return pick([1, 2], n)" not in tb and "Traceback (most recent call last)" not in tb, tb
    assert "job.exception().rerun_here() (after job = %sched_job explode-" in tb and "%debug" in tb


def test_the_kernel_is_refused_before_launch_naming_it(saved) -> None:  # type: ignore[no-untyped-def]
    (error,) = [o for o in saved.cells[5].outputs if o.output_type == "error"]
    assert error.ename == "UnpicklableError"
    assert "global 'shell'" in error.evalue and "ZMQInteractiveShell" in error.evalue


def test_a_saved_sweep_shows_its_final_table_without_a_widget_manager(saved) -> None:  # type: ignore[no-untyped-def]
    outputs = saved.cells[6].outputs
    html = "".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    plain = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "4 SUCCEEDED" in plain and "as of" not in plain, "the record was replaced by the final table"
    assert "score" in html and "SUCCEEDED" in html
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert "SWEEP [{'score': 1.0" in _text(saved.cells[7])


def test_a_value_the_kernel_cannot_unpickle_is_one_line_naming_the_module(saved) -> None:  # type: ignore[no-untyped-def]
    (error,) = [o for o in saved.cells[9].outputs if o.output_type == "error"]
    assert error.ename == "ResultError" and len(error.traceback) == 1
    line = error.traceback[0]
    assert "cannot read the result of replica replica_only/0 of replica_only-" in line and "result-0.pkl" in line
    assert " on local_cwd from " in line
    assert "module 'replica_only_mod'" in line


def test_a_jobs_error_and_a_sweeps_say_how_to_debug_them_alike(saved) -> None:  # type: ignore[no-untyped-def]
    (job_error,) = [o for o in saved.cells[10].outputs if o.output_type == "error"]
    (sweep_error,) = [o for o in saved.cells[11].outputs if o.output_type == "error"]
    job_tb, sweep_tb = "\n".join(job_error.traceback), "\n".join(sweep_error.traceback)
    assert "IndexError: list index out of range" in job_tb and "IndexError: list index out of range" in sweep_tb
    said = " raises it again in this kernel, then %debug opens the failing frame"
    assert f"to debug it here: job.exception().rerun_here(){said}" in job_tb, job_tb
    assert f"to debug it here: sweep.rerun_here(1){said}" in sweep_tb, sweep_tb


def test_a_sweeps_run_logs_under_the_functions_name(saved) -> None:  # type: ignore[no-untyped-def]
    logs, names = _text(saved.cells[12]).strip().splitlines()
    assert logs == "train/0 | training 0.1 1 x", "the gutter is the function's, not the run's whole name again"
    name, app_id = names.split()
    assert name.startswith("train-sweep-") and name.endswith("-000") and app_id.startswith(name + "-"), (
        "the run's Job is still named as its app"
    )
