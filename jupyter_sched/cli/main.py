"""``jupyter-sched``: the command line. ``main()`` is the console script; :func:`run_cli` returns the exit code.

Exit codes: 0 success; 1 the app failed or was cancelled, or an app/role/replica does not exist; 2 bad
usage (unknown flag, scheduler, run option or component, malformed handle), and any request refused before
it launches (an AppDef the scheduler cannot run: too many replicas, a partition that cannot hold it, an
entrypoint that does not exist); 130 interrupted (Ctrl-C); 143 stopped by SIGTERM (128 + 15, as a shell
reports a process that signal ended), with one line saying what was stopped, never a traceback.

The library logs under the ``jupyter_sched`` logger; the CLI shows it on stderr: progress (INFO, e.g. image
pulls and workspace builds) and warnings by default, ``-q`` warnings and errors only, ``-qq`` errors only,
``-v`` debug too. These options go before the verb. Errors and log records are written through
:func:`jupyter_sched.cli.common.message`: secrets masked, names unable to drive the terminal.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any, List, Optional, Tuple

from jupyter_sched.cli.errors import CliError, CliExit, CliUsageError
from jupyter_sched.cli.verbs import VERBS
from jupyter_sched.frontend.launch.config import ConfigError, ProjectConfig, load_config
from jupyter_sched.frontend.launch.parsers import RaisingArgumentParser
from jupyter_sched.version import __version__

PROG = "jupyter-sched"


def _usage_errors() -> Tuple[type, ...]:
    """Refused before anything starts: exit 2. InvalidAppError is raised only then (validation, the scheduler's
    replica limit and fit, a missing entrypoint), never about an app that ran. Imported when an error reached
    :func:`run_cli`, not at start: ``--help`` loads neither the specs nor the components, and only ``run`` and
    ``builtins`` load the components."""
    from jupyter_sched.specs import (
        InvalidAppError,
        InvalidRunConfigException,
        MalformedAppHandleException,
        UnknownSchedulerException,
    )

    return (
        CliUsageError, ConfigError, InvalidAppError, InvalidRunConfigException, MalformedAppHandleException,
        UnknownSchedulerException, *_loaded_component_errors("ComponentError"),
    )  # fmt: skip


def _failures() -> Tuple[type, ...]:
    """The app failed or does not exist: exit 1."""
    from jupyter_sched.specs import UnknownAppException

    return (CliError, UnknownAppException)


def _loaded_component_errors(*names: str) -> Tuple[type, ...]:
    """These classes of :mod:`jupyter_sched.components.errors` if that module is loaded, else none: only a verb
    that looked a component up can have raised one, and loading the components to classify another verb's
    error would cost more than that verb (the package loads every built-in's machinery)."""
    errors = sys.modules.get("jupyter_sched.components.errors")
    return tuple(getattr(errors, name) for name in names) if errors is not None else ()


def build_parser() -> RaisingArgumentParser:
    parser = RaisingArgumentParser(
        prog=PROG,
        description="Launch apps (roles x replicas) on a scheduler and watch them.",
        epilog="Run `jupyter-sched VERB --help` for a verb's options.",
    )
    parser.add_argument(
        "--version", action="version", version=f"{PROG} {__version__}"
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (debug) on stderr")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="no progress; -qq: errors only")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for name, verb in VERBS.items():
        sub = verbs.add_parser(name, help=verb.help, description=verb.help, add_help=verb.arguments is not None)
        if verb.arguments is None:  # `run`, `notebook`: the rest of the line is its own (cmd_<verb> parses it)
            sub.add_argument("args", nargs="...", help=f"see `jupyter-sched {name} --help`")
        else:
            verb.arguments(sub)
    return parser


def _export_local_log_dir(config: ProjectConfig) -> None:
    """A ``log_dir`` set for a local scheduler in the config file becomes this process's default log dir, so
    ``status``/``log``/``list`` find the apps ``run`` started there."""
    if not config.path:
        return
    from jupyter_sched.schedulers.common.state_dir import LOG_DIR_ENV

    if os.environ.get(LOG_DIR_ENV):
        return
    for name in ("local_cwd", "local_dir"):
        log_dir = config.schedulers.get(name, {}).get("log_dir")
        if isinstance(log_dir, str) and log_dir:
            base = os.path.dirname(config.path)
            os.environ[LOG_DIR_ENV] = os.path.join(base, os.path.expanduser(log_dir))
            return


_FLAGS = {"-v": 1, "-vv": 2, "--verbose": 1, "-q": -1, "-qq": -2, "--quiet": -1}
_LEVELS = {-2: logging.ERROR, -1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}


class _MaskingFormatter(logging.Formatter):
    """Every record as the command line writes any message (:func:`common.message`): a runner event's
    run options, a warning quoting an env value, a name with escapes in it."""

    def format(self, record: logging.LogRecord) -> str:
        from jupyter_sched.cli import common

        return common.message(super().format(record))


class _StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (it may be replaced after the handler is made)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _setup_logging(argv: List[str]) -> List[str]:
    """Takes the leading ``-v``/``-q`` options off ``argv`` and shows the ``jupyter_sched`` logger's records
    at that level on stderr (once per process; the level is updated on later calls)."""
    level, i = 0, 0
    while i < len(argv) and argv[i] in _FLAGS:
        level += _FLAGS[argv[i]]
        i += 1
    logger = logging.getLogger("jupyter_sched")
    logger.setLevel(_LEVELS[max(-2, min(1, level))])
    if not any(getattr(h, "_jupyter_sched_cli", False) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(_MaskingFormatter(f"{PROG}: %(message)s"))
        handler._jupyter_sched_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    return argv[i:]


def _dispatch(argv: List[str]) -> int:
    argv = _setup_logging(argv)
    config = load_config()
    _export_local_log_dir(config)
    if argv and argv[0] in VERBS and VERBS[argv[0]].arguments is None:  # `run`, `notebook`: a line of their own
        verb = VERBS[argv[0]]
        return int(getattr(verb.load(), verb.main)(argv[1:]))
    args = build_parser().parse_args(argv)
    if VERBS[args.verb].arguments is None:  # only reached with global options before the verb
        verb = VERBS[args.verb]
        return int(getattr(verb.load(), verb.main)(args.args))
    return int(VERBS[args.verb].load().run(args, config))


def run_cli(argv: Optional[List[str]] = None) -> int:
    """Runs the command line and returns its exit code (never raises for user errors)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a replaced stream (pytest's, a StringIO) may lack it
        try:
            if reconfigure is not None:
                reconfigure(errors="replace")
        except ValueError:
            pass
    try:
        return _dispatch(argv)
    except CliExit as e:
        from jupyter_sched.cli import common

        if e.message:  # help as written; an error (it may quote what was typed) as every message
            sys.stderr.write(common.message(e.message) if e.status else common.shown(e.message, common.LINES))
        return e.status
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # the classes are imported only now (see _usage_errors)
        code = _exit_code(e)
        if code is None:
            raise
        return code


def _exit_code(error: Exception) -> Optional[int]:
    """Reports an error that reached the command line and returns its exit code; None for one that is ours
    to fix (a bug: its traceback is shown)."""
    from jupyter_sched.cli import common
    from jupyter_sched.schedulers.local.processes.signals import SignalException

    if isinstance(error, _loaded_component_errors("ComponentHelp")):
        sys.stdout.write(str(error))  # the component's --help, its only argument
        return 0
    if isinstance(error, _usage_errors()):
        _print_error(error)
        return 2
    if isinstance(error, _failures()):
        _print_error(error)
        return 1
    if isinstance(error, SignalException):  # SIGTERM where the verb did not say more (`run` names the app)
        common.err(f"{PROG}: stopped by {signal.Signals(error.sigval).name}")
        return 128 + error.sigval
    if isinstance(error, (ValueError, RuntimeError, OSError)):
        if isinstance(error, BrokenPipeError):
            return _broken_pipe()
        common.err(f"{PROG}: error: {type(error).__name__}: {error}")
        return 1
    return None


def _print_error(error: Exception) -> None:
    """``jupyter-sched: error: MESSAGE``, unless a parser's message already names the program."""
    from jupyter_sched.cli import common

    text = str(error)
    named = text.startswith(f"{PROG}: ") or text.startswith(f"{PROG} ")
    common.err(text if named else f"{PROG}: error: {text}")


def _broken_pipe() -> int:
    """The reader went away (``jupyter-sched log ... | head``): exit quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


def main() -> None:
    sys.exit(run_cli())


if __name__ == "__main__":
    main()
