"""The command line's grammar: each verb's one-line help and flags, apart from what the verb does.

``jupyter-sched --help`` and ``jupyter-sched VERB --help`` need only this module (argparse and strings); a
verb's implementation, ``cmd_<verb>.py`` with its ``run(args, config)``, and what that imports (the runner,
a scheduler's backend, the components) load only when that verb runs. A new verb is an entry in
:data:`VERBS` with its flags here, and a ``cmd_<verb>.py`` whose ``run`` reads them. ``run`` is the one verb
without flags here: everything after it is its own line (:mod:`jupyter_sched.frontend.launch.run_options`);
``notebook`` is the other (in ``cmd_run``), since its line is ``run``'s (:mod:`jupyter_sched.functions.notebooks.args`).
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Dict, Optional

from jupyter_sched.frontend.launch.run_options import HELP as RUN_HELP


@dataclass(frozen=True)
class Verb:
    """One verb: its line in ``--help``, the flags of its parser (None: it parses its own line) and the
    module that carries it out, imported by :meth:`load` when the verb runs."""

    help: str
    arguments: Optional[Callable[[argparse.ArgumentParser], None]]
    module: str
    main: str = "main"
    """A verb that parses its own line (``arguments`` None): the module's function that takes the line."""

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


def _status_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/echo-b3k2x9q0d1")
    parser.add_argument("--roles", help="only these roles (comma-separated)")
    parser.add_argument("--json", action="store_true", help="print JSON (AppStatus.to_json() plus app_handle)")


def _log_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "identifier",
        metavar="APP_HANDLE[/ROLE[/K,...]]",
        help="e.g. local_cwd://default/echo-b3k2x9q0d1, .../echo-b3k2x9q0d1/echo or .../echo/0,1",
    )
    parser.add_argument("--regex", help="print only the lines that match this regular expression")
    parser.add_argument(
        "--streams",
        choices=["stdout", "stderr", "combined"],
        default=None,
        help="which output (default: combined)",
    )
    parser.add_argument("-f", "--follow", "-t", "--tail", dest="follow", action="store_true",
                        help="keep printing new lines until the replicas end")  # fmt: skip
    parser.add_argument("-n", "--lines", type=int, metavar="N",
                        help="start at each replica's last N lines (with -f, then follow)")  # fmt: skip
    parser.add_argument("--since", help="only lines written after this time: ISO (2024-05-01T12:00) or an age (5m)")
    parser.add_argument("--until", help="only lines written before this time (same forms as --since)")
    parser.add_argument(
        "--json", action="store_true", help='JSON lines: {"role", "replica", "line"} per line, no prefixes'
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="print the output as written, terminal control strings (titles, links) and the marked metric"
        " lines (@@jupyter_sched:metrics ...) included",
    )


def _list_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-s", "--scheduler", help="scheduler to ask (default: the config's, else local_cwd)")
    parser.add_argument(
        "--json", action="store_true",
        help="print a JSON list of the apps' rows: {app_handle, app_id, state, name, times, reason, ...}",
    )  # fmt: skip


def _cancel_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/sh-b3k2x9q0d1")
    parser.add_argument("--wait", action="store_true", help="wait until the app has stopped and print its state")


def _describe_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/echo-b3k2x9q0d1")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _runopts_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scheduler", nargs="?", help="one scheduler (default: all)")
    parser.add_argument(
        "--json", action="store_true",
        help="print JSON: {scheduler: {option: {type, default, required, help}}}",
    )  # fmt: skip


def _builtins_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--print", dest="print_name", metavar="NAME", help="print the source code of a component")
    parser.add_argument("--json", action="store_true", help="print a JSON list of {name, summary, origin}")


def _top_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/train-b3k2x9q0d1")
    parser.add_argument("--json", action="store_true", help="print one snapshot as JSON, one object per replica")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between refreshes in a terminal (default 1)"
    )


def _metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("app_handle", help="e.g. local_cwd://default/train-b3k2x9q0d1")
    parser.add_argument("--key", action="append", metavar="K", dest="keys",
                        help="only this metric (repeatable), e.g. --key loss --key val/acc")  # fmt: skip
    parser.add_argument("-f", "--follow", action="store_true",
                        help="print records as they are written, until the app ends (jsonl, csv)")  # fmt: skip
    parser.add_argument(
        "--format", choices=["table", "jsonl", "csv"], default="table",
        help="table: each key's summary (default); jsonl: the records as stored; csv: step,t,key,value,role,replica",
    )  # fmt: skip


VERBS: Dict[str, Verb] = {
    "run": Verb(RUN_HELP, None, "jupyter_sched.cli.cmd_run"),
    "notebook": Verb(
        "run a notebook as a job, its parameters given as papermill's are (-p NAME VALUE, -r, -f, -y)",
        None,
        "jupyter_sched.cli.cmd_run",
        main="notebook_main",
    ),
    "status": Verb(
        "show the state of an app and of each of its replicas", _status_arguments, "jupyter_sched.cli.cmd_status"
    ),
    "log": Verb(
        "print the logs of an app's replicas (-f: follow until the app ends)",
        _log_arguments,
        "jupyter_sched.cli.cmd_log",
    ),
    "list": Verb(
        "list the apps a scheduler knows (including those started by other processes)",
        _list_arguments,
        "jupyter_sched.cli.cmd_list",
    ),
    "cancel": Verb("cancel an app", _cancel_arguments, "jupyter_sched.cli.cmd_cancel"),
    "describe": Verb(
        "show the definition (roles, commands, replicas) of an app",
        _describe_arguments,
        "jupyter_sched.cli.cmd_describe",
    ),
    "runopts": Verb(
        "show the run options (--cfg) of the schedulers", _runopts_arguments, "jupyter_sched.cli.cmd_runopts"
    ),
    "builtins": Verb(
        "list the built-in and installed components", _builtins_arguments, "jupyter_sched.cli.cmd_builtins"
    ),
    "top": Verb(
        "show what each replica of an app uses: CPU, memory (now, peak, limit), GPU",
        _top_arguments,
        "jupyter_sched.cli.cmd_top",
    ),
    "metrics": Verb(
        "show what an app's replicas logged with jupyter_sched.track (-f: follow until the app ends)",
        _metrics_arguments,
        "jupyter_sched.cli.cmd_metrics",
    ),
}
"""Every verb, in the order ``--help`` lists them."""
