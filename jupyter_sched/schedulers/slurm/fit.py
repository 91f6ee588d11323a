"""Does an app fit the cluster? The check, before submitting, that a Slurm partition can hold an app at all.

Each replica runs as a het-job component on a node of its own (see :mod:`batch`), so an app needs as
many distinct nodes as it has replicas, each node big enough for its replica's resources and carrying the
features its ``constraint`` asks for, and a ``time`` within the partition's MaxTime. Slurm would keep an app
that fails any of these pending forever; :func:`check_fit` refuses it instead, with the field and the fix.
It is pure: the partitions come from ``sinfo`` (:func:`cli.partitions`), asked by the caller.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.schedulers.slurm.cli import Node, Partition, time_minutes
from jupyter_sched.specs import AppDef, InvalidAppError, Role


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
