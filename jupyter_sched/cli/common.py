"""Helpers shared by the verbs: schedulers, app lookup with helpful errors, times, colours."""

from __future__ import annotations

import os
import re
import sys
from datetime import datetime, timedelta
from typing import List, Optional, TextIO

from jupyter_sched.cli.config import ProjectConfig
from jupyter_sched.cli.errors import CliError, CliUsageError
from jupyter_sched.runner import Runner, get_runner
from jupyter_sched.schedulers import get_default_scheduler_name, get_scheduler_factories
from jupyter_sched.specs import (
    AppStatus,
    MalformedAppHandleException,
    make_app_handle,
    parse_app_handle,
)


def open_runner(config: ProjectConfig) -> Runner:
    return get_runner(component_defaults=config.components)


def scheduler_names() -> List[str]:
    return list(get_scheduler_factories())


def check_scheduler(name: str, where: str = "--scheduler") -> str:
    known = scheduler_names()
    if name not in known:
        raise CliUsageError(f"{where}: unknown scheduler {name!r}; available: {', '.join(known)}")
    return name


def pick_scheduler(flag: Optional[str], config: ProjectConfig) -> str:
    """``-s`` if given, else the config's ``default_scheduler``, else the registry's default (local_cwd)."""
    if flag:
        return check_scheduler(flag)
    if config.default_scheduler:
        return check_scheduler(config.default_scheduler, f"{config.where()} default_scheduler")
    return get_default_scheduler_name()


def check_handle(handle: str) -> str:
    """The handle, checked (CliUsageError if malformed or of an unknown scheduler) and normalised: an empty
    session (``local_cwd:///APP_ID``) means ``default``, as in ``log``."""
    try:
        parsed = parse_app_handle(handle)
    except MalformedAppHandleException as e:
        raise CliUsageError(str(e)) from None
    check_scheduler(parsed.scheduler_backend, f"app handle {handle!r}")
    return make_app_handle(parsed.scheduler_backend, parsed.session_name or "default", parsed.app_id)


def require_status(runner: Runner, handle: str) -> AppStatus:
    """The app's status, or CliError naming the handle and the apps that do exist. Pass a handle
    normalised by :func:`check_handle`."""
    handle = check_handle(handle)
    status = runner.status(handle)
    if status is not None:
        return status
    parsed = parse_app_handle(handle)
    scheduler, session = parsed.scheduler_backend, parsed.session_name
    missing = f"no app {handle}: it was never submitted, or its records were removed."
    if session != runner.session_name:
        raise CliError(f"{missing} `jupyter-sched list` shows only session {runner.session_name!r}.")
    try:
        known = [a.app_handle for a in runner.list(scheduler)]
    except Exception:  # noqa: BLE001 - the listing is only a hint
        known = []
    shown = known[-10:]
    more = f" (and {len(known) - len(shown)} more)" if len(known) > len(shown) else ""
    hint = (
        f" Known apps on {scheduler}: {', '.join(shown)}{more}."
        if known
        else f" {scheduler} knows no apps in session {session!r}."
    )
    raise CliError(f"{missing}{hint} List apps with `jupyter-sched list -s {scheduler}`.")


_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_time(text: str, flag: str) -> datetime:
    """``2024-05-01T12:00:00`` (ISO 8601, local time unless it has an offset) or ``30s``/``5m``/``2h``/``1d``
    ago."""
    match = _RELATIVE.match(text.strip())
    if match:
        return datetime.now() - timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
    try:
        iso = text.strip()  # before 3.11 fromisoformat rejects a "Z" suffix: read it as +00:00
        return datetime.fromisoformat(iso[:-1] + "+00:00" if iso[-1:] in "Zz" and iso else iso)
    except ValueError:
        raise CliUsageError(
            f"{flag} {text!r}: not a time; write an ISO time (2024-05-01T12:00:00) or an age (30s, 5m, 2h, 1d)"
        ) from None


def check_window(since: Optional[datetime], until: Optional[datetime], texts: List[str]) -> None:
    """``--since`` after ``--until`` can match nothing: say so instead of printing nothing."""
    if since is None or until is None:
        return
    try:
        backwards = since > until
    except TypeError:  # one has a UTC offset and the other not: compare both as local times
        backwards = since.astimezone() > until.astimezone()
    if backwards:
        raise CliUsageError(f"--since {texts[0]} is after --until {texts[1]}; nothing could match")


def use_color(stream: TextIO) -> bool:
    """Colours only on a terminal, and never with ``NO_COLOR`` set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
