"""Rich displays registered with IPython's formatters: dry runs, AppStatus, DescribeAppResponse, AppDef."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any, Dict, List

import pytest

from jupyter_sched.notebook.displays import dryrun_repr
from jupyter_sched.notebook.displays.dryrun_repr import DRYRUN_MIME
from jupyter_sched.schedulers.api import DescribeAppResponse
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    AppStatus,
    BindMount,
    DryRunView,
    ReplicaPlan,
    ReplicaStatus,
    Role,
    RoleStatus,
    resource,
)
from jupyter_sched.specs.output.masking import mask_shell_text

EVIL = "<img src=x onerror=alert(1)>"


def fmt(ip: Any, mime: str, obj: Any) -> Any:
    """What the shell's formatters make of ``obj`` for ``mime`` (all enabled, even in a terminal shell)."""
    display = ip.display_formatter
    if mime == DRYRUN_MIME:
        return display.mimebundle_formatter(obj)[0][DRYRUN_MIME]
    formatter = display.formatters[mime]
    return formatter.lookup(obj)(obj) if mime != "text/plain" else formatter(obj)


def status() -> AppStatus:
    reps = [
        ReplicaStatus(0, AppState.SUCCEEDED, "trainer", "localhost", exit_code=0, pid=101, started=1.0, finished=5.0),
        ReplicaStatus(1, AppState.FAILED, "trainer", "localhost", exit_code=3, pid=102, started=1.0, finished=3.5),
    ]
    return AppStatus(AppState.FAILED, msg=EVIL, roles=[RoleStatus("trainer", reps)])


def test_app_status_html_and_text(ip: Any, magics: Any) -> None:
    html = fmt(ip, "text/html", status())
    assert "FAILED" in html and "SUCCEEDED" in html and ">3<" in html and ">102<" in html and "4.0s" in html
    assert EVIL not in html and "&lt;img" in html
    text = fmt(ip, "text/plain", status())
    assert text.startswith("AppStatus:") and "trainer[1]:FAILED (exitcode: 3)" in text


def test_describe_and_appdef_html(ip: Any, magics: Any) -> None:
    role = Role("trainer", "img:1", entrypoint="python", args=["-c", EVIL], num_replicas=2,
                env={"HF_TOKEN": "hunter2", "LR": "0.1"}, resource=resource(cpu=2, memMB=512),
                mounts=[BindMount("/data", "/mnt/data", read_only=True)])  # fmt: skip
    app = AppDef("train", [role])
    html = fmt(ip, "text/html", app)
    assert "hunter2" not in html and "HF_TOKEN=********" in html and "LR=0.1" in html
    assert EVIL not in html and "cpu=2 gpu=0 memMB=512" in html and "/mnt/data" in html
    assert "python -c" in html
    assert fmt(ip, "text/plain", app).startswith("AppDef train:")
    desc = DescribeAppResponse("train-x1", AppState.FAILED, 0, roles_statuses=status().roles, roles=[role])
    dhtml = fmt(ip, "text/html", desc)
    assert "train-x1" in dhtml and "hunter2" not in dhtml and "exit code" in dhtml
    assert "trainer[1]:FAILED" in fmt(ip, "text/plain", desc)


def test_local_dryrun_table_masks_secrets(ip: Any, magics: Any) -> None:
    info = ip.run_line_magic(
        "sched_run", "--dryrun utils.sh --env API_KEY=s3cr3t,DB_PASSWORD=hunter2,PLAIN=ok --num_replicas 2 'echo <b>'"
    )
    html = fmt(ip, "text/html", info)
    assert "s3cr3t" not in html and "API_KEY=********" in html and "DB_PASSWORD=********" in html
    assert "PLAIN=ok" in html and "<b>" not in html.replace("<b>dry run</b>", "").replace("<b>sh/", "")
    assert "sh/0" in html and "sh/1" in html and "stdout.log" in html
    assert "sh -c &#x27;echo &lt;b&gt;&#x27;" in html  # the argv as a copyable (quoted) shell line
    text = fmt(ip, "text/plain", info)
    assert "s3cr3t" not in text and "argv: sh -c 'echo <b>'" in text
    data = fmt(ip, DRYRUN_MIME, info)
    dumped = json.dumps(data)
    assert "s3cr3t" not in dumped and "hunter2" not in json.dumps(data["request"])
    assert data["scheduler"] == "local_cwd" and data["app"] == "sh"
    assert DRYRUN_MIME in ip.display_formatter.format(info)[0]
    with pytest.raises(KeyError):  # no plain application/json: JupyterLab would show it instead of the table
        ip.display_formatter.formatters["application/json"].lookup(info)


