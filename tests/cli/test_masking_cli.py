"""The CLI shows no secret: ``run --dryrun``, ``describe`` and ``status`` (text and ``--json``), run for real."""

from __future__ import annotations

import json

from tests.cli.cli_helpers import Cli

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
