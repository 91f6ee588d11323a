"""The CLI shows no secret: ``run --dryrun``, ``describe`` and ``status`` (text and ``--json``), the runner
events ``-v`` prints, the errors of refused run options, and a failed replica's error file in every shape it
may hold one in (``run --wait``'s failure, ``status``, ``status --json``, ``describe``), run for real."""

from __future__ import annotations

import json

import pytest

from tests.cli.cli_helpers import Cli
from tests.schedulers.docker.fixtures import BUSYBOX

SECRETS = ("ghp_S3CRET", "hunter2", "t0kenVal", "pW9")  # none can occur in an app id (no capitals or vowels there)
ARGS = ("--env", "GITHUB_PAT=ghp_S3CRET,REPO=https://me:pW9@example.com/r.git", "--",
        "echo", "--password=hunter2", "--token", "t0kenVal")  # fmt: skip


def assert_hidden(text: str) -> None:
    for s in SECRETS:
        assert s not in text, (s, text)


def test_run_dryrun_masks_env_args_and_urls(cli: Cli) -> None:
    for sched in ("local_cwd", "local_docker", "slurm"):
        proc = cli("run", "-s", sched, "--dryrun", "utils.sh", *ARGS)
        assert proc.returncode == 0, proc.stderr
        assert_hidden(proc.stdout)
        assert "GITHUB_PAT" in proc.stdout and "--password=********" in proc.stdout


def test_describe_and_status_mask_what_the_app_was_given(cli: Cli) -> None:
    handle = cli.run_app("-s", "local_cwd", "--wait", "utils.sh", *ARGS)
    for verb in ("describe", "status"):
        for extra in ((), ("--json",)):
            proc = cli(verb, handle, *extra)
            assert proc.returncode == 0, proc.stderr
            assert_hidden(proc.stdout)
            if extra:
                json.loads(proc.stdout)
    described = json.loads(cli("describe", handle, "--json").stdout)
    role = described["roles"][0]
    assert "--password=********" in " ".join(role["args"])  # local_cwd records no env
    log = cli("log", handle)
    assert "--password=hunter2" in log.stdout  # what the job printed is never altered


def test_the_local_record_keeps_no_secret_argument(cli: Cli) -> None:
    """state.json is read only by describe (retries run from the in-memory request), so it keeps args masked."""
    handle = cli.run_app("-s", "local_cwd", "--wait", "utils.sh", *ARGS)
    states = list((cli.cwd.parent / "state").rglob("state.json"))
    assert states and handle.rsplit("/", 1)[-1] in str(states[0])
    assert_hidden(states[0].read_text())


TOKEN = "S3cr3tXyz"  # in no app id (no capitals there) and in no message of ours


def test_verbose_events_of_a_real_docker_run_mask_the_env_run_option(cli: Cli, docker_engine: None) -> None:
    """``-v`` prints each runner event with its run options: the ``env`` option's token is masked there, and
    the container still gets it (the job checks it and prints only its length)."""
    script = f'test "$API_TOKEN" = {TOKEN} && echo length ${{#API_TOKEN}}'
    proc = cli("-v", "run", "-s", "local_docker", "--wait", "--log", "--cfg", f"env=API_TOKEN:{TOKEN},LR:0.1",
               "utils.sh", "--image", BUSYBOX, script)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "length 9" in proc.stderr  # the job got the real value
    events = [json.loads(line.split(": ", 1)[1]) for line in proc.stderr.splitlines() if '"runcfg"' in line]
    assert {e["api"] for e in events} >= {"dryrun", "schedule"}
    for event in events:
        if event["runcfg"]:
            assert json.loads(event["runcfg"])["env"] == {"API_TOKEN": "********", "LR": "0.1"}
    assert TOKEN not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "cfg, named",
    [
        (f"env=API_TOKEN:{TOKEN},pull=sometimes", "pull='sometimes' must be one of"),  # echoes every option
        (f"env=API_TOKEN={TOKEN}", "cannot tell where the value of 'env' ends"),  # the text does not parse
        (f"env=API_TOKEN:{TOKEN},cancel_grace=soon", "cancel_grace='soon' is not a valid float"),
    ],
)
def test_a_refused_run_option_does_not_echo_a_secret(cli: Cli, cfg: str, named: str) -> None:
    for verbose in ((), ("-v",)):
        proc = cli(*verbose, "run", "-s", "local_docker", "--dryrun", "--cfg", cfg, "utils.echo")
        assert proc.returncode == 2, proc.stderr
        assert named in proc.stderr and "API_TOKEN" in proc.stderr
        assert verbose or "Traceback" not in proc.stderr  # -v: the event of the refused call has its traceback
        assert TOKEN not in proc.stdout + proc.stderr


