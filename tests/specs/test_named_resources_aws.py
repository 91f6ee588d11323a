"""AWS instance types as named resources: the published facts, the device-plugin names, the registry."""

from __future__ import annotations

import pytest

from jupyter_sched.specs import get_named_resources, named_resources, resource
from jupyter_sched.specs import named_resources_aws as aws


@pytest.mark.parametrize(
    "name, cpu, gpu, mem_gib, devices",
    [
        ("aws_t3.medium", 2, 0, 4, {}),
        ("aws_m5.24xlarge", 96, 0, 384, {}),
        ("aws_p3.2xlarge", 8, 1, 61, {}),
        ("aws_p3dn.24xlarge", 96, 8, 768, {aws.EFA_DEVICE: 1}),
        ("aws_p4de.24xlarge", 96, 8, 1152, {aws.EFA_DEVICE: 4}),
        ("aws_p5.48xlarge", 192, 8, 2048, {aws.EFA_DEVICE: 32}),
        ("aws_g4dn.metal", 96, 8, 384, {}),
        ("aws_g5.48xlarge", 192, 8, 768, {}),
        ("aws_trn1.2xlarge", 8, 0, 32, {aws.NEURON_DEVICE: 1}),
        ("aws_trn1.32xlarge", 128, 0, 512, {aws.EFA_DEVICE: 8, aws.NEURON_DEVICE: 16}),
    ],
)
def test_instance_facts_through_every_lookup(name: str, cpu: int, gpu: int, mem_gib: int, devices: dict) -> None:
    res = get_named_resources(name)
    assert (res.cpu, res.gpu, res.memMB, res.devices) == (cpu, gpu, mem_gib * 1024, devices)
    assert res.capabilities == {"node.kubernetes.io/instance-type": name[len("aws_") :]}
    assert resource(h=name) == res == named_resources[name]
    # the module-level function TorchX code imports: aws_p3dn_24xlarge() for "aws_p3dn.24xlarge"
    function = getattr(aws, name.replace(".", "_"))
    assert function() == res and function.__name__ in aws.__all__


def test_device_plugin_resource_names() -> None:
    assert aws.EFA_DEVICE == "vpc.amazonaws.com/efa"
    assert aws.NEURON_DEVICE == "aws.amazon.com/neurondevice"


def test_each_lookup_is_a_fresh_copy() -> None:
    first = get_named_resources("aws_p4d.24xlarge")
    first.devices[aws.EFA_DEVICE] = 0
    first.capabilities.clear()
    again = get_named_resources("aws_p4d.24xlarge")
    assert again.devices == {aws.EFA_DEVICE: 4} and again.capabilities


def test_generic_names_stay_and_every_aws_entry_is_registered() -> None:
    assert "gpu.small" in named_resources and "aws_g5.xlarge" in named_resources
    assert set(aws.NAMED_RESOURCES) <= set(named_resources)
    assert len(aws.NAMED_RESOURCES) == len(aws.INSTANCES)
    with pytest.raises(KeyError, match="aws_p3.2xlarge"):
        get_named_resources("aws_p3.2xlarg")  # the close match is suggested
