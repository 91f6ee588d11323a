"""How a dry run (``AppDryRunInfo``) displays: a table per replica, a text rendering, and JSON.

Per replica: the argv as a copyable shell line, the env with secrets masked
(:mod:`jupyter_sched.specs.masking`: secret-looking
names, and credentials inside URLs, also inside command lines and scripts), the cwd, log files or image,
mounts and limits. The local backend's ``PopenRequest`` is recognised by its ``role_params``; a docker
request by ``to_json()`` with ``containers`` (and ``docker_run_command()`` for the copyable line) without
importing docker; a Slurm batch request by ``to_json()`` with ``replicas`` (srun commands, plus how it is
submitted); anything else falls back to its repr. Masking applies to all three renderings, JSON included.

The JSON goes out as ``application/vnd.jupyter-sched.dryrun+json``, not ``application/json``: JupyterLab
ranks its JSON tree viewer above HTML, so a plain ``application/json`` entry would replace the table with
a tree. Under the vendor type tools still find it (nbformat stores ``+json`` types as JSON) and every
front end shows the table.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Dict, List, Mapping, Optional, Tuple

from jupyter_sched.notebook.theme import code, esc, table
from jupyter_sched.specs.masking import mask_argv, mask_env, mask_lines, mask_shell_text, mask_tree

Replica = Dict[str, Any]
"""label, argv (a copyable shell line), env (masked), cwd, logs, image, command, mounts, limits, name."""


def _mount_text(m: Any) -> str:
    if isinstance(m, Mapping):
        src = m.get("Source") or m.get("source") or m.get("src_path") or m.get("src") or ""
        dst = m.get("Target") or m.get("target") or m.get("dst_path") or ""
        ro = m.get("ReadOnly") or m.get("read_only")
        kind = m.get("Type") or m.get("type") or "mount"
        return f"{kind} {src} -> {dst}{' (ro)' if ro else ''}"
    src = getattr(m, "src_path", None) or getattr(m, "src", "")
    ro = getattr(m, "read_only", False)
    return f"{type(m).__name__.replace('Mount', '').lower()} {src} -> {getattr(m, 'dst_path', '')}" + (
        " (ro)" if ro else ""
    )


def _local_replicas(request: Any) -> List[Replica]:
    out = []
    for role, params in request.role_params.items():
        for k, p in enumerate(params):
            logs = [x for x in (p.stdout, p.stderr, p.combined) if x]
            out.append(
                {
                    "label": f"{role}/{k}",
                    "argv": mask_shell_text(p.command_line),
                    "env": mask_env(p.env),
                    "cwd": p.cwd,
                    "logs": logs,
                }
            )
    return out


_LIMIT_KEYS = (("cpus", "nano_cpus"), ("memory", "mem_limit"), ("shm_size",), ("gpus", "device_requests"),
               ("devices",), ("restart_policy",), ("privileged",))  # fmt: skip
"""Limits to show: the request's readable name first, else the docker SDK's keyword."""


def _limits(merged: Mapping[str, Any]) -> Dict[str, Any]:
    out = {}
    for names in _LIMIT_KEYS:
        key = next((k for k in names if merged.get(k)), None)
        if key is not None:
            out[key] = merged[key]
    return out


def _docker_replicas(request: Any) -> List[Replica]:
    data = request.to_json()
    containers = data.get("containers", []) if isinstance(data, Mapping) else []
    commands: List[str] = []
    run_command = getattr(request, "docker_run_command", None)
    if callable(run_command):
        got = run_command()
        commands = [got] if isinstance(got, str) else [c if isinstance(c, str) else shlex.join(c) for c in got]
    out = []
    for i, c in enumerate(containers):
        c = dict(c) if isinstance(c, Mapping) else {"value": c}
        kwargs = c.get("kwargs") if isinstance(c.get("kwargs"), Mapping) else {}
        merged = {**kwargs, **{k: v for k, v in c.items() if k != "kwargs"}}
        env = merged.get("env") or merged.get("environment") or {}
        if isinstance(env, list):
            env = dict(e.split("=", 1) if "=" in e else (e, "") for e in env)
        command = merged.get("command")
        if i < len(commands):
            argv = mask_shell_text(commands[i])
        elif merged.get("docker_run"):
            argv = mask_shell_text(str(merged["docker_run"]))
        else:
            argv = shlex.join(mask_argv(command)) if isinstance(command, list) else mask_shell_text(str(command or ""))
        labels = merged.get("labels") or {}
        role = merged.get("role") or next((v for k, v in labels.items() if str(k).endswith("role-name")), None)
        k = merged.get("replica_id", next((v for key, v in labels.items() if str(key).endswith("replica-id")), None))
        out.append(
            {
                "label": f"{role}/{k}" if role else str(merged.get("name") or f"container {i}"),
                "name": merged.get("name"),
                "image": merged.get("image"),
                "command": (
                    shlex.join(mask_argv(command)) if isinstance(command, list) else mask_shell_text(str(command or ""))
                ),
                "argv": argv,
                "env": mask_env(env) if isinstance(env, Mapping) else env,
                "cwd": merged.get("working_dir") or merged.get("workdir"),
                "mounts": [_mount_text(m) for m in merged.get("mounts") or []],
                "limits": _limits(merged),
            }
        )
    return out


def _slurm_replicas(data: Mapping[str, Any]) -> List[Replica]:
    """A Slurm batch request's ``to_json()``: per replica its srun command, env, logs and resources."""
    out = []
    for rep in data["replicas"]:
        srun = [str(o) for o in rep.get("srun") or []]
        cwd = next((o.split("=", 1)[1] for o in srun if o.startswith("--chdir=")), data.get("cwd"))
        env = rep.get("env") or {}
        out.append(
            {
                "label": f"{rep.get('role')}/{rep.get('replica_id')}",
                "argv": mask_shell_text(str(rep.get("command") or "")),
                "env": mask_env(env) if isinstance(env, Mapping) else env,
                "cwd": cwd,
                "logs": [str(x) for x in (rep.get("logs") or {}).values()],
                "limits": {**(rep.get("resources") or {}), "sbatch": " ".join(map(str, rep.get("sbatch") or []))},
            }
        )
    return out


