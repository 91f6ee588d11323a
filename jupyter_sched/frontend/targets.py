"""What a user names and how it is found: schedulers, app handles, ``HANDLE/ROLE/K,K`` log targets, replica
lists, and an app's status with an error that lists what does exist.

Both front ends accept the same forms, so they resolve them here. The notebook adds its own shortcuts on top
(app names, id prefixes, Job variables; see ``notebook.session``).
"""

from __future__ import annotations

import re
import time
from typing import List, Optional, Tuple

from jupyter_sched.frontend.errors import CommandError, UsageError
from jupyter_sched.frontend.launch.config import ProjectConfig
from jupyter_sched.runner import Runner
from jupyter_sched.schedulers import get_default_scheduler_name, get_scheduler_factories
from jupyter_sched.specs import AppStatus, MalformedAppHandleException, make_app_handle, parse_app_handle

_IDENTIFIER = re.compile(
    r"^(?P<handle>[^/]+?://[^/]*/[^/]+)(?:/(?P<role>[^/]+))?(?:/(?P<ids>\d+(?:,\d+)*))?/?$"
)


_NAMES: Tuple[float, List[str]] = (0.0, [])
NAMES_TTL_S = 30.0
"""How long the registry's names are reused: reading them scans every installed distribution's entry points
(about 50 ms here), and a long-lived process asks often (the Jupyter server checks the handle of every
request, a kernel the scheduler of every magic)."""


def scheduler_names(fresh: bool = False) -> List[str]:
    """The registered schedulers' names (read again after :data:`NAMES_TTL_S`, or when ``fresh``)."""
    global _NAMES
    at, names = _NAMES
    if fresh or not names or time.monotonic() - at > NAMES_TTL_S:
        names = list(get_scheduler_factories())
        _NAMES = (time.monotonic(), names)
    return list(names)


def check_scheduler(name: str, where: str = "--scheduler") -> str:
    known = scheduler_names()
    if name not in known:  # installed since the names were read?
        known = scheduler_names(fresh=True)
    if name not in known:
        raise UsageError(f"{where}: unknown scheduler {name!r}; available: {', '.join(known)}")
    return name


def pick_scheduler(flag: Optional[str], config: ProjectConfig) -> str:
    """``-s`` if given, else the config's ``default_scheduler``, else the registry's default (local_cwd)."""
    if flag:
        return check_scheduler(flag)
    if config.default_scheduler:
        return check_scheduler(config.default_scheduler, f"{config.where()} default_scheduler")
    return get_default_scheduler_name()


def check_handle(handle: str) -> str:
    """The handle, checked (UsageError if malformed or of an unknown scheduler) and normalised: an empty
    session (``local_cwd:///APP_ID``) means ``default``."""
    try:
        parsed = parse_app_handle(handle)
    except MalformedAppHandleException as e:
        raise UsageError(str(e)) from None
    check_scheduler(parsed.scheduler_backend, f"app handle {handle!r}")
    return make_app_handle(parsed.scheduler_backend, parsed.session_name or "default", parsed.app_id)


def parse_identifier(text: str) -> Tuple[str, Optional[str], Optional[List[int]]]:
    """``SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]`` -> ``(handle, role or None, replica ids or None)``."""
    match = _IDENTIFIER.match(text)
    if not match:
        raise UsageError(
            f"log: {text!r} is not SCHEDULER://SESSION/APP_ID[/ROLE[/K,K...]]"
            " (e.g. local_cwd://default/echo-b3k2x9q0d1/echo/0)"
        )
    scheme, _, rest = match.group("handle").partition("://")
    session, _, app_id = rest.rpartition("/")
    handle = check_handle(f"{scheme}://{session or 'default'}/{app_id}")
    ids = (
        list(dict.fromkeys(int(i) for i in match.group("ids").split(",")))  # each replica once
        if match.group("ids")
        else None
    )
    return handle, match.group("role"), ids


def parse_replica_list(text: Optional[str]) -> Optional[List[int]]:
    """``0,2,3`` or ``0-3`` (or a mix) as a sorted list; None for None.

    An empty selection (``-r ,``, a reversed range ``3-1``) is an error, not an empty list: it would
    silently show no logs at all."""
    if text is None:
        return None
    out: set = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            lo, hi = (int(x) for x in part.split("-", 1)) if "-" in part else (int(part), int(part))
        except ValueError:
            raise UsageError(f"--replicas {text!r}: use replica numbers like 0,1 or 0-3") from None
        if lo > hi:
            raise UsageError(f"--replicas {text!r}: the range {part} is empty; write {hi}-{lo}")
        out.update(range(lo, hi + 1))
    if not out:
        raise UsageError(f"--replicas {text!r}: use replica numbers like 0,1 or 0-3")
    return sorted(out)


def require_status(runner: Runner, handle: str) -> AppStatus:
    """The app's status, or CommandError naming the handle and the apps that do exist."""
    handle = check_handle(handle)
    status = runner.status(handle)
    if status is not None:
        return status
    parsed = parse_app_handle(handle)
    scheduler, session = parsed.scheduler_backend, parsed.session_name
    missing = f"no app {handle}: it was never submitted, or its records were removed."
    if session != runner.session_name:
        raise CommandError(f"{missing} `jupyter-sched list` shows only session {runner.session_name!r}.")
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
    raise CommandError(f"{missing}{hint} List apps with `jupyter-sched list -s {scheduler}`.")


def select_replicas(
    handle: str, status: AppStatus, role: Optional[str] = None, ids: Optional[List[int]] = None
) -> List[Tuple[str, int]]:
    """``(role, k)`` of the replicas chosen by ``role`` and ``ids`` (all when None); CommandError for a role
    or replica the app does not have, listing those it has."""
    roles = {r.role: sorted(rep.id for rep in r.replicas) for r in status.roles}
    if role is not None and role not in roles:
        raise CommandError(
            f"app {handle} has no role {role!r}; its roles are: {', '.join(roles) or '(none)'}"
        )
    chosen = [role] if role is not None else list(roles)
    if ids is not None and role is not None:
        missing = [k for k in ids if k not in roles[role]]
        if missing:
            have = ", ".join(str(k) for k in roles[role]) or "none"
            raise CommandError(
                f"role {role!r} of app {handle} has no replica {missing[0]}; its replicas are: {have}"
            )
        return [(role, k) for k in ids]
    return [(r, k) for r in chosen for k in roles[r]]
