"""``%sched_notebook`` in a real kernel (nbclient, as nbconvert --execute and papermill run it): a notebook
run as a job on local_cwd with -p/-r/-y/-f parameters, its progress line and output path in the pane's
record, ``--help-notebook``, the errors that name the flag before anything launches, and a failing cell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbhelpers import run_headless, wait_for

from jupyter_sched.specs import AppState

PARAMS = 'lr: float = 0.1  # learning rate\nepochs = 3  # type: int\ntag = "a"\n'


def write_train(folder: Path) -> None:
    cells = [
        new_markdown_cell("# train"),
        new_code_cell(PARAMS, metadata={"tags": ["parameters"]}),
        new_code_cell("import jupyter_sched\nprint('GOT', repr(lr), repr(epochs), repr(tag))"),
        new_code_cell("jupyter_sched.record('score', lr * epochs)\njupyter_sched.record('tag', tag)"),
    ]
    nbformat.write(new_notebook(cells=cells), str(folder / "train.ipynb"))
    broken = [new_code_cell("x = 1"), new_code_cell("# </b><script>\n1 / 0")]
    nbformat.write(new_notebook(cells=broken), str(folder / "broken.ipynb"))
    (folder / "params.yaml").write_text("epochs: 7\ntag: from-file\n")


CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched, json",
    # 1: -p read as literals, -r as a string, -f a YAML file under them; the cell waits
    "job = %sched_notebook --wait train.ipynb -f params.yaml -p lr 0.5 -r tag 0.25\n"
    "print('RESULT', json.dumps(job.result(), sort_keys=True))\nprint('OUTPUT', job.output_path)",
    # 2: -y and a notebook variable expanded as %sched_run expands it
    "epochs_here = 4\njob2 = %sched_notebook --wait train.ipynb -y 'lr: 2' -p epochs $epochs_here\n"
    "print('RESULT2', json.dumps(job2.result(), sort_keys=True))",
    # 3: --help-notebook
    "%sched_notebook --help-notebook train.ipynb",
    # 4: --strict refuses an unknown name, naming the flag, before anything launches
    "%sched_notebook --strict train.ipynb -p lrr 1",
    # 5: a missing notebook
    "%sched_notebook no_such.ipynb -p lr 1",
    # 6: bad YAML
    "%sched_notebook train.ipynb -y 'lr: ['",
    # 7: a run option after the notebook
    "%sched_notebook train.ipynb -s local_cwd",
    # 8: a failing cell: the job fails with the cell's reason; the pane's record says it
    "%sched_notebook --wait broken.ipynb",
    # 9: the dry run names the notebook and its parameters
    "%sched_notebook --dryrun train.ipynb -p lr 0.3",
    "print('done')",
    # 11: --help among the run options: the notebook flags' help, not run's (whose usage names a component)
    "%sched_notebook --help",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("nb_magic")
    write_train(base)
    return nbformat.read(str(run_headless(CELLS, base)), as_version=4)


def text(cell: Any) -> str:
    parts: List[str] = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts += [out.get("ename", ""), out.get("evalue", ""), *out.get("traceback", [])]
        else:
            data: Dict[str, Any] = out.get("data", {})
            parts += [str(data.get("text/plain", "")), str(data.get("text/html", ""))]
    return "\n".join(parts)


def test_parameters_from_p_r_and_f_reach_the_notebook_and_its_records_come_back(saved: Any) -> None:
    out = text(saved.cells[1])
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    # -p lr 0.5 is a float, -r tag 0.25 stays a string, epochs comes from the YAML file
    assert json.loads(line[len("RESULT ") :]) == {"score": 3.5, "tag": "0.25"}, out
    output = next(x for x in out.splitlines() if x.startswith("OUTPUT "))[len("OUTPUT ") :]
    executed = nbformat.read(output, as_version=4)
    injected = next(c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "lr = 0.5" in injected.source and "tag = '0.25'" in injected.source and "epochs = 7" in injected.source


def test_the_pane_record_has_the_progress_line_and_the_output_path(saved: Any) -> None:
    for mime in ("text/plain", "text/html"):  # the record in both forms, as a front end without widgets shows it
        out = "\n".join(str(o.get("data", {}).get(mime, "")) for o in saved.cells[1].outputs)
        assert "completed · 4/4 cells" in out, (mime, out)
        assert "output: " in out and "train.output.ipynb" in out, (mime, out)


def test_yaml_text_and_an_expanded_variable(saved: Any) -> None:
    out = text(saved.cells[2])
    line = next(x for x in out.splitlines() if x.startswith("RESULT2 "))
    assert json.loads(line[len("RESULT2 ") :]) == {"score": 8, "tag": "a"}, out


def test_help_notebook_lists_names_types_defaults_and_help(saved: Any) -> None:
    out = text(saved.cells[3])
    assert "lr      float  0.1      learning rate" in out, out
    assert "epochs  int    3" in out, out


@pytest.mark.parametrize(
    "index, words",
    [
        (4, ["--strict", "lrr", "-p lrr", "it defines: lr, epochs, tag", "drop --strict"]),
        (5, ["no notebook at", "no_such.ipynb"]),
        (6, ["-y 'lr: ['", "not valid YAML", "write it as -y 'lr: 0.1'"]),
        (7, ["unknown argument -s after the notebook", "go before the notebook"]),
    ],
)
def test_bad_input_names_the_flag_and_the_fix_and_nothing_launches(saved: Any, index: int, words: List[str]) -> None:
    out = text(saved.cells[index])
    assert "UsageError" in out, out
    for word in words:
        assert word in out, (word, out)
    assert "launched" not in out and "app_id" not in out


def test_a_failing_cell_fails_the_job_with_the_cell_named_and_escaped_in_the_pane(saved: Any) -> None:
    out = text(saved.cells[8])
    # no parameters cell: the injected one goes first, so the failing cell is the third
    assert "cell 3 (In [3]) raised ZeroDivisionError" in out, out
    html = "\n".join(str(o.get("data", {}).get("text/html", "")) for o in saved.cells[8].outputs)
    assert "failed at cell 3/3 · cell 3 (In [3]) raised ZeroDivisionError" in html, html
    assert "<script>" not in html and "&lt;/b&gt;&lt;script&gt;" in html


def test_help_lists_papermills_flags_and_where_run_options_go(saved: Any) -> None:
    out = text(saved.cells[11])
    assert "usage: %sched_notebook [RUN OPTIONS] NOTEBOOK [-p NAME VALUE]" in out, out
    assert "go before the notebook" in out and "COMPONENT" not in out, out


def test_the_dry_run_names_the_notebook_and_its_parameters(saved: Any) -> None:
    out = text(saved.cells[9])
    assert "notebook job on local_cwd (dry run, nothing runs)" in out, out
    assert "train.ipynb" in out and "parameters: lr=0.3" in out, out


def test_the_live_pane_shows_the_running_cell_escaped(widgets: Any, recorder: Any, tmp_path: Path) -> None:
    """While a cell runs, the status pane says which (``cell 3/4 · ...``), its text escaped; then the end."""
    from jupyter_sched.notebook.panes.job_view import mimebundle

    gate = tmp_path / "gate"
    cells = [
        new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
        new_code_cell(f"import os, time  # <b>wait</b>\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.1)"),
        new_code_cell("print('after', n)"),
    ]
    nbformat.write(new_notebook(cells=cells), str(tmp_path / "gated.ipynb"))
    job = widgets.shell.run_line_magic("sched_notebook", f"{tmp_path / 'gated.ipynb'} -p n 2")
    try:
        mimebundle(job)
        view = job.view()
        running = "cell 3/4 · import os, time  # &lt;b&gt;wait&lt;/b&gt;"
        wait_for(lambda: running in view.status_pane.html.value, 120, "the running cell in the status pane")
        assert "<b>wait</b>" not in view.status_pane.html.value
    finally:
        gate.write_text("")
    assert job.wait().state == AppState.SUCCEEDED
    wait_for(lambda: "completed · 4/4 cells" in view.status_pane.html.value, 60, "the pane's final line")