def replicas(info: Any) -> Optional[List[Replica]]:
    """The per-replica view of a dry run, or None when the request has a shape we don't know (then the
    displays fall back to the request's own repr, masked)."""
    request = info.request
    try:
        if hasattr(request, "role_params"):
            return _local_replicas(request)
        if callable(getattr(request, "to_json", None)):
            data = request.to_json()
            if isinstance(data, Mapping) and isinstance(data.get("containers"), list):
                return _docker_replicas(request)
            if isinstance(data, Mapping) and isinstance(data.get("replicas"), list):
                return _slurm_replicas(data)
    except Exception:  # noqa: BLE001 - a repr must never raise; fall back to the generic rendering
        return None
    return None


def dryrun_json(info: Any) -> Dict[str, Any]:
    """The dry run as JSON: scheduler, app name, resolved cfg and the request (secrets masked)."""
    request = info.request
    try:
        body = request.to_json() if callable(getattr(request, "to_json", None)) else request
    except Exception:  # noqa: BLE001
        body = repr(request)
    app = info.app
    return {
        "scheduler": info.scheduler,
        "app": app.name if app is not None else None,
        "cfg": mask_tree(dict(info.cfg)),
        "request": mask_tree(body),
    }


def _rows(rep: Replica) -> List[Tuple[str, str]]:
    rows = []
    if rep.get("name"):
        rows.append(("name", esc(rep["name"])))
    if rep.get("image"):
        rows.append(("image", code(rep["image"])))
    if rep.get("command") and rep.get("image"):
        rows.append(("command", code(rep["command"])))
    if rep.get("argv"):
        rows.append(("argv" if not rep.get("image") else "docker run", code(rep["argv"])))
    if rep.get("cwd"):
        rows.append(("cwd", code(rep["cwd"])))
    env = rep.get("env") or {}
    if env:
        lines = "<br>".join(f"{esc(k)}={esc(v)}" for k, v in env.items()) if isinstance(env, Mapping) else esc(env)
        rows.append(("env", f"<details open><summary>{len(env)} vars</summary>{lines}</details>"))
    for key in ("logs", "mounts"):
        if rep.get(key):
            rows.append((key, "<br>".join(code(x) for x in rep[key])))
    if rep.get("limits"):
        rows.append(("limits", "<br>".join(f"{esc(k)}={esc(v)}" for k, v in rep["limits"].items())))
    return rows


