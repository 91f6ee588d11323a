"""``--json`` on every verb that prints data: ``run --dryrun``, ``log`` (JSON lines), ``runopts``, ``builtins``
(``status``, ``list`` and ``describe`` are covered by their own tests)."""

from __future__ import annotations

import json

from tests.cli.cli_helpers import Cli


def test_builtins_json(cli: Cli) -> None:
    proc = cli("builtins", "--json")
    rows = json.loads(proc.stdout)
    echo = next(r for r in rows if r["name"] == "utils.echo")
    assert echo["origin"] == "builtin" and echo["summary"].startswith("Prints a message")
    assert all(r["summary"] for r in rows)


def test_runopts_json(cli: Cli) -> None:
    data = json.loads(cli("runopts", "--json").stdout)
    assert {"local_cwd", "local_docker", "slurm"} <= set(data)
    assert data["local_cwd"]["prepend_cwd"] == {
        "type": "bool", "default": False, "required": False, "help": data["local_cwd"]["prepend_cwd"]["help"],
    }  # fmt: skip
    assert set(json.loads(cli("runopts", "local_cwd", "--json").stdout)) == {"local_cwd"}


def test_log_json_lines(cli: Cli) -> None:
    handle = cli.run_app("-s", "local_cwd", "--wait", "utils.sh", "--num_replicas", "2", 'printf "a\\nb\\rc\\n"')
    proc = cli("log", "--json", handle)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    for k in (0, 1):
        assert [r["line"] for r in rows if r["replica"] == k] == ["a", "b\r", "c"]
    assert {r["role"] for r in rows} == {"sh"}


def test_run_dryrun_json_is_masked(cli: Cli) -> None:
    for sched in ("local_cwd", "local_docker", "slurm"):
        proc = cli("run", "-s", sched, "--dryrun", "--json", "utils.sh", "--env", "HF_TOKEN=abc qwzx",
                   "--", "echo", "--token=sekrit")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["scheduler"] == sched and data["app"]["roles"][0]["env"]["HF_TOKEN"] == "********"
        assert "sekrit" not in proc.stdout and "abc qwzx" not in proc.stdout and "qwzx" not in proc.stdout
    proc = cli("run", "--json", "utils.echo")
    assert proc.returncode == 2 and "--json goes with --dryrun" in proc.stderr
