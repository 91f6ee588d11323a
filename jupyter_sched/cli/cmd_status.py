"""``jupyter-sched status APP_HANDLE [--roles a,b] [--json]``: the state of an app and of each replica.

The status is masked by the one rule before it is shown (:func:`~jupyter_sched.specs.output.masking.masked_copy`):
``format()`` quotes the error file and wraps long messages, so masking its text afterwards could miss a
secret split across lines or a value under a secret key in the error's JSON. ``--json`` goes through
:func:`~jupyter_sched.specs.output.masking.mask_out`, which keeps ``structured_error_msg`` valid JSON.

A failed app's text ends with why, in the words of every front end (the notebook's pane, ``JobFailed``, the
Jupyter server's ``reason``): the first replica to fail and its reason
(:func:`~jupyter_sched.frontend.jobs.reasons.first_failure`: out of memory, its owner's exit, its error file,
else its last stderr line, which :mod:`~jupyter_sched.frontend.jobs.stderr_tails` reads from its log);
``--json`` carries the same line as ``reason`` ("" unless it failed)."""

from __future__ import annotations

import argparse
import json

from jupyter_sched.cli import common
from jupyter_sched.cli.errors import CliError
from jupyter_sched.frontend import targets
from jupyter_sched.frontend.jobs.reasons import failure_line, first_failure
from jupyter_sched.frontend.jobs.stderr_tails import stderr_of
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.specs.output.masking import mask_out, masked_copy


def run(args: argparse.Namespace, config: ProjectConfig) -> int:
    handle = targets.check_handle(args.app_handle)
    with common.open_runner(config) as runner:
        status = masked_copy(targets.require_status(runner, handle))
        first = first_failure(status, stderr_of(runner, handle))
    roles = [r.strip() for r in args.roles.split(",") if r.strip()] if args.roles else None
    if roles:
        known = [r.role for r in status.roles]
        unknown = [r for r in roles if r not in known]
        if unknown:
            raise CliError(
                f"app {handle} has no role {unknown[0]!r}; its roles are: {', '.join(known) or '(none)'}"
            )
    if args.json:
        data = {"app_handle": handle, **status.to_json(), "reason": failure_line(*first) if first is not None else ""}
        if roles:
            data["roles"] = [r for r in data["roles"] if r["role"] in roles]
        print(json.dumps(mask_out(data), indent=2))
    else:
        why = f"\nWhy it failed: {failure_line(*first)}" if first is not None else ""
        print(common.message(f"{handle}:\n{status.format(roles)}{why}"))
    return 0
