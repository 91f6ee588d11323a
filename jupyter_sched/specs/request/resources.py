"""Resources a replica asks for. The table of named resources (``cpu.small``, ``aws_p4d.24xlarge``...) is in
``resource_table``, above the catalogs that fill it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict

GiB: int = 1024


@dataclass
class Resource:
    """What one replica needs: CPUs, GPUs, memory (MB) and free-form capabilities and devices.

    A negative value means "not specified". Backends that can enforce limits (docker, slurm) do; the local
    backend cannot and ignores them, as documented there.
    """

    cpu: int
    gpu: int
    memMB: int
    capabilities: Dict[str, Any] = field(default_factory=dict)
    devices: Dict[str, int] = field(default_factory=dict)

    @staticmethod
    def copy(original: "Resource", **capabilities: Any) -> "Resource":
        """A copy of ``original`` with ``capabilities`` merged into its capabilities."""
        res = copy.deepcopy(original)
        res.capabilities.update(capabilities)
        return res


NULL_RESOURCE: Resource = Resource(cpu=-1, gpu=-1, memMB=-1)
"""The default resource of a Role: nothing requested."""