LEAKY_ENV = {
    "NPM_AUTH": "s-auth", "GPG_PASSPHRASE": "s-phrase", "MYSQL_PWD": "s-pwd", "DB_PASS": "s-pass",
    "AZURE_STORAGE_CONNECTION_STRING": "AccountKey=s-azure", "SESSION_COOKIE": "s-cookie",
    "DATABASE_URL": "postgres://admin:s-url@db:5432/x", "PIP_INDEX_URL": "https://s-tok@pypi.example/simple",
}  # fmt: skip
PLAIN_ENV = {"PWD": "/home/me", "EPOCHS": "3", "DOCS_URL": "https://example.com/a@b"}


@pytest.mark.parametrize("mime", ["text/html", "text/plain", DRYRUN_MIME])
def test_what_counts_as_a_secret(ip: Any, magics: Any, mime: str) -> None:
    """Secrets hide behind more names than TOKEN/KEY/PASSWORD (auth, passphrases, *_PWD, cookies,
    connection strings), and in values: credentials inside a URL. Ordinary values stay readable."""
    env = ",".join(f"{k}={v}" for k, v in {**LEAKY_ENV, **PLAIN_ENV}.items())
    for scheduler in ("local_cwd", "local_docker"):
        info = ip.run_line_magic("sched_run", f"--dryrun -s {scheduler} utils.sh --env {shlex.quote(env)} true")
        shown = json.dumps(fmt(ip, mime, info))
        for value in ("s-auth", "s-phrase", "s-pwd", "s-pass", "s-azure", "s-cookie", "s-url", "s-tok"):
            assert value not in shown, (scheduler, value)
        assert "/home/me" in shown and "example.com/a@b" in shown
        assert ("EPOCHS=3" if mime != DRYRUN_MIME else '"EPOCHS": "3"') in shown
        assert "db:5432/x" in shown  # a URL keeps everything but its credentials
    app = AppDef("a", [Role("w", "img", entrypoint="true", env={**LEAKY_ENV, **PLAIN_ENV})])
    if mime == "text/html":
        html = fmt(ip, mime, app)
        assert not any(v in html for v in ("s-auth", "s-pwd", "s-url", "s-tok")) and "/home/me" in html


def test_slurm_dryrun_is_a_table_per_replica_with_secrets_masked(ip: Any, magics: Any, slurm_cluster: Any) -> None:
    """The Slurm request (to_json with replicas, a script and srun commands carrying -e NAME=VALUE) shows
    one table per replica, and the token is in none of the three renderings, nor in the JSON's script."""
    info = ip.run_line_magic(
        "sched_run", "--dryrun -s slurm utils.sh --env HF_TOKEN=abc123,X=1 --num_replicas 2 'echo \"a  b\"'"
    )
    html, text = fmt(ip, "text/html", info), fmt(ip, "text/plain", info)
    data = fmt(ip, DRYRUN_MIME, info)
    for rendering in (html, text, json.dumps(data)):
        assert "abc123" not in rendering
    assert "HF_TOKEN=********" in data["request"]["script"] and "X=1" in data["request"]["script"]
    assert "<b>sh/0</b>" in html and "<b>sh/1</b>" in html and "sbatch --parsable" in html
    assert "  sh/1:" in text and "    argv: " in text and "stdout.log" in text
    argv = next(line for line in text.splitlines() if line.startswith("    argv: "))
    assert argv.endswith("-- sh -c 'echo \"a  b\"'")  # still a copyable command: quoting kept as written
    assert 'JUPYTER_SCHED_APP_ID="$SLURM_JOB_ID"' in argv


def test_masking_keeps_a_command_line_copyable() -> None:
    line = (
        "docker run --env 'A=1 2' -e HF_TOKEN=abc --env=DB_PASSWORD=\"x y\""
        " img sh -c 'echo \"$HOME\" # not a comment' # note"
    )
    masked = mask_shell_text(line)
    assert masked == (
        "docker run --env 'A=1 2' -e 'HF_TOKEN=********' --env='DB_PASSWORD=********' img"
        " sh -c 'echo \"$HOME\" # not a comment' # note"
    )
    assert mask_shell_text("git clone https://me:tok@github.com/a/b x#y") == (
        "git clone https://********@github.com/a/b x#y"
    )


