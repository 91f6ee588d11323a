"""Mounts (bind, named volume, device) and the docker-like token syntax that describes them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from typing import Dict, List, Optional, Union


class MountType(str, Enum):
    BIND = "bind"
    VOLUME = "volume"
    DEVICE = "device"

    def __str__(self) -> str:
        return self.value


@dataclass
class BindMount:
    """A host path mounted into the replica's filesystem."""

    src_path: str
    dst_path: str
    read_only: bool = False


@dataclass
class VolumeMount:
    """A named volume (created by the backend if missing) mounted at ``dst_path``."""

    src: str
    dst_path: str
    read_only: bool = False


@dataclass
class DeviceMount:
    """A host device made available to the replica; ``permissions`` uses the letters ``rwm``."""

    src_path: str
    dst_path: str
    permissions: str = "rwm"


Mount = Union[BindMount, VolumeMount, DeviceMount]

_KEY_ALIASES: Dict[str, str] = {
    "type": "type",
    "src": "src",
    "source": "src",
    "dst": "dst",
    "destination": "dst",
    "target": "dst",
    "readonly": "readonly",
    "read_only": "readonly",
    "perm": "perm",
    "permissions": "perm",
}
_FLAGS = {"readonly"}
_SYNTAX = (
    "type=bind,src=<host path>,dst=<container path>[,readonly] | "
    "type=volume,src=<name>,dst=<container path>[,readonly] | "
    "type=device,src=<host path>[,dst=<container path>][,perm=rwm]"
)


def parse_mounts(opts: List[str]) -> List[Mount]:
    """Parses docker-like mount tokens into mounts.

    Each token is ``key=value`` or a bare flag (``readonly``); every ``type=`` starts a new mount, so
    ``["type=bind", "src=/a", "dst=/b", "readonly", "type=volume", "src=v", "dst=/v"]`` is two mounts.
    A token may also hold a whole comma-joined mount (``"type=bind,src=/a,dst=/b"``), which is how list
    arguments reach components. Errors name the bad token and show the syntax.
    """
    tokens: List[str] = []
    for opt in opts:
        tokens.extend(t.strip() for t in opt.split(",") if t.strip())

    groups: List[Dict[str, Optional[str]]] = []
    for token in tokens:
        key, sep, value = token.partition("=")
        key = key.strip().lower()
        if key not in _KEY_ALIASES:
            raise KeyError(
                f"unknown mount option {key}, must be one of {sorted(set(_KEY_ALIASES))} (in {token!r})."
                f" Syntax: {_SYNTAX}"
            )
        canon = _KEY_ALIASES[key]
        if canon == "type":
            groups.append({})
        elif not groups:
            raise KeyError(f"type must be specified first (got {token!r}). Syntax: {_SYNTAX}")
        if canon in _FLAGS:
            if sep and value.strip().lower() not in ("true", "1", ""):
                raise ValueError(f"mount flag {key!r} takes no value (got {token!r}); write just `{key}`")
            groups[-1][canon] = "true"
        else:
            if not sep or not value.strip():
                raise ValueError(f"mount option {key!r} needs a value, e.g. {key}=...  (got {token!r})")
            groups[-1][canon] = value.strip()

    return [_build(group) for group in groups]


def _build(group: Dict[str, Optional[str]]) -> Mount:
    kind = group.get("type")
    try:
        mtype = MountType(kind)
    except ValueError:
        raise ValueError(
            f"invalid mount type {kind!r}, must be one of {[t.value for t in MountType]}. Syntax: {_SYNTAX}"
        ) from None
    src = group.get("src")
    dst = group.get("dst")
    read_only = group.get("readonly") == "true"
    if not src:
        raise KeyError(f"{mtype.value} mount needs src=...  Syntax: {_SYNTAX}")
    if mtype is MountType.BIND:
        if not dst:
            raise KeyError(f"bind mount of {src!r} needs dst=<container path>")
        return BindMount(src_path=os.path.expanduser(src), dst_path=dst, read_only=read_only)
    if mtype is MountType.VOLUME:
        if not dst:
            raise KeyError(f"volume mount of {src!r} needs dst=<container path>")
        return VolumeMount(src=src, dst_path=dst, read_only=read_only)
    perm = group.get("perm") or "rwm"
    if not perm or set(perm) - set("rwm"):
        raise ValueError(f"device permissions {perm!r} must use only the letters r, w and m (e.g. perm=rw)")
    return DeviceMount(src_path=src, dst_path=dst or src, permissions=perm)
