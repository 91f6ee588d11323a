"""The magics' variable expansion: `$name` as a shell expands its variables, never IPython's `{expr}`."""

from __future__ import annotations

import shlex
from types import SimpleNamespace

import pytest

from jupyter_sched.frontend.launch.line_vars import expand

NS = {"i": 2, "lr": 0.1, "job": SimpleNamespace(handle="local_cwd://default/x-1"), "cmd": "python train.py",
      "quoted": 'say "hi" \\ there', "empty": ""}  # fmt: skip


@pytest.mark.parametrize(
    "line, expanded, used",
    [
        # braces are never touched: Python code, regular expressions, TorchX's macros
        ("-c \"print(f'epoch {i}')\"", "-c \"print(f'epoch {i}')\"", []),
        ("--regex 'x{2}' ${replica_id}", "--regex 'x{2}' ${replica_id}", []),
        # $name outside single quotes, also inside double quotes, as a shell does
        ("--lr $lr --name run-$i", "--lr 0.1 --name run-2", ["$lr", "$i"]),
        ('utils.sh "echo $lr"', 'utils.sh "echo 0.1"', ["$lr"]),
        ("utils.sh 'echo $lr'", "utils.sh 'echo $lr'", []),
        ("%sched_logs $job.handle", "%sched_logs local_cwd://default/x-1", ["$job.handle"]),
        # what the notebook does not define stays for the shell; escapes stay as written
        ('utils.sh "echo $HOME $job.nosuch"', 'utils.sh "echo $HOME $job.nosuch"', []),
        ("$$lr \\$lr", "$lr \\$lr", []),
        ("cost $lr.", "cost 0.1.", ["$lr"]),
    ],
)
def test_expand(line: str, expanded: str, used: list) -> None:
    assert expand(line, NS) == (expanded, used)


def test_a_value_is_taken_literally_as_a_shell_takes_a_variable() -> None:
    """Unquoted it splits into words; in double quotes it stays one word; its quotes are never re-read."""
    assert shlex.split(expand("utils.sh $cmd", NS)[0]) == ["utils.sh", "python", "train.py"]
    assert shlex.split(expand('utils.sh "$cmd"', NS)[0]) == ["utils.sh", "python train.py"]
    assert shlex.split(expand('utils.sh "$quoted"', NS)[0]) == ["utils.sh", 'say "hi" \\ there']
    assert shlex.split(expand("utils.sh $quoted", NS)[0]) == ["utils.sh", "say", '"hi"', "\\", "there"]
    assert shlex.split(expand("a $empty b", NS)[0]) == ["a", "b"]
