"""The one masking rule (specs/masking.py), checked on every rendered form of an app.

The property tests build apps that carry a secret in each place the rule covers (a secret-looking env
name, ``--password=``/``--token x`` arguments, the same inside an ``sh -c`` script, URL credentials) and
assert that no rendering shows any part of it: the secret starts and ends with a marker that appears
nowhere else, so a leak of either end, escaped or not, is caught.
"""

from __future__ import annotations

import json
import shlex
from typing import Iterator, List

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sched.cli.cmd_run import format_dryrun
from jupyter_sched.cli.render import render, to_json
from jupyter_sched.notebook.displays import dryrun_repr, reprs
from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.api import DescribeAppResponse
from jupyter_sched.specs import AppDef, AppState, InvalidRunConfigException, Role
from jupyter_sched.specs.output.masking import (
    MASK,
    is_secret_name,
    mask_argv,
    mask_env,
    mask_shell_text,
    mask_text,
    mask_tree,
)

HEAD, TAIL = "Zq7", "Qx9"
SECRET_ENV = st.sampled_from(
    ["HF_TOKEN", "GITHUB_PAT", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MYSQL_PWD", "api_key", "WANDB_AUTH"]
)
SECRET_OPT = st.sampled_from(["--password", "--token", "--api-key", "--db-pwd", "-secret", "--pat"])
# anything printable: spaces, quotes, '=', '$', backslashes, non-ASCII
MIDDLE = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
# what a URL's userinfo may hold unencoded (RFC 3986), minus quotes
USERINFO = st.text(st.sampled_from("abcXYZ0189-._~!$*+,;=:%"), max_size=10)


def secret(middle: str) -> str:
    return f"{HEAD}{middle}{TAIL}"


def assert_hidden(text: str) -> None:
    assert HEAD not in text and TAIL not in text, text


def app_with(env_name: str, opt: str, s: str, userinfo: str) -> AppDef:
    url = f"https://u{userinfo}{HEAD}{TAIL}@example.com/repo.git"
    role = Role(
        "trainer",
        "img:1",
        entrypoint="python",
        args=[f"{opt}={s}", opt, s, url, f"{env_name}={s}", "-c", f"tool {opt} {shlex.quote(s)} --x=1"],
        env={env_name: s, "REPO": url, "LR": "0.1"},
        metadata={"api_token": s},
    )
    return AppDef("train", [role])


def renderings(app: AppDef) -> Iterator[str]:
    role = app.roles[0]
    yield repr(app)
    yield repr(role)
    yield str(app)
    yield render(app)
    yield to_json(app)
    yield reprs.appdef_html(app)
    yield reprs.appdef_text(app)
    resp = DescribeAppResponse(app_id="train-x", state=AppState.RUNNING, roles=list(app.roles))
    yield reprs.describe_html(resp)
    yield reprs.describe_text(resp)
    yield shlex.join([role.entrypoint, *mask_argv(role.args)])
    yield mask_shell_text(shlex.join([role.entrypoint, *role.args]))
    yield json.dumps(mask_tree({"env": role.env, "args": role.args}))


@settings(max_examples=150, deadline=None)
@given(SECRET_ENV, SECRET_OPT, MIDDLE, USERINFO)
def test_no_rendering_of_an_app_shows_a_secret(env_name: str, opt: str, middle: str, userinfo: str) -> None:
    app = app_with(env_name, opt, secret(middle), userinfo)
    for text in renderings(app):
        assert_hidden(text)
    assert app.roles[0].env[env_name] == secret(middle)  # masking shows; it never changes the app


_RUNNER = get_runner("masking-tests")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SECRET_ENV, SECRET_OPT, MIDDLE, USERINFO, st.sampled_from(["local_cwd", "local_docker"]))
def test_no_dry_run_rendering_shows_a_secret(
    env_name: str, opt: str, middle: str, userinfo: str, scheduler: str
) -> None:
    app = app_with(env_name, opt, secret(middle), userinfo)
    info = _RUNNER.dryrun(app, scheduler, {})
    for text in (
        format_dryrun(info),  # jupyter-sched run --dryrun
        dryrun_repr.dryrun_text(info),
        dryrun_repr.dryrun_html(info),
        dryrun_repr.dumps(info),
    ):
        assert_hidden(text)


def test_slurm_dry_run_masks_the_script_and_submit_line() -> None:
    app = app_with("HF_TOKEN", "--token", secret("a b'c"), "me:pw")
    info = _RUNNER.dryrun(app, "slurm", {})
    for text in (format_dryrun(info), dryrun_repr.dryrun_text(info), dryrun_repr.dumps(info)):
        assert_hidden(text)


