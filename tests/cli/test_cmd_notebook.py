"""``jupyter-sched notebook``, run as the real command: a notebook job on local_cwd with papermill's
-p/-r/-f/-y, ``--help-notebook``, ``--dryrun``, a failing cell's exit code and reason, and bad input that
names the flag and the fix (exit 2) with nothing launched."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List

import nbformat
import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PARAMS = 'lr: float = 0.1  # learning rate\nepochs = 3  # type: int\ntag = "a"\n'


@pytest.fixture
def work(cli: Cli) -> Cli:
    cells = [
        new_markdown_cell("# train"),
        new_code_cell(PARAMS, metadata={"tags": ["parameters"]}),
        new_code_cell("import jupyter_sched\nprint('GOT', repr(lr), repr(epochs), repr(tag))"),
        new_code_cell("jupyter_sched.record('score', lr * epochs)"),
    ]
    nbformat.write(new_notebook(cells=cells), str(cli.cwd / "train.ipynb"))
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("1 / 0")]), str(cli.cwd / "broken.ipynb"))
    (cli.cwd / "params.yaml").write_text("epochs: 7\ntag: from-file\n")
    return cli


def output_path(stderr: str) -> Path:
    found = re.findall(r"^output notebook: (\S+)", stderr, re.M)
    assert found, stderr
    return Path(found[-1])


def launched(cli: Cli) -> List[Path]:
    """The job directories in the test's own state directory: none means nothing was launched."""
    state = Path(cli.env["JUPYTER_SCHED_LOG_DIR"])
    return sorted(state.glob("*/functions/*"))


def test_a_notebook_runs_with_p_r_and_f_parameters_and_its_output_is_named(work: Cli) -> None:
    proc = work("notebook", "--log", "train.ipynb", "-f", "params.yaml", "-p", "lr", "0.5", "-r", "tag", "0.25")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("local_cwd://default/train-"), proc.stdout
    assert "GOT 0.5 7 '0.25'" in proc.stderr, "the notebook's output streams as run's logs do"
    assert "SUCCEEDED" in proc.stderr
    executed = nbformat.read(str(output_path(proc.stderr)), as_version=4)
    injected = next(c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert injected.source == "# Parameters\nepochs = 7\ntag = '0.25'\nlr = 0.5\n"
    assert executed.metadata.papermill.parameters == {"epochs": 7, "tag": "0.25", "lr": 0.5}


def test_yaml_text_and_the_same_flags_as_the_magic(work: Cli) -> None:
    proc = work("notebook", "-s", "local_cwd", "train.ipynb", "-y", "lr: 2", "-p", "epochs", "4", "--name", "yml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("local_cwd://default/yml-"), proc.stdout
    assert "GOT 2 4 'a'" in proc.stderr


def test_help_notebook_lists_the_parameters(work: Cli) -> None:
    proc = work("notebook", "--help-notebook", "train.ipynb")
    assert proc.returncode == 0, proc.stderr
    assert "lr      float  0.1      learning rate" in proc.stdout, proc.stdout
    assert launched(work) == []


def test_help_lists_papermills_flags_and_where_run_options_go(work: Cli) -> None:
    proc = work("notebook", "--help")
    assert proc.returncode == 0, proc.stderr
    for flag in ("-p NAME VALUE", "-r NAME VALUE", "-f FILE", "-y YAML", "--strict", "--help-notebook"):
        assert flag in proc.stdout, flag
    assert "go before the notebook" in proc.stdout


def test_the_dry_run_names_the_notebook_and_its_parameters_and_launches_nothing(work: Cli) -> None:
    proc = work("notebook", "--dryrun", "train.ipynb", "-p", "lr", "0.3")
    assert proc.returncode == 0, proc.stderr
    assert "=== NOTEBOOK JOB ===" in proc.stdout and "parameters: lr=0.3" in proc.stdout, proc.stdout
    assert "=== SCHEDULER REQUEST ===" in proc.stdout
    as_json = work("notebook", "--dryrun", "--json", "train.ipynb")
    assert json.loads(as_json.stdout)["scheduler"] == "local_cwd"
    assert launched(work) == []


def test_a_failing_cell_exits_1_naming_the_cell_and_keeps_the_output(work: Cli) -> None:
    proc = work("notebook", "broken.ipynb")
    assert proc.returncode == 1, proc.stderr
    assert "cell 3 (In [3]) raised ZeroDivisionError: division by zero" in proc.stderr, proc.stderr
    executed = nbformat.read(str(output_path(proc.stderr)), as_version=4)
    assert executed.cells[2].metadata.papermill.status == "failed"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--strict", "train.ipynb", "-p", "lrr", "1"], ["--strict", "-p lrr", "it defines: lr, epochs, tag"]),
        (["no_such.ipynb"], ["no notebook at", "no_such.ipynb"]),
        (["train.ipynb", "-y", "lr: ["], ["-y 'lr: ['", "not valid YAML", "write it as -y 'lr: 0.1'"]),
        (["train.ipynb", "-f", "missing.yaml"], ["-f missing.yaml", "cannot read it"]),
        (["train.ipynb", "--wait"], ["unknown argument --wait after the notebook", "go before the notebook"]),
        (["--workspace", ".", "train.ipynb"], ["--workspace .", "add --with-folder after the notebook"]),
        (["train.ipynb", "-p", "when", "[1, {2}]"], []),  # a set is no JSON value: kept as the text typed
    ],
)
def test_bad_input_exits_2_naming_the_flag_and_launches_nothing(work: Cli, argv: List[str], words: List[str]) -> None:
    proc = work("notebook", "--dryrun", *argv)
    if not words:
        assert proc.returncode == 0, proc.stderr
        assert "when='[1, {2}]'" in proc.stdout, proc.stdout
        return
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("jupyter-sched notebook: error: "), proc.stderr
    for word in words:
        assert word in proc.stderr, (word, proc.stderr)
    assert launched(work) == []
