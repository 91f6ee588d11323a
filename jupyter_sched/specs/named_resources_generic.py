"""The generic named resources (``cpu.small`` ... ``gpu.xlarge``), under TorchX's module path.

``NAMED_RESOURCES`` maps each name to a zero-argument function returning a fresh :class:`Resource`, the
shape TorchX documents for this table and for ``torchx.named_resources``-style plugins. The sizes are
round numbers for examples and defaults, not any cloud's instance types: register your own for real
machines (entry-point group ``jupyter_sched.named_resources``).
"""

from __future__ import annotations

from typing import Callable, Mapping

from jupyter_sched.specs.request.resources import Resource

GiB: int = 1024

__all__ = ["GiB", "NAMED_RESOURCES"]


def _sized(cpu: int, gpu: int, mem_mb: int) -> Callable[[], Resource]:
    def make() -> Resource:
        return Resource(cpu=cpu, gpu=gpu, memMB=mem_mb)

    return make


NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = {
    "gpu.small": _sized(8, 1, 32 * GiB),
    "gpu.medium": _sized(16, 2, 64 * GiB),
    "gpu.large": _sized(32, 4, 128 * GiB),
    "gpu.xlarge": _sized(64, 8, 256 * GiB),
    "cpu.nano": _sized(1, 0, 512),
    "cpu.micro": _sized(1, 0, 1 * GiB),
    "cpu.small": _sized(1, 0, 2 * GiB),
    "cpu.medium": _sized(2, 0, 4 * GiB),
    "cpu.large": _sized(2, 0, 8 * GiB),
    "cpu.xlarge": _sized(8, 0, 32 * GiB),
}
