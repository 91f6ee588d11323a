"""Named resources for AWS EC2 instance types (``aws_p4d.24xlarge``, ``aws_t3.medium``, ...).

TorchX ships this module (``specs.named_resources_aws``); code written for it asks for
``resource(h="aws_p3.2xlarge")`` or imports ``aws_p3_2xlarge`` and gets a whole instance. The numbers are
AWS's published instance facts (vCPUs, memory in GiB, accelerators, EFA network interfaces), kept as one
table below rather than one hand-written function per type, so a new type is one line. Each Resource
also carries the Kubernetes well-known label ``node.kubernetes.io/instance-type`` as a capability, so a
Kubernetes scheduler can pin the replica to that instance type.

Devices use the resource names of AWS's Kubernetes device plugins: ``vpc.amazonaws.com/efa`` (Elastic
Fabric Adapter interfaces) and ``aws.amazon.com/neurondevice`` (Trainium/Inferentia chips). EFA devices
are requested only on the instance families built for multi-node training (p3dn, p4d/p4de, p5, trn1);
a cluster without the EFA plugin could not place a replica that asks for one. ``memMB`` is the instance's
whole memory: leave headroom for the system yourself where a scheduler needs it.
"""

from __future__ import annotations

from typing import Callable, Dict, Mapping, NamedTuple

from jupyter_sched.specs.request.resources import Resource

GiB: int = 1024
#: Kubernetes' well-known node label holding the EC2 instance type.
K8S_ITYPE: str = "node.kubernetes.io/instance-type"
#: Resource name of the AWS EFA Kubernetes device plugin.
EFA_DEVICE: str = "vpc.amazonaws.com/efa"
#: Resource name of the AWS Neuron Kubernetes device plugin (one Trainium or Inferentia chip).
NEURON_DEVICE: str = "aws.amazon.com/neurondevice"


class Instance(NamedTuple):
    """One EC2 instance type: vCPUs, memory (GiB), GPUs, EFA interfaces used, Neuron chips."""

    vcpu: int
    mem_gib: int
    gpu: int = 0
    efa: int = 0
    neuron: int = 0


INSTANCES: Mapping[str, Instance] = {
    # general purpose
    "t3.medium": Instance(2, 4),
    "t3.large": Instance(2, 8),
    "t3.xlarge": Instance(4, 16),
    "t3.2xlarge": Instance(8, 32),
    "m5.large": Instance(2, 8),
    "m5.xlarge": Instance(4, 16),
    "m5.2xlarge": Instance(8, 32),
    "m5.4xlarge": Instance(16, 64),
    "m5.8xlarge": Instance(32, 128),
    "m5.12xlarge": Instance(48, 192),
    "m5.16xlarge": Instance(64, 256),
    "m5.24xlarge": Instance(96, 384),
    # NVIDIA V100
    "p3.2xlarge": Instance(8, 61, gpu=1),
    "p3.8xlarge": Instance(32, 244, gpu=4),
    "p3.16xlarge": Instance(64, 488, gpu=8),
    "p3dn.24xlarge": Instance(96, 768, gpu=8, efa=1),
    # NVIDIA A100 (p4de: the 80 GB A100)
    "p4d.24xlarge": Instance(96, 1152, gpu=8, efa=4),
    "p4de.24xlarge": Instance(96, 1152, gpu=8, efa=4),
    # NVIDIA H100
    "p5.48xlarge": Instance(192, 2048, gpu=8, efa=32),
    # NVIDIA T4
    "g4dn.xlarge": Instance(4, 16, gpu=1),
    "g4dn.2xlarge": Instance(8, 32, gpu=1),
    "g4dn.4xlarge": Instance(16, 64, gpu=1),
    "g4dn.8xlarge": Instance(32, 128, gpu=1),
    "g4dn.16xlarge": Instance(64, 256, gpu=1),
    "g4dn.12xlarge": Instance(48, 192, gpu=4),
    "g4dn.metal": Instance(96, 384, gpu=8),
    # NVIDIA A10G
    "g5.xlarge": Instance(4, 16, gpu=1),
    "g5.2xlarge": Instance(8, 32, gpu=1),
    "g5.4xlarge": Instance(16, 64, gpu=1),
    "g5.8xlarge": Instance(32, 128, gpu=1),
    "g5.16xlarge": Instance(64, 256, gpu=1),
    "g5.12xlarge": Instance(48, 192, gpu=4),
    "g5.24xlarge": Instance(96, 384, gpu=4),
    "g5.48xlarge": Instance(192, 768, gpu=8),
    # AWS Trainium
    "trn1.2xlarge": Instance(8, 32, neuron=1),
    "trn1.32xlarge": Instance(128, 512, efa=8, neuron=16),
}


def instance_resource(instance_type: str) -> Resource:
    """A fresh Resource for the EC2 ``instance_type`` (a key of :data:`INSTANCES`)."""
    facts = INSTANCES[instance_type]
    devices: Dict[str, int] = {}
    if facts.efa:
        devices[EFA_DEVICE] = facts.efa
    if facts.neuron:
        devices[NEURON_DEVICE] = facts.neuron
    return Resource(
        cpu=facts.vcpu,
        gpu=facts.gpu,
        memMB=facts.mem_gib * GiB,
        capabilities={K8S_ITYPE: instance_type},
        devices=devices,
    )


def _factory(instance_type: str) -> Callable[[], Resource]:
    def make() -> Resource:
        return instance_resource(instance_type)

    make.__name__ = make.__qualname__ = "aws_" + instance_type.replace(".", "_").replace("-", "_")
    make.__doc__ = f"A whole EC2 {instance_type} instance."
    return make


#: ``aws_<instance type>`` -> zero-argument function returning that instance's Resource.
NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = {f"aws_{itype}": _factory(itype) for itype in INSTANCES}

# one module-level function per type, as TorchX names them: aws_p3_2xlarge(), aws_g4dn_metal(), ...
globals().update({make.__name__: make for make in NAMED_RESOURCES.values()})

__all__ = [
    "EFA_DEVICE",
    "GiB",
    "INSTANCES",
    "Instance",
    "K8S_ITYPE",
    "NAMED_RESOURCES",
    "NEURON_DEVICE",
    "instance_resource",
] + [make.__name__ for make in NAMED_RESOURCES.values()]
