"""Our data model <-> TorchX's, field by field, for the TorchX bridge (``-s torchx:<name>``).

The two models have the same shape (that is the point of our interface), but not the same classes: a
TorchX scheduler checks ``isinstance(mount, torchx.specs.BindMount)`` and our runner checks our
``AppState``. So every object crossing the bridge is rebuilt on the other side; enums cross by value.
Pure: no I/O. Imported only when TorchX is installed.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, List, Optional

from torchx import specs as tx
from torchx.schedulers import api as tx_api

import jupyter_sched.specs as ours
from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse, Stream

__all__ = [
    "describe_from_torchx", "list_from_torchx", "role_from_torchx", "runopts_from_torchx", "stream_to_torchx",
    "to_torchx_app",
]  # fmt: skip


def _resource(res: Any, module: Any) -> Any:
    return module.Resource(
        cpu=res.cpu, gpu=res.gpu, memMB=res.memMB, capabilities=dict(res.capabilities), devices=dict(res.devices)
    )


def _mount(mount: Any, module: Any) -> Any:
    for name in ("BindMount", "VolumeMount", "DeviceMount"):
        if type(mount).__name__ == name:
            return getattr(module, name)(**dataclasses.asdict(mount))
    raise TypeError(f"unsupported mount {mount!r}; use BindMount, VolumeMount or DeviceMount")


def _role(role: Any, module: Any) -> Any:
    return module.Role(
        name=role.name,
        image=role.image,
        min_replicas=role.min_replicas,
        base_image=role.base_image,
        entrypoint=role.entrypoint,
        args=list(role.args),
        env=dict(role.env),
        num_replicas=role.num_replicas,
        max_retries=role.max_retries,
        retry_policy=module.RetryPolicy(str(getattr(role.retry_policy, "value", role.retry_policy))),
        resource=_resource(role.resource, module),
        port_map=dict(role.port_map),
        metadata=dict(role.metadata),
        mounts=[_mount(m, module) for m in role.mounts],
    )


def to_torchx_app(app: ours.AppDef) -> tx.AppDef:
    """Our AppDef as TorchX's (a new object; ``app`` is not touched)."""
    return tx.AppDef(name=app.name, roles=[_role(r, tx) for r in app.roles], metadata=dict(app.metadata))


def role_from_torchx(role: tx.Role) -> ours.Role:
    return _role(role, ours)


def _state(state: Any) -> ours.AppState:
    return ours.AppState(int(state))


def _text(value: Any) -> str:
    """A backend's message as text: an enum (Ray's ``JobStatus.SUCCEEDED``) by its value."""
    if value is None:
        return ""
    return str(value.value) if isinstance(value, Enum) else str(value)


def describe_from_torchx(resp: Optional[tx_api.DescribeAppResponse]) -> Optional[DescribeAppResponse]:
    if resp is None:
        return None
    return DescribeAppResponse(
        app_id=resp.app_id,
        state=_state(resp.state),
        num_restarts=resp.num_restarts,
        msg=_text(resp.msg),
        structured_error_msg=resp.structured_error_msg,
        ui_url=resp.ui_url,
        roles_statuses=[
            ours.RoleStatus(
                rs.role,
                [
                    ours.ReplicaStatus(r.id, _state(r.state), r.role, r.hostname, r.structured_error_msg)
                    for r in rs.replicas
                ],
            )
            for rs in resp.roles_statuses
        ],
        roles=[role_from_torchx(r) for r in resp.roles],
    )


def list_from_torchx(apps: List[tx_api.ListAppResponse]) -> List[ListAppResponse]:
    return [ListAppResponse(app_id=a.app_id, state=_state(a.state)) for a in apps]


def stream_to_torchx(streams: Optional[Stream]) -> Optional[tx_api.Stream]:
    return None if streams is None else tx_api.Stream(Stream(streams).value)


def runopts_from_torchx(opts: tx.runopts) -> ours.runopts:
    """TorchX's run options as ours (same keys, types, help and defaults). A default our stricter type
    check refuses (TorchX allows ``default=[]`` for a dict option) is dropped rather than the option."""
    out = ours.runopts()
    for key, opt in opts:
        try:
            out.add(key, opt.opt_type, opt.help, default=opt.default, required=opt.is_required)
        except (TypeError, ValueError):
            out.add(key, opt.opt_type, opt.help, required=opt.is_required)
    return out