@dataclass
class FakeDockerJob:
    """A docker-like request that describes itself through the neutral view (``dryrun_view()``)."""

    containers: List[Dict[str, Any]]

    def to_json(self) -> Dict[str, Any]:
        return {"app_id": "app-1", "containers": self.containers}

    def dryrun_view(self) -> DryRunView:
        plans = []
        for c in self.containers:
            kw = c["kwargs"]
            mounts = [
                f"{m['Type']} {m['Source']} -> {m['Target']}{' (ro)' if m['ReadOnly'] else ''}" for m in kw["mounts"]
            ]
            plans.append(ReplicaPlan(
                role="w", replica_id=0, argv=c["command"], env=kw["environment"], image=c["image"], name=c["name"],
                mounts=mounts, limits={"mem_limit": kw["mem_limit"]},
                launch=("docker run", f"docker run --name {c['name']} {c['image']}"),
            ))  # fmt: skip
        return DryRunView(plans)


def test_docker_dryrun_is_rendered_without_importing_docker(ip: Any, magics: Any) -> None:
    job = FakeDockerJob([
        {"name": "app-1-w-0", "image": "python:3.12", "command": ["python", "-c", "print(1)"],
         "kwargs": {"environment": {"GITHUB_TOKEN": "ghp_x", "A": "1"}, "mem_limit": "512m",
                    "labels": {"jupyter_sched/role-name": "w", "jupyter_sched/replica-id": "0"},
                    "mounts": [{"Type": "bind", "Source": "/d", "Target": "/m", "ReadOnly": True}]}},
    ])  # fmt: skip
    info = AppDryRunInfo(job, lambda r: f"repr with GITHUB_TOKEN=ghp_x {r}")
    info._scheduler = "local_docker"
    html = fmt(ip, "text/html", info)
    assert "ghp_x" not in html and "GITHUB_TOKEN=********" in html and "w/0" in html
    assert "docker run --name app-1-w-0 python:3.12" in html and "mem_limit=512m" in html
    assert "bind /d -&gt; /m (ro)" in html
    assert "ghp_x" not in json.dumps(fmt(ip, DRYRUN_MIME, info))
    assert "ghp_x" not in fmt(ip, "text/plain", info)


def test_real_docker_dryrun_masks_the_copyable_command(ip: Any, magics: Any) -> None:
    info = ip.run_line_magic(
        "sched_run",
        "--dryrun -s local_docker utils.sh --env HF_TOKEN=abc123,X=1 --memMB 512 --num_replicas 2 'echo hi'",
    )
    html, text = fmt(ip, "text/html", info), fmt(ip, "text/plain", info)
    data = json.dumps(fmt(ip, DRYRUN_MIME, info))
    for rendering in (html, text, data):
        assert "abc123" not in rendering
    assert "sh/0" in html and "sh/1" in html and "memory=512m" in html and "nano_cpus" not in html
    # the docker run line, one flag a line (the shell's continuations kept), masked
    assert "    --env &#x27;HF_TOKEN=********&#x27; \\\n    --env X=1 \\\n" in html and "python:3.12-slim sh -c" in html
    # folded in html (the env blocks above show the values), below its label and indented in text
    assert re.search(r"<td[^>]*>docker run</td><td[^>]*><details><summary>\d+ lines</summary>", html)
    assert "\n    docker run:\n      docker run --detach \\\n          --name sh-" in text


def test_unknown_request_shape_falls_back_to_a_masked_repr(ip: Any, magics: Any) -> None:
    info = AppDryRunInfo({"x": 1}, lambda r: "SECRET_THING=abc\nplain=1")
    assert dryrun_repr.replicas(info) is None
    text = fmt(ip, "text/plain", info)
    assert "abc" not in text and "plain=1" in text
    assert "abc" not in fmt(ip, "text/html", info)


@pytest.mark.parametrize("obj", [status(), AppDef("a", []), AppDryRunInfo({}, repr)])
def test_reprs_are_gone_after_unload(ip: Any, obj: Any) -> None:
    from jupyter_sched.notebook.extension import load, unload

    unload(ip)
    try:
        with pytest.raises(KeyError):
            ip.display_formatter.formatters["text/html"].lookup(obj)
        if isinstance(obj, AppDryRunInfo):
            with pytest.raises(KeyError):
                ip.display_formatter.mimebundle_formatter.lookup(obj)
    finally:
        load(ip)
    assert ip.display_formatter.formatters["text/html"].lookup(obj)
