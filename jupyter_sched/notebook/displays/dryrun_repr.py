"""How a dry run (``AppDryRunInfo``) displays: a table per replica, a text rendering, and JSON.

Everything backend-specific comes from the request's neutral view (``info.view()``, see
``jupyter_sched.specs.request.dryrun``): per replica the command as a copyable shell line, how the backend starts
it (``docker run ...``), the env (and apart from it what the backend adds at launch), cwd, image, mounts,
limits and logs; app-wide notes (how a Slurm job is submitted), free-form sections (the batch script) and
warnings. A request without a view falls back to its
own repr. Secrets are masked in all three renderings (:mod:`jupyter_sched.specs.output.masking`: secret-looking
names, ``--password=``-style arguments and credentials inside URLs, also inside command lines and scripts).

Each block (command, env, script) has a copy button: a small inline ``onclick`` copying the ``<pre>`` next to
it, so it works in JupyterLab without an extension; where scripts are stripped (GitHub, nbviewer) the block
is still plain, selectable text. User text is escaped by ``theme.esc`` (safe from maths typesetting too), and
the whole display carries the classes MathJax skips.

The JSON goes out as ``application/vnd.jupyter-sched.dryrun+json``, not ``application/json``: JupyterLab
ranks its JSON tree viewer above HTML, so a plain ``application/json`` entry would replace the table with
a tree. Under the vendor type tools still find it (nbformat stores ``+json`` types as JSON) and every
front end shows the table.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from typing import Any, Dict, List, Optional, Tuple

from jupyter_sched.notebook.panes.theme import code, esc, table
from jupyter_sched.specs import DryRunView, ReplicaPlan
from jupyter_sched.specs.output.masking import mask_env, mask_lines, mask_shell_text, mask_tree
from jupyter_sched.specs.request.dryrun import LAUNCH_ENV_HEADING

DRYRUN_MIME = "application/vnd.jupyter-sched.dryrun+json"
_NO_MATH = "tex2jax_ignore mathjax_ignore"
_COPY = (
    '<button type="button" title="copy" style="float:right;font-size:11px;cursor:pointer" onclick="'
    "navigator.clipboard.writeText(this.nextElementSibling.textContent);this.textContent='copied'"
    '">copy</button>'
)
_PRE = "margin:0;white-space:pre-wrap;font-family:var(--jp-code-font-family,monospace);font-size:12px"


def _view(info: Any) -> Optional[DryRunView]:
    try:
        return info.view()
    except Exception:  # noqa: BLE001 - a repr must never raise; fall back to the generic rendering
        return None


def replicas(info: Any) -> Optional[List[ReplicaPlan]]:
    """The per-replica plans of a dry run, or None when its request offers no neutral view."""
    view = _view(info)
    return None if view is None else view.replicas


def _rows(plan: ReplicaPlan) -> List[Tuple[str, str]]:
    """(label, text) rows of one replica, secrets masked; the html and text renderings share them."""
    rows: List[Tuple[str, str]] = [(k, v) for k, v in (("name", plan.name), ("image", plan.image)) if v]
    if plan.launch is not None:
        rows += [("command", mask_shell_text(plan.command_line)), (plan.launch[0], mask_shell_text(plan.launch[1]))]
    else:
        rows.append(("argv", mask_shell_text(plan.command_line)))
    if plan.cwd:
        rows.append(("cwd", plan.cwd))
    return rows


def _copyable(text: str) -> str:
    return f'<div>{_COPY}<pre style="{_PRE}">{esc(text)}</pre></div>'


def _launch_html(text: str) -> str:
    """How to start the replica by hand: long (a ``docker run`` line has a flag a line), so folded."""
    lines = text.count("\n") + 1
    return _copyable(text) if lines < 4 else f"<details><summary>{lines} lines</summary>{_copyable(text)}</details>"


def _plan_html(plan: ReplicaPlan) -> str:
    launch = plan.launch[0] if plan.launch else None
    rows = [(k, _copyable(v) if k in ("argv", "command") else _launch_html(v) if k == launch else code(v))
            for k, v in _rows(plan)]  # fmt: skip
    for key, variables in (("env", plan.env), (LAUNCH_ENV_HEADING, plan.launch_env)):
        env = mask_env(variables)
        if env:
            lines = "\n".join(f"{k}={v}" for k, v in env.items())
            rows.append((key, f"<details open><summary>{len(env)} vars</summary>{_copyable(lines)}</details>"))
    for key, values in (("logs", plan.logs), ("mounts", plan.mounts)):
        if values:
            rows.append((key, "<br>".join(code(x) for x in values)))
    if plan.limits:
        rows.append(("limits", "<br>".join(f"{esc(k)}={esc(v)}" for k, v in plan.limits.items())))
    return f'<div style="margin-top:6px"><b>{esc(plan.label)}</b>{table(("", ""), rows, raw=True)}</div>'


def dryrun_html(info: Any) -> str:
    """Warnings first, then app-wide notes, one small table per replica, and the sections (scripts)."""
    app = info.app
    head = (
        f'<div class="jsched-dryrun {_NO_MATH}"><b>dry run</b> of {esc(app.name if app else "?")} on '
        f"{code(info.scheduler or '?')} &middot; nothing was started"
    )
    cfg = ", ".join(f"{k}={v!r}" for k, v in mask_tree(dict(info.cfg)).items() if v not in (None, "", [], {}))
    cfg_html = f'<div style="font-size:12px;opacity:0.8">cfg: {esc(cfg)}</div>' if cfg else ""
    view = _view(info)
    if view is None:
        return head + cfg_html + f'<pre style="white-space:pre-wrap">{esc(dryrun_text(info))}</pre></div>'
    warn = "".join(
        f'<div class="jsched-warning" style="font-size:12px;color:#b35900">&#9888; warning: {esc(w)}</div>'
        for w in view.warnings
    )
    notes = "".join(f'<div style="font-size:12px">{esc(k)}: {code(mask_shell_text(v))}</div>' for k, v in view.notes)
    body = "".join(_plan_html(p) for p in view.replicas)
    sections = "".join(
        f'<details open style="margin-top:6px"><summary><b>{esc(title)}</b></summary>'
        f"{_copyable(mask_shell_text(text))}</details>"
        for title, text in view.sections
    )
    return head + cfg_html + warn + notes + body + sections + "</div>"


def dryrun_text(info: Any) -> str:
    """Plain text: one block per replica, then the sections (the backend's own repr without a view)."""
    app = info.app
    out = [f"dry run of {app.name if app else '?'} on {info.scheduler or '?'} (nothing was started)"]
    view = _view(info)
    if view is None:
        out.append(mask_lines(repr(info)))
        return "\n".join(out)
    out.extend(f"  warning: {w}" for w in view.warnings)
    out.extend(f"  {k}: {mask_shell_text(v)}" for k, v in view.notes)
    for plan in view.replicas:
        out.append(f"  {plan.label}:")
        for k, v in _rows(plan):  # a value of several lines (a docker run line) goes below its label
            out.append(f"    {k}: {v}" if "\n" not in v else f"    {k}:\n" + textwrap.indent(v, " " * 6))
        out.extend(f"    env:  {k}={v}" for k, v in mask_env(plan.env).items())
        if plan.launch_env:
            out.append(f"    {LAUNCH_ENV_HEADING}:")
            out.extend(f"          {k}={v}" for k, v in mask_env(plan.launch_env).items())
        out.extend(f"    log:  {x}" for x in plan.logs)
        out.extend(f"    mount:  {x}" for x in plan.mounts)
        out.extend(f"    limit: {k}={v}" for k, v in plan.limits.items())
    for title, text in view.sections:
        out.append(f"  {title}:")
        out.extend(f"    {line}" if line else "" for line in mask_shell_text(text).splitlines())
    return "\n".join(out)


def dryrun_json(info: Any) -> Dict[str, Any]:
    """The dry run as JSON: scheduler, app name, resolved cfg, the request's own JSON (its ``to_json()``,
    else the request itself) and its neutral view; secrets masked."""
    request = info.request
    try:
        body = request.to_json() if callable(getattr(request, "to_json", None)) else request
    except Exception:  # noqa: BLE001 - a backend's bug: show repr
        body = repr(request)
    app, view = info.app, _view(info)
    return {
        "scheduler": info.scheduler,
        "app": app.name if app is not None else None,
        "cfg": mask_tree(dict(info.cfg)),
        "request": mask_tree(body),
        "view": _view_json(view) if view is not None else None,
    }


def _view_json(view: DryRunView) -> Dict[str, Any]:
    """The neutral view with each command as one masked shell line (single argv words such as ``-e``'s
    ``NAME=VALUE`` could not be masked by name)."""
    plans = [
        {**mask_tree({f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name not in ("argv", "shell")}),
         "label": p.label, "command": mask_shell_text(p.command_line)}
        for p in view.replicas
    ]  # fmt: skip
    return {**mask_tree(dataclasses.replace(view, replicas=[])), "replicas": plans}


def dryrun_bundle(info: Any) -> Dict[str, Any]:
    """The extra entry of a dry run's display bundle (the formatters add text/plain and text/html)."""
    return {DRYRUN_MIME: dryrun_json(info)}


def dumps(info: Any) -> str:
    return json.dumps(dryrun_json(info), indent=2, default=str)
