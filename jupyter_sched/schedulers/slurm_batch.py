"""An AppDef as one Slurm batch script, and the check that the cluster can run it at all.

The mapping (see docs/slurm.md):

* One AppDef is one ``sbatch`` job; its Slurm job id is the app id.
* Each replica of each role is one component of a heterogeneous job (``#SBATCH hetjob`` between them), one
  task on a node of its own: ``--nodes=1 --ntasks=1 --cpus-per-task=<cpu> --mem=<memMB> --gres=gpu:<gpu>``.
  A single-replica app is a plain job. Components never share a node, so an app needs as many nodes as it
  has replicas; :func:`check_fit` refuses an app the partition cannot hold instead of letting Slurm keep it
  pending forever.
* One ``srun`` starts every replica (``:`` between the het groups); with ``kill_on_bad_exit`` a failing
  replica stops the others. Each replica runs under ``slurm_replica.py``, which writes its stdout, stderr
  and combined logs (with time indexes) into ``<app_dir>/<role>/<k>/``.
* ``max_retries`` requeues the whole job (``scontrol requeue``) while ``SLURM_RESTART_COUNT`` is below the
  largest ``max_retries`` of the app's roles.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.schedulers.api import role_summary
from jupyter_sched.schedulers.slurm_cli import Node, Partition, time_minutes
from jupyter_sched.schedulers.slurm_opts import sbatch_extra
from jupyter_sched.specs import AppDef, CfgVal, DryRunView, InvalidAppError, ReplicaPlan, Role, macros
from jupyter_sched.specs.names import safe_name

RANK0_ENV = "TORCHX_RANK0_HOST"  # TorchX's name, so code written for TorchX finds rank 0
ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"
SCRIPT_NAME = "job.sbatch"
WRAPPER_NAME = "slurm_replica.py"
BATCH_LOG = "batch.out"
SRUN_LOG = "srun.log"  # what srun and the wrapper itself print about a replica (not its output)
MANIFEST = "job.json"
LOG_FILES = ("stdout.log", "stderr.log", "combined.log")

# ${app_id} is the Slurm job id, known only once the job runs: it is rendered as "$SLURM_JOB_ID".
_APP_ID_MARK = "\x00app_id\x00"
_JOB_ID_SHELL = '"$SLURM_JOB_ID"'


def shell_word(text: str) -> str:
    """``text`` quoted for bash, with every ``${app_id}`` (already replaced by a marker) expanding to the
    job id at run time."""
    parts = text.split(_APP_ID_MARK)
    if len(parts) == 1:
        return shlex.quote(text)
    out = []
    for i, part in enumerate(parts):
        if i:
            out.append(_JOB_ID_SHELL)
        if part:
            out.append(shlex.quote(part))
    return "".join(out)


def _readable(text: str) -> str:
    return text.replace(_APP_ID_MARK, "${SLURM_JOB_ID}")


def _opt(flag: str, value: Any) -> str:
    value = str(value)
    if value == "":
        return flag
    return f"{flag}={shlex.quote(value)}"


@dataclass
class SlurmReplica:
    """One replica: a het-job component (``offset``) and its group on the ``srun`` line."""

    role: str
    replica_id: int
    offset: int
    dir: str
    cpu: int
    gpu: int
    memMB: int
    sbatch_opts: List[str]
    srun_opts: List[str]
    command: List[str]  # shell words, quoted: python3 slurm_replica.py DIR -C CWD -e K=V... -- entrypoint args...
    env: Dict[str, str]

    @property
    def name(self) -> str:
        return f"{self.role}[{self.replica_id}]"

    def to_json(self) -> Dict[str, Any]:
        return {
            "role": self.role,
            "replica_id": self.replica_id,
            "component": self.offset,
            "resources": {"cpu": self.cpu, "gpu": self.gpu, "memMB": self.memMB},
            "sbatch": list(self.sbatch_opts),
            "srun": list(self.srun_opts),
            "command": " ".join(self.command),
            "env": {k: _readable(v) for k, v in self.env.items()},
            "logs": {name[: -len(".log")]: os.path.join(self.dir, name) for name in LOG_FILES},
        }


@dataclass
class SlurmBatchRequest:
    """What ``schedule`` writes into ``app_dir`` and submits with ``sbatch --parsable``."""

    app_name: str
    session: str
    app_dir: str
    cwd: str
    job_opts: List[str]
    replicas: List[SlurmReplica]
    max_retries: int
    kill_on_bad_exit: bool
    python: str
    roles: List[Dict[str, Any]] = field(default_factory=list)
    capacity: str = "not checked"
    capacity_checked: bool = False
    partition: Optional[str] = None

    @property
    def script_path(self) -> str:
        return os.path.join(self.app_dir, SCRIPT_NAME)

    @property
    def sbatch_cmd(self) -> List[str]:
        return ["sbatch", "--parsable", self.script_path]

    @property
    def heterogeneous(self) -> bool:
        return len(self.replicas) > 1

    @property
    def script(self) -> str:
        return render_script(self)

    def to_json(self) -> Dict[str, Any]:
        """The request as plain data (for a table in the notebook, or ``json.dumps``)."""
        return {
            "app_name": self.app_name,
            "session": self.session,
            "app_dir": self.app_dir,
            "cwd": self.cwd,
            "submit": " ".join(shlex.quote(a) for a in self.sbatch_cmd),
            "job_options": list(self.job_opts),
            "max_retries": self.max_retries,
            "kill_on_bad_exit": self.kill_on_bad_exit,
            "capacity": self.capacity,
            "replicas": [r.to_json() for r in self.replicas],
            "script": self.script,
        }

    def dryrun_view(self) -> DryRunView:
        """The request in neutral terms (see ``specs.dryrun``): per replica the command its het-job component
        runs (the log wrapper, then the program), how the job is submitted, whether it fits, and the script."""
        plans = []
        for r in self.replicas:
            data = r.to_json()
            cwd = next((o.split("=", 1)[1] for o in r.srun_opts if o.startswith("--chdir=")), self.cwd)
            limits = {k: str(v) for k, v in data["resources"].items()}
            limits["sbatch"] = " ".join(r.sbatch_opts)
            try:
                argv = shlex.split(data["command"])
            except ValueError:  # quoting only a shell reads; the shell line below is exact anyway
                argv = list(r.command)
            plans.append(ReplicaPlan(
                role=r.role, replica_id=r.replica_id, argv=argv, shell=data["command"],
                env=data["env"], cwd=cwd, limits=limits, logs=list(data["logs"].values()),
            ))  # fmt: skip
        submit = " ".join(shlex.quote(a) for a in self.sbatch_cmd)
        notes = [("submit", submit), ("capacity", self.capacity)]
        return DryRunView(plans, notes=notes, sections=[("batch script", self.script)])

    def __repr__(self) -> str:
        kind = f"{len(self.replicas)} het-job components" if self.heterogeneous else "a single job"
        head = [
            f"SlurmBatchRequest(app={self.app_name}, session={self.session}: "
            f"{len(self.replicas)} replica(s) as {kind})",
            f"  submit:   {' '.join(shlex.quote(a) for a in self.sbatch_cmd)}",
            f"  app_dir:  {self.app_dir}  (script, batch.out, <role>/<k>/{{stdout,stderr,combined}}.log)",
            f"  capacity: {self.capacity}",
            "  script:",
        ]
        return "\n".join(head + ["    " + line if line else "" for line in self.script.splitlines()])


def render_script(req: SlurmBatchRequest) -> str:
    """The batch script: one ``#SBATCH`` option per line (a ``#SBATCH hetjob`` line between components), then
    one ``srun`` whose groups and options are on lines of their own."""
    wrapper_src = os.path.join(os.path.dirname(os.path.abspath(__file__)), WRAPPER_NAME)
    app_dir = shlex.quote(req.app_dir)
    lines = [
        "#!/bin/bash",
        f"# jupyter_sched app {req.app_name!r} (session {req.session!r}): {len(req.replicas)} replica(s),"
        + (" one het-job component each." if req.heterogeneous else " a plain job."),
        f"# jupyter_sched submits it as {shlex.quote(req.script_path)}, with the replicas' log wrapper beside it.",
        "# To submit it yourself, put the wrapper there first:",
        f"#   umask 077 && mkdir -p {app_dir} && cp {shlex.quote(wrapper_src)} {app_dir}/"
        " && sbatch --parsable THIS_FILE",
    ]
    for rep in req.replicas:
        if rep.offset:
            lines.append("#SBATCH hetjob")
        opts = rep.sbatch_opts + (req.job_opts if rep.offset == 0 else [])
        lines += ["#SBATCH " + opt for opt in opts]
    lines += [
        "",
        "# What the job writes (logs, srun messages) is for its owner only.",
        "umask 077",
        "# srun writes each replica's own messages into <role>/<k>/srun.log: its directory must exist.",
        "mkdir -p " + " ".join(shlex.quote(rep.dir) for rep in req.replicas),
        "# Replicas find the rank-0 node's address in $" + RANK0_ENV + ".",
        'rank0_node=$(scontrol show hostnames "${SLURM_JOB_NODELIST_HET_GROUP_0:-$SLURM_JOB_NODELIST}" | head -n 1)',
        f"{RANK0_ENV}=$(scontrol show node \"$rank0_node\" 2>/dev/null | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')",
        f'export {RANK0_ENV}="${{{RANK0_ENV}:-$rank0_node}}"',
        "export PYTHONUNBUFFERED=1",
        'echo "jupyter_sched: job $SLURM_JOB_ID attempt ${SLURM_RESTART_COUNT:-0} on $SLURM_JOB_NODELIST'
        f' (rank 0: ${RANK0_ENV})"',
        "",
    ]
    groups = []
    for rep in req.replicas:
        words = rep.srun_opts + rep.command
        # the options, then the wrapper and its replica dir, each -e, and the command: each on a line of its own
        parts, i = [" ".join(rep.srun_opts)], len(rep.srun_opts)
        sep = words.index("--", i)
        head = words[i:sep]
        parts.append(" ".join(head[:3]))
        parts += [" ".join(head[j : j + 2]) for j in range(3, len(head), 2)]
        parts.append(" ".join(words[sep:]))
        groups.append(" \\\n    ".join(p for p in parts if p))
    lines.append("srun " + " \\\n  : ".join(groups))
    lines.append("rc=$?")
    if req.max_retries > 0:
        lines += [
            f'if [ "$rc" -ne 0 ] && [ "${{SLURM_RESTART_COUNT:-0}}" -lt {req.max_retries} ]; then',
            '    echo "jupyter_sched: attempt ${SLURM_RESTART_COUNT:-0} failed (exit $rc): requeueing" >&2',
            '    scontrol requeue "$SLURM_JOB_ID"',
            "fi",
        ]
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"


# -- building the request ------------------------------------------------------------------------------------------

_COMPONENT_CFG = (("partition", "--partition"), ("time", "--time"), ("qos", "--qos"), ("constraint", "--constraint"),
                  ("account", "--account"))  # fmt: skip
_JOB_CFG = (("mail_user", "--mail-user"), ("mail_type", "--mail-type"), ("comment", "--comment"))


def build_request(app: AppDef, cfg: Mapping[str, CfgVal], session: str, app_dir: str, cwd: str) -> SlurmBatchRequest:
    """The batch request for ``app`` (already validated, a copy we may change)."""
    python = str(cfg.get("python") or "python3")
    wrapper = os.path.join(app_dir, WRAPPER_NAME)
    kill = bool(cfg.get("kill_on_bad_exit", True))
    extra = sbatch_extra(cfg)
    component_cfg = [_opt(flag, cfg[key]) for key, flag in _COMPONENT_CFG if cfg.get(key)]
    component_cfg += [_opt("--" + k.lstrip("-"), v) for k, v in extra.items()]
    max_retries = max(r.max_retries for r in app.roles)
    replicas: List[SlurmReplica] = []
    heterogeneous = sum(r.num_replicas for r in app.roles) > 1
    offset = 0
    for role in app.roles:
        for k in range(role.num_replicas):
            values = macros.Values(img_root=cwd, app_id=_APP_ID_MARK, replica_id=str(k), rank0_env=RANK0_ENV)
            r = values.apply(role)
            rep_dir = os.path.join(app_dir, safe_name(role.name, "role"), str(k))
            res = role.resource
            sbatch = [f"--job-name={safe_name(app.name)}:{safe_name(role.name, 'role')}:{k}", "--nodes=1", "--ntasks=1"]
            if res.cpu > 0:
                sbatch.append(f"--cpus-per-task={res.cpu}")
            if res.memMB > 0:
                sbatch.append(f"--mem={res.memMB}")
            if res.gpu > 0:
                sbatch.append(f"--gres=gpu:{res.gpu}")
            sbatch += component_cfg
            srun = [f"--het-group={offset}"] if heterogeneous else []
            srun += [_opt("--chdir", cwd), _opt("--output", os.path.join(rep_dir, SRUN_LOG)), "--open-mode=append"]
            if res.cpu > 0:
                srun.append(f"--cpus-per-task={res.cpu}")
            if kill:
                srun.append("--kill-on-bad-exit=1")
            env = dict(r.env)
            env.setdefault(ERROR_FILE_ENV, os.path.join(rep_dir, "error.json"))
            # the same identity variables as the local and docker backends
            env["JUPYTER_SCHED_APP_ID"] = _APP_ID_MARK
            env["JUPYTER_SCHED_ROLE_NAME"] = role.name
            env["JUPYTER_SCHED_REPLICA_ID"] = str(k)
            command = [shlex.quote(python), shlex.quote(wrapper), shlex.quote(rep_dir), "-C", shlex.quote(cwd)]
            for key, value in env.items():
                command += ["-e", shell_word(f"{key}={value}")]
            command += ["--", shlex.quote(r.entrypoint)] + [shell_word(a) for a in r.args]
            replicas.append(
                SlurmReplica(role.name, k, offset, rep_dir, res.cpu, res.gpu, res.memMB, sbatch, srun, command, env)
            )
            offset += 1
    job_opts = [
        _opt("--chdir", app_dir),
        _opt("--output", os.path.join(app_dir, BATCH_LOG)),
        "--open-mode=append",
        "--requeue" if max_retries > 0 else "--no-requeue",
    ] + [_opt(flag, cfg[key]) for key, flag in _JOB_CFG if cfg.get(key)]
    return SlurmBatchRequest(
        app_name=app.name,
        session=session,
        app_dir=app_dir,
        cwd=cwd,
        job_opts=job_opts,
        replicas=replicas,
        max_retries=max_retries,
        kill_on_bad_exit=kill,
        python=python,
        roles=[role_summary(r) for r in app.roles],
        partition=str(cfg["partition"]) if cfg.get("partition") else None,
    )


# -- does the app fit the cluster? ---------------------------------------------------------------------------------


def _required_features(constraint: Optional[str]) -> Optional[List[frozenset]]:
    """Simple constraints as alternatives of feature sets: ``a&b`` -> [{a, b}], ``a|b`` -> [{a}, {b}].
    None (no filtering) for anything more complex (brackets, counts, ``,``)."""
    if not constraint:
        return None
    if not re.fullmatch(r"[\w.-]+(?:[&|][\w.-]+)*", constraint):
        return None
    if "&" in constraint and "|" in constraint:
        return None
    if "|" in constraint:
        return [frozenset([f]) for f in constraint.split("|")]
    return [frozenset(constraint.split("&"))]


def _fits(node: Node, cpu: int, mem: int, gpu: int, features: Optional[List[frozenset]]) -> bool:
    if cpu > node.cpus or mem > node.memMB or gpu > node.gpus:
        return False
    return features is None or any(f <= node.features for f in features)


def check_fit(
    app: AppDef, parts: Mapping[str, Partition], partition: Optional[str], constraint: Optional[str],
    time_limit: Optional[str] = None,
) -> str:  # fmt: skip
    """Raises InvalidAppError if no placement of one replica per node exists in the partition, or if the
    ``time`` asked for exceeds the partition's MaxTime (Slurm would leave either pending forever); returns a
    one-line summary of what was checked."""
    if partition:
        part = parts.get(partition)
        if part is None:
            raise InvalidAppError(
                "cfg.partition",
                f"partition {partition!r} does not exist on this cluster",
                f"Use one of: {', '.join(sorted(parts)) or '(none)'}",
            )
    else:
        defaults = [p for p in parts.values() if p.default]
        if not defaults:
            raise InvalidAppError(
                "cfg.partition",
                "this cluster has no default partition",
                f"Set the run option partition to one of: {', '.join(sorted(parts)) or '(none)'}",
            )
        part = defaults[0]
    nodes = part.nodes
    total = sum(r.num_replicas for r in app.roles)
    where = f"partition {part.name!r}"
    asked = time_minutes(time_limit)
    if asked is not None and part.max_minutes is not None and asked > part.max_minutes:
        raise InvalidAppError(
            "cfg.time",
            f"time={time_limit!r} ({asked} min) is more than {where} allows ({part.max_minutes} min);"
            " Slurm would leave the job pending forever (PartitionTimeLimit)",
            f"Set the run option time to at most {part.max_minutes}, or choose a partition with a longer MaxTime",
        )
    if total > len(nodes):
        raise InvalidAppError(
            "roles",
            f"the app has {total} replicas in total and each runs as a het-job component on a node of its own,"
            f" but {where} has {len(nodes)} node(s); Slurm would leave it pending forever",
            f"Use at most {len(nodes)} replicas, or a partition with more nodes",
        )
    features = _required_features(constraint)
    demands = []
    for i, role in enumerate(app.roles):
        res = role.resource
        cpu, mem, gpu = max(res.cpu, 0), max(res.memMB, 0), max(res.gpu, 0)
        ok = [n for n in nodes if _fits(n, cpu, mem, gpu, features)]
        if not ok:
            raise _no_node_error(
                i, role, nodes=nodes, where=where, cpu=cpu, mem=mem, gpu=gpu, features=features, constraint=constraint
            )
        demands.append((role, ok))
    placed = _max_placement(demands)
    if placed < total:
        detail = "; ".join(f"{role.name} x{role.num_replicas} fits on {len(ok)}" for role, ok in demands)
        raise InvalidAppError(
            "roles",
            f"the {total} replicas need {total} distinct nodes they fit on, but at most {placed} can be placed in"
            f" {where} ({detail})",
            "Lower the replicas' resources or their number, or choose another partition",
        )
    cpus = sorted({n.cpus for n in nodes})
    mems = sorted({n.memMB for n in nodes})
    return (
        f"fits {where}: {total} replica(s) on {len(nodes)} node(s) with {'/'.join(map(str, cpus))} CPUs"
        f" and {'/'.join(map(str, mems))} MB each"
    )


def _no_node_error(
    i: int, role: Role, *, nodes: Sequence[Node], where: str, cpu: int, mem: int, gpu: int,
    features: Optional[List[frozenset]], constraint: Optional[str],
) -> InvalidAppError:  # fmt: skip
    most_cpu = max((n.cpus for n in nodes), default=0)
    most_mem = max((n.memMB for n in nodes), default=0)
    most_gpu = max((n.gpus for n in nodes), default=0)
    field_ = f"roles[{i}].resource"
    if not nodes:
        return InvalidAppError("cfg.partition", f"{where} has no nodes", "Choose another partition")
    if cpu > most_cpu:
        return InvalidAppError(
            f"{field_}.cpu",
            f"each replica of role {role.name!r} asks for {cpu} CPUs, but the largest node in {where} has {most_cpu}",
            f"Ask for at most {most_cpu} CPUs per replica (spread the work over more replicas)",
        )
    if mem > most_mem:
        return InvalidAppError(
            f"{field_}.memMB",
            f"each replica of role {role.name!r} asks for {mem} MB, but the largest node in {where} has {most_mem} MB",
            f"Ask for at most {most_mem} MB per replica",
        )
    if gpu > most_gpu:
        return InvalidAppError(
            f"{field_}.gpu",
            f"each replica of role {role.name!r} asks for {gpu} GPU(s), but"
            + (f" the most any node in {where} has is {most_gpu}" if most_gpu else f" no node in {where} has GPUs"),
            "Ask for fewer GPUs, or choose a partition with GPU nodes",
        )
    if features is not None and not any(any(f <= n.features for f in features) for n in nodes):
        known = sorted({f for n in nodes for f in n.features})
        return InvalidAppError(
            "cfg.constraint",
            f"no node in {where} has the features {constraint!r}",
            f"Use features the nodes have: {', '.join(known) or '(none)'}",
        )
    return InvalidAppError(
        field_,
        f"no single node in {where} has {cpu} CPUs, {mem} MB and {gpu} GPU(s) together for role {role.name!r}",
        "Lower one of them",
    )


def _max_placement(demands: List[Tuple[Role, List[Node]]]) -> int:
    """Most replicas placeable on distinct nodes: max flow source -> role (num_replicas) -> node (1) -> sink,
    over groups of nodes that serve the same roles so that it stays tiny on big clusters."""
    # a node belongs to the shape defined by the set of roles it can serve
    serve: Dict[str, frozenset] = {}
    for idx, (_, ok) in enumerate(demands):
        for n in ok:
            serve[n.name] = serve.get(n.name, frozenset()) | {idx}
    groups: Dict[frozenset, int] = {}
    for roles in serve.values():
        groups[roles] = groups.get(roles, 0) + 1
    group_list = list(groups.items())
    # nodes: 0 source, 1..R roles, R+1..R+G groups, last sink
    r_count, g_count = len(demands), len(group_list)
    sink = r_count + g_count + 1
    cap: Dict[Tuple[int, int], int] = {}

    def add(u: int, v: int, c: int) -> None:
        cap[(u, v)] = cap.get((u, v), 0) + c
        cap.setdefault((v, u), 0)

    for idx, (role, _) in enumerate(demands):
        add(0, 1 + idx, role.num_replicas)
    for g, (roles, count) in enumerate(group_list):
        for idx in roles:
            add(1 + idx, 1 + r_count + g, count)
        add(1 + r_count + g, sink, count)
    adj: Dict[int, List[int]] = {}
    for u, v in cap:
        adj.setdefault(u, []).append(v)
    flow = 0
    while True:
        parent = {0: 0}
        queue = [0]
        while queue and sink not in parent:
            u = queue.pop(0)
            for v in adj.get(u, []):
                if v not in parent and cap[(u, v)] > 0:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            return flow
        v, push = sink, None
        while v != 0:
            u = parent[v]
            push = cap[(u, v)] if push is None else min(push, cap[(u, v)])
            v = u
        v = sink
        while v != 0:
            u = parent[v]
            cap[(u, v)] -= push  # type: ignore[operator]
            cap[(v, u)] += push  # type: ignore[operator]
            v = u
        flow += push  # type: ignore[operator]
