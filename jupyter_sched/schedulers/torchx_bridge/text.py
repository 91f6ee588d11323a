"""What the TorchX bridge shows: a dry run's request, readably, and a backend's failure, with a hint.

TorchX's own request objects already print well (the Kubernetes Volcano job and the AWS Batch job
definition as YAML, the Slurm and LSF batch scripts as text), so we show those; an object that would only
print as ``<... object at 0x...>`` is shown as YAML of its fields instead. A failure keeps the backend's
own words (the server's error, or the missing package) and adds what usually fixes it. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

__all__ = ["TorchXBackendError", "backend_error", "render_request"]

_HINTS = {
    "kubernetes": "it needs a reachable Kubernetes cluster with Volcano installed: a kubeconfig"
    " (~/.kube/config or KUBECONFIG) and --cfg queue=NAME",
    "kubernetes_mcad": "it needs a reachable Kubernetes cluster with MCAD installed: a kubeconfig"
    " (~/.kube/config or KUBECONFIG)",
    "aws_batch": "it needs AWS credentials and a region (aws configure, or the AWS_* variables), the boto3"
    " package, and an existing job queue (--cfg queue=NAME)",
    "aws_sagemaker": "it needs AWS credentials and a region, the boto3 and sagemaker packages, and --cfg role=ARN",
    "gcp_batch": "it needs Google Cloud credentials (gcloud auth application-default login), a project and"
    " the google-cloud-batch package",
    "ray": "it needs the ray package and a Ray cluster's dashboard (--cfg dashboard_address=HOST:8265)",
    "lsf": "it needs LSF's bsub and bjobs on PATH",
    "slurm": "it needs Slurm's sbatch and sacct on PATH (or use our own -s slurm)",
    "local_docker": "it needs a Docker engine (bash scripts/setup/docker.sh starts one)",
}


class TorchXBackendError(RuntimeError):
    """A TorchX backend failed (no server, no credentials, a missing package); the message keeps its words."""


def backend_error(name: str, action: str, error: BaseException, warned: Sequence[str] = ()) -> TorchXBackendError:
    """The error for a failed call: the exception's own words, what the backend warned on the way (e.g.
    why it could not load its configuration), and the hint for that backend."""
    hint = _HINTS.get(name, f"check that TorchX's {name} scheduler can reach its service")
    said = "".join(f"\n  ({text})" for text in dict.fromkeys(warned))
    return TorchXBackendError(
        f"torchx:{name} could not {action}: {type(error).__name__}: {error}{said}\n"
        f"hint: {hint}. A dry run (--dryrun) needs none of this."
    )


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def render_request(tx_info: Any) -> str:
    """TorchX's dry-run info as text (see the module docstring)."""
    text = str(tx_info)
    if " object at 0x" not in text:
        return text
    import yaml

    return yaml.safe_dump(_plain(tx_info.request), default_flow_style=False, sort_keys=False)
