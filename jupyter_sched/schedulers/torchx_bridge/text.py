"""What the TorchX bridge shows: a dry run's request, readably, and a backend's failure, with a hint.

TorchX's own request objects already print well (the Kubernetes Volcano job and the AWS Batch job
definition as YAML, the Slurm and LSF batch scripts as text), so we show those; an object that would only
print as ``<... object at 0x...>`` is shown as YAML of its fields instead. A failure keeps the backend's
own words (the server's error, or the missing package) and adds what usually fixes it. Pure: no I/O.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Sequence

from jupyter_sched.specs.output.masking import mask_values

__all__ = [
    "DRYRUN_ACTION", "LIST_ACTION", "TorchXBackendError", "backend_error", "masked_copy", "missing_package_hint",
    "render_request",
]  # fmt: skip

DRYRUN_ACTION = "build the request"
LIST_ACTION = "list apps"

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
    "ray": "it needs a running Ray cluster whose dashboard answers: a submit goes to --cfg"
    " dashboard_address=HOST:PORT (default 127.0.0.1:8265), the other calls to the HOST:PORT the app id starts"
    " with; start one on this machine with `ray start --head --dashboard-host 127.0.0.1` (bash scripts/setup/ray.sh)",
    "lsf": "it needs LSF's bsub and bjobs on PATH",
    "slurm": "it needs Slurm's sbatch and sacct on PATH (or use our own -s slurm)",
    "local_docker": "it needs a Docker engine (bash scripts/setup/docker.sh starts one)",
}
_LIST_HINTS = {
    "ray": "TorchX's Ray scheduler lists the jobs of the cluster named by RAY_ADDRESS (list takes no --cfg):"
    " export RAY_ADDRESS=http://127.0.0.1:8265, or the address of your cluster's dashboard",
}
_PACKAGES = {"kubernetes": "kubernetes", "ray": "ray[default]", "boto3": "boto3", "google": "google-cloud-batch"}
_EXTRAS = {"ray": "jupyter_sched[ray]", "kubernetes": "jupyter_sched[torchx]"}


class TorchXBackendError(RuntimeError):
    """A TorchX backend failed (no server, no credentials, a missing package); the message keeps its words."""


def backend_error(name: str, action: str, error: BaseException, warned: Sequence[str] = ()) -> TorchXBackendError:
    """The error for a failed call: the exception's own words, what the backend warned on the way (e.g.
    why it could not load its configuration), and what fixes it: the package to install when one is
    missing (a dry run needs it too), else what the backend's service needs (which a dry run does not)."""
    said = "".join(f"\n  ({text})" for text in dict.fromkeys(warned))
    words = f"torchx:{name} could not {action}: {type(error).__name__}: {error}{said}"
    if isinstance(error, ImportError):
        return TorchXBackendError(f"{words}\nhint: {missing_package_hint(name, error)}")
    if action == DRYRUN_ACTION:  # building a request reaches no service: the words are about the app
        return TorchXBackendError(words)
    hint = (_LIST_HINTS.get(name) if action == LIST_ACTION else None) or _HINTS.get(
        name, f"check that TorchX's {name} scheduler can reach its service"
    )
    return TorchXBackendError(f"{words}\nhint: {hint}. A dry run (--dryrun) needs none of this.")


def missing_package_hint(name: str, error: ImportError) -> str:
    """What to install when TorchX's ``name`` scheduler could not import a package."""
    module = (getattr(error, "name", None) or "").split(".")[0] or name
    package = _PACKAGES.get(module, module)
    extra = _EXTRAS.get(module)
    also = f" (or pip install '{extra}', which pins versions that work with TorchX 0.7)" if extra else ""
    return f"TorchX's {name} scheduler needs the {module} package, also for a dry run: pip install '{package}'{also}"


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


def render_request(tx_info: Any, fmt: Callable[[Any], str], secrets: Sequence[str] = ()) -> str:
    """TorchX's dry-run info as text, ``fmt`` being TorchX's own rendering (see the module docstring),
    with ``secrets`` masked in a copy of the request before it is rendered, so the text keeps TorchX's
    layout and stays what it was (valid YAML stays valid YAML), and masked again in the text."""
    request = masked_copy(tx_info.request, secrets) if secrets else tx_info.request
    text = fmt(request)
    if " object at 0x" in text:
        import yaml

        text = yaml.safe_dump(_plain(request), default_flow_style=False, sort_keys=False)
    return mask_values(text, secrets)


def masked_copy(value: Any, secrets: Sequence[str]) -> Any:
    """A deep copy of ``value`` (TorchX's request: dataclasses, dicts, lists, Kubernetes client models)
    in which every string has ``secrets`` masked (:func:`jupyter_sched.specs.output.masking.mask_values`).

    Only the objects the copy made are changed. What ``deepcopy`` shares rather than copies (a module, a
    function, a class, a typing alias such as ``os.PathLike[str]``, a logger) is left as it is, and so is
    everything reached through it: masking a shared object would rewrite the program's own state (a CI run
    once masked a test module's constant through a reference in the request)."""
    memo: dict = {}
    clone = copy.deepcopy(value, memo)
    # memo maps each original's id to its copy; memo[id(memo)] keeps the originals alive; a logger's copy
    # is the logger itself (its reduce is getLogger(name))
    made = {id(v) for k, v in memo.items() if k != id(memo) and k != id(v)}
    seen: set = set()

    def fix(item: Any) -> Any:
        if isinstance(item, str):
            return mask_values(item, secrets)
        if isinstance(item, tuple) and not hasattr(item, "_fields"):
            return tuple(fix(x) for x in item)  # a new tuple: nothing shared is changed
        if id(item) not in made or id(item) in seen:
            return item
        seen.add(id(item))
        if isinstance(item, dict):
            for key in list(item):
                item[key] = fix(item[key])
        elif isinstance(item, list):
            item[:] = [fix(x) for x in item]
        elif hasattr(item, "__dict__") and isinstance(vars(item), dict):
            fields = vars(item)
            for key in list(fields):
                fields[key] = fix(fields[key])
        return item

    return fix(clone)
