"""The options of ``run`` (and of ``%sched_run``), declared once: the argparse parser and the line splitter
are both built from :data:`RUN_OPTIONS`.

A run line is ``[run options] COMPONENT [the component's flags and arguments]``. Only the leading options
are ``run``'s: the splitter walks them (knowing from the table which take a value) and stops at the first
other token, so ``run utils.sh -s`` passes ``-s`` to ``sh``. The parser then reads those options alone.
A front end may pass its own switches (``extra``, e.g. the notebook's ``--quiet``), declared the same way
and accepted only among the leading options. IPython declares a magic's arguments once and reuses them
(``magic_arguments``); this is the same idea for a line that also carries another program's flags.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from jupyter_sched.frontend.errors import UsageError
from jupyter_sched.frontend.launch.parsers import RaisingArgumentParser, error_prefix

HELP = "run a component on a scheduler (or show what would run, with --dryrun)"


@dataclass(frozen=True)
class RunOption:
    """One leading option: its spellings, where its value goes, and whether it takes a value."""

    flags: Tuple[str, ...]
    dest: str
    help: str
    takes_value: bool = False
    repeat: bool = False
    """Repeatable (values collected in a list, later ones win when merged)."""
    metavar: Optional[str] = None


RUN_OPTIONS: Tuple[RunOption, ...] = (
    RunOption(("-h", "--help"), "help", "show this help message and exit"),
    RunOption(
        ("-s", "--scheduler"), "scheduler",
        "scheduler to run on (default: the config's default_scheduler, else local_cwd)", takes_value=True,
    ),
    RunOption(("--cfg", "-cfg", "--scheduler_args"), "cfg",
              "run options of the scheduler, e.g. log_dir=/tmp/logs,prepend_cwd=true (repeatable; later wins)",
              takes_value=True, repeat=True, metavar="K=V,..."),  # fmt: skip
    RunOption(("--dryrun",), "dryrun", "print the app and the scheduler's request; run nothing"),
    RunOption(("--json",), "json", "with --dryrun: print the app and the request as JSON (secrets masked)"),
    RunOption(("--wait",), "wait", "wait until the app ends; exit 1 unless it succeeded"),
    RunOption(("--log",), "log", "stream the app's logs (to stderr) until it ends; implies --wait"),
    RunOption(("--fail-fast",), "fail_fast",
              "stop the other replicas as soon as one fails (default, as TorchX: the others run on and the app"
              " is FAILED once all have exited); applies while the app is waited for"),  # fmt: skip
    RunOption(("--workspace",), "workspace", "a directory to overlay onto the image (schedulers that support it)",
              takes_value=True),  # fmt: skip
)


CLI_PROG = "jupyter-sched run"
DEFAULT_MEMORY_NOTE = (
    "Limits: the utils.* and dist.* components ask for memMB=1024 (1 GiB) per replica unless given --memMB;"
    " local_docker and slurm enforce it (a job may run out of memory there only), the local schedulers"
    " ignore it (their limit is the run option memory_limit, none by default)."
)
"""Said in ``run --help`` and in the status pane: the same app may have a memory limit on one scheduler and
none on another."""


def build_run_parser(prog: str = CLI_PROG, extra: Sequence[RunOption] = ()) -> argparse.ArgumentParser:
    """The parser of ``run``'s own options (it raises UsageError/ParserExit instead of exiting). Feed it the
    ``options`` of :func:`split_run_line`; the component and its flags must never reach it. ``extra``: a
    front end's switches, listed in the usage and help (``split_run_line`` takes them off the line)."""
    notebook = prog.startswith("%")
    component_help = f"{prog} COMPONENT --help" if notebook else f"`{CLI_PROG} COMPONENT --help`"
    parser = RaisingArgumentParser(
        prog=prog,
        add_help=False,
        description=HELP + ". Options go before the component; everything after it is the component's.",
        epilog=(
            f"Show a component's flags with {component_help}; list components with"
            " `jupyter-sched builtins` and run options with `jupyter-sched runopts SCHEDULER`. "
            + (
                "" if notebook
                else "On local schedulers run waits and streams the logs, since the replicas end with this command. "
            )
            + DEFAULT_MEMORY_NOTE
        ),
    )
    for opt in extra:
        parser.add_argument(*opt.flags, dest=opt.dest, action="store_true", help=opt.help)
    for opt in RUN_OPTIONS:
        if opt.dest == "help":
            parser.add_argument(*opt.flags, action="help", help=opt.help)
        elif opt.repeat:
            parser.add_argument(
                *opt.flags, dest=opt.dest, action="append", default=[], metavar=opt.metavar, help=opt.help
            )
        elif opt.takes_value:
            parser.add_argument(*opt.flags, dest=opt.dest, metavar=opt.metavar, help=opt.help)
        else:
            parser.add_argument(*opt.flags, dest=opt.dest, action="store_true", help=opt.help)
    parser.add_argument("component", nargs="?", help="a built-in (utils.echo), an installed one, or file.py:function")
    parser.add_argument("component_args", nargs=argparse.REMAINDER, help="the component's flags and arguments")
    return parser