def dryrun_html(info: Any) -> str:
    """One small table per replica, headed by the replica's label."""
    app = info.app
    head = (
        f'<div class="jsched-dryrun"><b>dry run</b> of {esc(app.name if app else "?")} on '
        f"{code(info.scheduler or '?')} &middot; nothing was started"
    )
    reps = replicas(info)
    if reps is None:
        body = f'<pre style="white-space:pre-wrap">{esc(dryrun_text(info))}</pre>'
    else:
        body = "".join(
            f'<div style="margin-top:6px"><b>{esc(r["label"])}</b>{table(("", ""), _rows(r), raw=True)}</div>'
            for r in reps
        )
    cfg = ", ".join(f"{k}={v!r}" for k, v in mask_tree(dict(info.cfg)).items() if v not in (None, "", [], {}))
    cfg_html = f'<div style="font-size:12px;opacity:0.8">cfg: {esc(cfg)}</div>' if cfg else ""
    notes = "".join(f'<div style="font-size:12px">{esc(k)}: {code(v)}</div>' for k, v in _notes(info))
    return head + cfg_html + notes + body + "</div>"


def _notes(info: Any) -> List[Tuple[str, str]]:
    """App-wide lines of a request that has them (Slurm: how it is submitted and whether it fits)."""
    try:
        data = info.request.to_json() if callable(getattr(info.request, "to_json", None)) else None
    except Exception:  # noqa: BLE001 - a repr must never raise
        return []
    if not isinstance(data, Mapping) or not isinstance(data.get("replicas"), list):
        return []
    return [(k, mask_shell_text(str(data[k]))) for k in ("submit", "capacity") if data.get(k)]


def dryrun_text(info: Any) -> str:
    """Plain text: one block per replica (the backend's own repr when the shape is unknown)."""
    reps = replicas(info)
    app = info.app
    out = [f"dry run of {app.name if app else '?'} on {info.scheduler or '?'} (nothing was started)"]
    out.extend(f"  {k}: {v}" for k, v in _notes(info))
    if reps is None:
        out.append(mask_lines(repr(info)))
        return "\n".join(out)
    for r in reps:
        out.append(f"  {r['label']}:")
        for key in ("name", "image", "command", "argv", "cwd"):
            if r.get(key):
                out.append(f"    {key}: {r[key]}")
        env = r.get("env") or {}
        if isinstance(env, Mapping):
            out.extend(f"    env:  {k}={v}" for k, v in env.items())
        for key in ("logs", "mounts"):
            out.extend(f"    {key[:-1]}:  {x}" for x in r.get(key) or [])
        out.extend(f"    limit: {k}={v}" for k, v in (r.get("limits") or {}).items())
    return "\n".join(out)


DRYRUN_MIME = "application/vnd.jupyter-sched.dryrun+json"


def dryrun_bundle(info: Any) -> Dict[str, Any]:
    """The extra entry of a dry run's display bundle (the formatters add text/plain and text/html)."""
    return {DRYRUN_MIME: dryrun_json(info)}


def dumps(info: Any) -> str:
    return json.dumps(dryrun_json(info), indent=2, default=str)