def test_a_mistyped_secret_in_the_config_file_is_not_echoed(cli: Cli) -> None:
    values = (f'{{API_TOKEN = "{TOKEN}"}}\npull = "sometimes"', f'["API_TOKEN", "{TOKEN}"]', f'"API_TOKEN={TOKEN}"')
    for value in values:
        (cli.cwd / "pyproject.toml").write_text(f"[tool.jupyter_sched.schedulers.local_docker]\nenv = {value}\n")
        proc = cli("-v", "run", "-s", "local_docker", "--dryrun", "utils.echo")
        assert proc.returncode == 2 and "env" in proc.stderr, proc.stderr
        assert TOKEN not in proc.stdout + proc.stderr


# -- a secret in a failed replica's error file (issue 31 point 6, issue 33 point 4) ----------------------------
KEY = "Zq7S3cretQx9"  # capitals: in no app id; no word of ours contains it
ERROR_FILES = {
    "torchelastic": json.dumps(
        {
            "message": {
                "message": f"RuntimeError: WANDB_API_KEY={KEY} was refused",
                "errorCode": 3,
                "extraInfo": {"timestamp": "1700000000", "py_callstack": f"Traceback: --token {KEY}"},
            }
        }
    ),
    "json_key": json.dumps({"WANDB_API_KEY": KEY, "message": "login failed"}),
    "json_in_json": json.dumps({"message": json.dumps({"WANDB_API_KEY": KEY})}),
    "dict_repr": json.dumps({"message": f"login failed with {{'WANDB_API_KEY': '{KEY}'}}"}),
    "list_value": json.dumps({"api_keys": [KEY, KEY], "message": "login failed"}, indent=2) + "\n",
    "url": json.dumps({"message": f"git clone https://me:{KEY}@example.com/r.git failed"}),
    "text": f"login failed: WANDB_API_KEY={KEY}\n",
}


@pytest.mark.parametrize("shape", sorted(ERROR_FILES))
def test_a_secret_in_an_error_file_is_masked_in_every_output_and_json_stays_json(cli: Cli, shape: str) -> None:
    """A real local job writes its error file (TORCHELASTIC_ERROR_FILE) with a secret in it and fails: the
    failure ``run --wait`` prints, ``status`` (text and ``--json``) and ``describe`` show no part of it; the
    ``--json`` output parses and so does its ``structured_error_msg`` when the file held JSON. The secret is
    in no argument of the job (the script copies a file), so only the error file could leak it."""
    content = ERROR_FILES[shape]
    (cli.cwd / "error.json").write_text(content)
    proc = cli("run", "-s", "local_cwd", "--wait", "utils.sh", 'cp error.json "$TORCHELASTIC_ERROR_FILE"; exit 3')
    assert proc.returncode == 1 and "FAILED" in proc.stderr, proc.stderr
    assert KEY not in proc.stdout + proc.stderr, proc.stderr
    assert "********" in proc.stderr  # the error was shown, masked (not dropped)
    handle = proc.stdout.splitlines()[0]
    text = cli("status", handle)
    assert text.returncode == 0 and KEY not in text.stdout and "********" in text.stdout, text.stdout
    shown = cli("status", handle, "--json")
    assert shown.returncode == 0 and KEY not in shown.stdout, shown.stdout
    error = json.loads(shown.stdout)["structured_error_msg"]
    assert "********" in error
    if shape != "text":
        assert list(json.loads(error)) == list(json.loads(content))  # still JSON, with the same keys
    for extra in ((), ("--json",)):
        described = cli("describe", handle, *extra)
        assert described.returncode == 0 and KEY not in described.stdout, described.stdout
    assert KEY in (cli.cwd / "error.json").read_text()  # masking shows; the job's files are never altered