@dataclass
class RunLine:
    """A run line split up: the leading run options (as typed), the front end's switches found among them
    (by ``dest``), and the rest, which starts with the component, ``--``, or an option ``run`` lacks."""

    options: List[str]
    rest: List[str]
    flags: Dict[str, bool] = field(default_factory=dict)
    head: List[str] = field(default_factory=list)
    """Every word before the rest, as typed (run options and the front end's switches)."""
    prog: str = CLI_PROG
    """Who parses the line, for its messages: ``jupyter-sched run``, ``%sched_run``."""
    extra: Tuple[RunOption, ...] = ()
    """The front end's own switches (e.g. the notebook's ``--quiet``), named in its messages."""

    def flag(self, dest: str) -> bool:
        return bool(self.flags.get(dest))

    def component(self) -> Tuple[Optional[str], List[str]]:
        """``(component, its arguments)``; the component is the first token of the rest (or the one after
        ``--``). An option there is not one of ``run``'s: a UsageError says where flags go."""
        rest = self.rest
        if not rest:
            return None, []
        if rest[0] == "--":
            return (rest[1] if len(rest) > 1 else None), rest[2:]
        token = rest[0]
        if token.startswith("-") and token != "-":
            names = ", ".join(opt.flags[0] for opt in RUN_OPTIONS if opt.dest != "help")
            own = ", ".join(opt.flags[0] for opt in self.extra)
            options = f"Options are {own}; run options {names}" if own else f"Run options are {names}"
            raise UsageError(
                f"{error_prefix(self.prog)}unknown option {token}. {options}; a component's flags go after its"
                f" name ({self.prog} [OPTIONS] COMPONENT {token} ...)\n{self.usage()}"
            )
        return token, rest[1:]

    def usage(self) -> str:
        """The usage line of the front end that split this line (its own switches included)."""
        return build_run_parser(self.prog, self.extra).format_usage().rstrip()


def split_run_line(argv: Sequence[str], extra: Sequence[RunOption] = (), prog: str = CLI_PROG) -> RunLine:
    """Takes the leading options of ``argv``: ``RUN_OPTIONS`` (with their values) and the ``extra`` switches
    of a front end (recorded in ``flags``); ``prog`` names the front end in messages. Never raises: what it
    cannot place starts the rest."""
    spelled: Dict[str, RunOption] = {flag: opt for opt in (*extra, *RUN_OPTIONS) for flag in opt.flags}
    glued = [f for opt in RUN_OPTIONS if opt.takes_value for f in opt.flags if len(f) == 2]
    options: List[str] = []
    flags: Dict[str, bool] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        opt = spelled.get(token.split("=", 1)[0])
        if opt is not None and opt in extra:
            if token not in opt.flags:  # a front end's switch takes no value
                break
            flags[opt.dest] = True
        elif opt is not None:
            options.append(token)
            if opt.takes_value and "=" not in token and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
        elif any(token.startswith(f) and not token.startswith("--") for f in glued):
            options.append(token)  # -sSCHEDULER
        else:
            break
        i += 1
    return RunLine(options, list(argv[i:]), flags, list(argv[:i]), prog, tuple(extra))


def split_run_argv(argv: Sequence[str]) -> Tuple[List[str], Optional[str], List[str]]:
    """``(run options, component, component args)`` of a ``run`` command line."""
    line = split_run_line(argv)
    component, args = line.component()
    return line.options, component, args
