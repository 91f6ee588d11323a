"""Rich displays of the data model, registered with IPython's formatters when the extension loads.

The specs and scheduler layers never import IPython; instead :func:`register` adds per-type printers
(``formatters['text/html'].for_type_by_name(...)``) for AppDryRunInfo, AppStatus, DescribeAppResponse and
AppDef (and a mime-bundle printer adding the dry run's JSON), and :func:`unregister` removes exactly those.
``by_name`` registration also means nothing is imported until such an object is displayed. Static reprs
show times, never "elapsed until now", so an exported notebook does not pretend a number is live.
"""

from __future__ import annotations

import shlex
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.notebook.displays import dryrun_repr
from jupyter_sched.notebook.panes.theme import (
    MONO,
    code,
    elapsed,
    esc,
    exit_text,
    fmt_clock,
    fmt_duration,
    pill,
    table,
    text_table,
)
from jupyter_sched.notebook.panes.usage_view import totals_html
from jupyter_sched.specs import NONE, AppDef, AppStatus
from jupyter_sched.specs.output.masking import mask_argv, mask_env, mask_out, masked_copy

REPLICA_HEADERS = ("role", "replica", "state", "exit code", "pid / host", "started", "elapsed")


def replica_rows(status: AppStatus, now: Optional[float] = None, html: bool = True) -> List[Tuple[str, ...]]:
    """One row per role x replica. ``now`` given: running replicas show elapsed-so-far (live panes only)."""
    rows = []
    for role in status.roles:
        for rep in role.replicas:
            if rep.finished is not None or now is not None:
                took = fmt_duration(elapsed(rep.started, rep.finished, now))
            else:
                took = "-"
            where = str(rep.pid) if rep.pid is not None else (rep.hostname or "-")
            exit_code = exit_text(rep.exit_code)
            state = pill(rep.state) if html else str(rep.state)
            if rep.num_restarts:
                state += f" ({rep.num_restarts} restarts)"
            cells = (role.role, str(rep.id), state, exit_code, where, fmt_clock(rep.started), took)
            rows.append(tuple(esc(c) if html and i != 2 else c for i, c in enumerate(cells)))
    return rows


def replica_table_html(status: AppStatus, now: Optional[float] = None) -> str:
    if not status.roles:
        return '<div style="font-size:12px;opacity:0.7">no replicas reported yet</div>'
    return table(REPLICA_HEADERS, replica_rows(status, now), raw=True)


def messages_html(status: AppStatus) -> str:
    """The app's message and its structured error (the error file's JSON, still JSON), secrets masked."""
    out = []
    if status.msg and status.msg != NONE:
        out.append(f'<div style="font-size:12px">{esc(mask_out(status.msg))}</div>')
    if status.structured_error_msg and status.structured_error_msg != NONE:
        error = mask_out(status.structured_error_msg)
        out.append(
            f'<details><summary style="font-size:12px;color:#e75c58">error</summary>'
            f'<pre style="{MONO};font-size:12px;white-space:pre-wrap">{esc(error)}</pre>'
            "</details>"
        )
    return "".join(out)


def shown_ui_url(status: AppStatus) -> Optional[str]:
    """The app's UI URL if it is one a person can open (a dashboard's ``http(s)://``), else None: the local
    and Slurm backends report the ``file://`` URL of the directory where they keep the app's records, an
    internal path a browser will not open from a notebook."""
    url = status.ui_url
    return url if url and not url.lower().startswith("file:") else None


def app_status_html(status: AppStatus) -> str:
    url = shown_ui_url(status)
    ui = f" &middot; {esc(url)}" if url else ""
    return (
        f'<div class="jsched-appstatus">{pill(status.state)}{ui}'
        f"{replica_table_html(status)}{totals_html(status)}{messages_html(status)}</div>"
    )


def app_status_text(status: AppStatus) -> str:
    shown = masked_copy(status)  # masked before format() quotes and wraps its errors
    shown.ui_url = shown_ui_url(shown)
    return "AppStatus:\n" + shown.format()


