"""``Resource.devices`` on the docker backend: named devices -> the host device files a container gets.

TorchX's docker scheduler maps a role's ``resource.devices`` (``{name: count}``) to extra device mounts,
one ``/dev`` file per unit, from a table of names; an unknown name is skipped with a warning. We keep its
names and numbering, add AWS Neuron, and accept a device file itself as a name (``{"/dev/fuse": 1}``), so a
device without a table entry needs no code. Warnings are returned, not printed: the dry run shows them.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Tuple

from jupyter_sched.specs import DeviceMount


def _numbered(prefix: str) -> Callable[[int], List[DeviceMount]]:
    return lambda count: [DeviceMount(src_path=f"{prefix}{i}", dst_path=f"{prefix}{i}") for i in range(count)]


NAMED_DEVICES: Mapping[str, Callable[[int], List[DeviceMount]]] = {
    "vpc.amazonaws.com/efa": _numbered("/dev/infiniband/uverbs"),  # AWS Elastic Fabric Adapter (as TorchX)
    "aws.amazon.com/neurondevice": _numbered("/dev/neuron"),  # AWS Trainium / Inferentia
}


def device_mounts(devices: Dict[str, int], role: str) -> Tuple[List[DeviceMount], List[str]]:
    """The device mounts for ``devices``, and a warning per name that maps to nothing."""
    mounts: List[DeviceMount] = []
    warnings: List[str] = []
    for name, count in devices.items():
        if name.startswith("/dev/"):
            mounts.append(DeviceMount(src_path=name, dst_path=name))
            if count != 1:
                warnings.append(f"role {role}: resource device {name}: a device file is mapped once (count {count})")
        elif name in NAMED_DEVICES:
            mounts.extend(NAMED_DEVICES[name](count))
        else:
            known = ", ".join(sorted(NAMED_DEVICES))
            warnings.append(
                f"role {role}: resource device {name!r} is not known to local_docker and is ignored; use one of"
                f" {known}, or a device file such as /dev/fuse"
            )
    return mounts, warnings