def test_secret_names() -> None:
    for name in ("GITHUB_PAT", "PAT", "pat_token", "HF_TOKEN", "MYSQL_PWD", "--db-pwd", "--api-key", "-password"):
        assert is_secret_name(name), name
    for name in ("PATH", "PYTHONPATH", "PWD", "LR", "HOME", "--patience", "--path", "PATTERN"):
        assert not is_secret_name(name), name


def test_mask_argv_cases() -> None:
    argv: List[str] = ["--password=hunter2", "--token", "t0k", "--lr", "0.1", "HF_TOKEN=x", "--token", "--verbose"]
    assert mask_argv(argv) == [
        f"--password={MASK}", "--token", MASK, "--lr", "0.1", f"HF_TOKEN={MASK}", "--token", "--verbose",
    ]  # fmt: skip
    assert mask_argv(["git", "clone", "https://me:pw@github.com/a/b"]) == [
        "git", "clone", f"https://{MASK}@github.com/a/b",
    ]  # fmt: skip
    assert mask_env({"GITHUB_PAT": "ghp_x", "PATH": "/bin"}) == {"GITHUB_PAT": MASK, "PATH": "/bin"}


def test_shell_text_stays_copyable() -> None:
    line = "sh -c 'train --token abc && echo done' && curl --password=\"a b\" x | tee log  # --token c"
    assert mask_shell_text(line) == (
        f"sh -c 'train --token {MASK} && echo done' && curl --password={MASK} x | tee log  # --token c"
    )


# what a run option's value or an option's word may hold unquoted (no space, separator, quote, bracket or '@')
BARE = st.text(st.sampled_from("abcXYZ0189-._~!$*+/%^&:="), max_size=10)


@settings(max_examples=150, deadline=None)
@given(SECRET_ENV, SECRET_OPT, MIDDLE, BARE, USERINFO)
def test_free_text_hides_a_secret_in_each_form_messages_quote(
    env_name: str, opt: str, middle: str, bare: str, userinfo: str
) -> None:
    """Error messages and log records quote values as a dict's repr, JSON, ``k=v`` run options with
    ``KEY:VALUE`` items, options, and URLs: :func:`mask_text` hides the secret in each."""
    quoted, plain = secret(middle), secret(bare)
    messages = [
        f"pull='x' is bad. Given: copy_env=None, env={{{env_name!r}: {quoted!r}, 'LR': '0.1'}}, quiet=False",
        json.dumps({"runcfg": {"env": {env_name: quoted}}, "workspace": None}),
        str(InvalidRunConfigException("bad", "env", {"env": {env_name: quoted}, env_name.lower(): quoted})),
        f"--cfg {f'env=LR:1,{env_name}:{plain},pull=x'!r}: run option pull='x' is bad",
        f"--cfg {f'env={env_name}={plain}'!r}: cannot tell where the value of 'env' ends",
        f"unknown flag {opt}={plain}; and {opt} {plain}, {opt} {quoted!r}",
        f"git clone https://me:{secret(userinfo)}@example.com/r.git failed",
    ]
    for text in messages:
        assert_hidden(mask_text(text))
        assert MASK in mask_text(text)


def test_free_text_keeps_prose_usage_and_other_values() -> None:
    for text in (
        "KeyError: 'y'",
        "usage: utils.echo [--env KEY=VALUE,...] [--token TOKEN] [--password <password>]",
        "run options 'x' are not of the form key=value[,key2=value2]",
        "see https://example.com:8080/docs, PATH=/usr/bin:/bin LR=0.1 {'LR': '0.1'}",
        "--cfg 'API_TOKEN': run options 'API_TOKEN' are not of the form key=value",
    ):
        assert mask_text(text) == text
    assert mask_text("env=A:1,HF_TOKEN:abc;B:2") == f"env=A:1,HF_TOKEN:{MASK};B:2"


def test_secret_values_are_what_the_rule_hides_and_mask_values_hides_them_in_any_layout() -> None:
    from jupyter_sched.specs.output.masking import MASK, mask_values, secret_values

    values = secret_values(
        {"HF_TOKEN": "tok-1", "LR": "0.1", "DB_URL": "postgres://u:pw@h/db"},
        ["sh", "-c", "run --password=hunter22 --token abc123 NAME=x GITHUB_PAT=ghp_9"],
    )
    assert set(values) == {"tok-1", "hunter22", "abc123", "ghp_9"}
    layout = "- name: HF_TOKEN\n  value: tok-1\nenv={'A': 'abc123'} \"ghp_9\" cmd: run --password=hunter22\n"
    masked = mask_values(layout + "url: postgres://u:pw@h/db\n", values)
    assert not any(v in masked for v in values) and "pw@" not in masked
    assert masked.startswith(f"- name: HF_TOKEN\n  value: {MASK}\n") and "0.1" not in values