def appdef_rows(app: AppDef) -> List[Tuple[str, ...]]:
    rows: List[Tuple[str, ...]] = []
    for role in app.roles:
        argv = shlex.join([role.entrypoint, *mask_argv(role.args)])
        env = mask_env(role.env)
        env_html = (
            f"<details><summary>{len(env)} vars</summary>"
            + "<br>".join(f"{esc(k)}={esc(v)}" for k, v in env.items())
            + "</details>"
            if env
            else ""
        )
        res = role.resource
        limits = f"cpu={res.cpu} gpu={res.gpu} memMB={res.memMB}" if getattr(res, "cpu", -1) >= 0 else ""
        mounts = "<br>".join(esc(m) for m in role.mounts)
        rows.append(
            (esc(role.name), str(role.num_replicas), esc(role.image), code(argv), env_html, esc(limits), mounts)
        )
    return rows


def appdef_html(app: AppDef) -> str:
    headers = ("role", "replicas", "image", "command", "env", "resources", "mounts")
    return (
        f'<div class="jsched-appdef"><b>{esc(app.name)}</b> ({len(app.roles)} role(s))'
        f"{table(headers, appdef_rows(app), raw=True)}</div>"
    )


def appdef_text(app: AppDef) -> str:
    rows = [
        (r.name, str(r.num_replicas), r.image, shlex.join([r.entrypoint, *mask_argv(r.args)])) for r in app.roles
    ]
    return f"AppDef {app.name}:\n" + text_table(("role", "replicas", "image", "command"), rows)


def describe_html(resp: Any) -> str:
    """A DescribeAppResponse: identity and state, the roles (as an AppDef) and the replicas."""
    status = AppStatus(resp.state, max(resp.num_restarts, 0), resp.msg, resp.structured_error_msg, resp.ui_url,
                       resp.roles_statuses)  # fmt: skip
    roles = appdef_html(AppDef(resp.app_id, list(resp.roles))) if resp.roles else ""
    return (
        f'<div class="jsched-describe">{code(resp.app_id)} {pill(resp.state)}'
        f"{roles}{replica_table_html(status)}{messages_html(status)}</div>"
    )


def describe_text(resp: Any) -> str:
    status = AppStatus(resp.state, max(resp.num_restarts, 0), resp.msg, resp.structured_error_msg, resp.ui_url,
                       resp.roles_statuses)  # fmt: skip
    roles = appdef_text(AppDef(resp.app_id, list(resp.roles))) + "\n" if resp.roles else ""
    return f"App {resp.app_id}:\n{roles}{masked_copy(status).format()}"


def _plain(render: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(render(obj))

    return printer


_PRINTERS: Dict[Tuple[str, str], Dict[str, Callable[..., Any]]] = {
    ("jupyter_sched.specs.request.app", "AppDryRunInfo"): {
        "text/html": dryrun_repr.dryrun_html,
        "text/plain": _plain(dryrun_repr.dryrun_text),
        "mimebundle": dryrun_repr.dryrun_bundle,
    },
    ("jupyter_sched.specs.status.state", "AppStatus"): {
        "text/html": app_status_html,
        "text/plain": _plain(app_status_text),
    },
    ("jupyter_sched.schedulers.api", "DescribeAppResponse"): {
        "text/html": describe_html,
        "text/plain": _plain(describe_text),
    },
    ("jupyter_sched.specs.request.app", "AppDef"): {"text/html": appdef_html, "text/plain": _plain(appdef_text)},
}


def _formatter(shell: Any, mime: str) -> Any:
    display = shell.display_formatter
    return display.mimebundle_formatter if mime == "mimebundle" else display.formatters[mime]


def register(shell: Any) -> None:
    """Adds the printers to ``shell``'s display formatters (idempotent: same keys, same functions)."""
    for (module, name), printers in _PRINTERS.items():
        for mime, func in printers.items():
            _formatter(shell, mime).for_type_by_name(module, name, func)


def unregister(shell: Any) -> None:
    """Removes the printers :func:`register` added (and only if they are still ours)."""
    for (module, name), printers in _PRINTERS.items():
        for mime, func in printers.items():
            fmt = _formatter(shell, mime)
            current = fmt.deferred_printers.get((module, name))
            if current is None:
                current = next(
                    (f for t, f in fmt.type_printers.items() if (t.__module__, t.__name__) == (module, name)), None
                )
            if current is func:
                fmt.pop(f"{module}.{name}", None)
