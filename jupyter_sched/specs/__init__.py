"""The data model of jupyter_sched: pure data and parsing, no I/O.

An :class:`AppDef` is a named set of :class:`Role` s, each a command run as ``num_replicas`` replicas.
Schedulers turn an AppDef plus run options (``cfg``) into a native request (:class:`AppDryRunInfo`),
run it, and report :class:`AppState` s back. Its rooms, and the modules kept at TorchX's paths:

* :mod:`.request` -- what a user asks for: the AppDef, mounts, resources, limits, run options, a dry run.
* :mod:`.status` -- what a launched app is: states and statuses, usage, app handles.
* :mod:`.output` -- what may be shown: the one masking rule for secrets, safe names, labels in output.
* :mod:`.errors` -- the data model's typed exceptions.
* TorchX's module paths, kept as real modules: :mod:`.api` (the types under ``torchx.specs.api``),
  :mod:`.builders` (a component function and its arguments to an AppDef), :mod:`.file_linter`,
  :mod:`.finder`, :mod:`.named_resources_aws`, :mod:`.named_resources_generic`.
"""

from jupyter_sched.specs.builders import materialize_appdef
from jupyter_sched.specs.errors import (
    InvalidAppError,
    InvalidRunConfigException,
    MalformedAppHandleException,
    UnknownAppException,
    UnknownSchedulerException,
)
from jupyter_sched.specs.request.app import (
    ALL,
    MISSING,
    NONE,
    AppDef,
    AppDryRunInfo,
    RetryPolicy,
    Role,
    macros,
    validate_app,
)
from jupyter_sched.specs.request.dryrun import DryRunView, ReplicaPlan
from jupyter_sched.specs.request.mounts import BindMount, DeviceMount, Mount, MountType, VolumeMount, parse_mounts
from jupyter_sched.specs.request.resource_table import NamedResources, get_named_resources, named_resources, resource
from jupyter_sched.specs.request.resources import NULL_RESOURCE, Resource
from jupyter_sched.specs.request.runopts import CfgVal, get_type_name, runopt, runopts
from jupyter_sched.specs.status.handles import (
    AppHandle,
    ParsedAppHandle,
    make_app_handle,
    make_unique,
    parse_app_handle,
    random_id,
)
from jupyter_sched.specs.status.state import (
    AppState,
    AppStatus,
    AppStatusError,
    ReplicaState,
    ReplicaStatus,
    RoleStatus,
    is_started,
    is_terminal,
)

__all__ = [
    "ALL", "MISSING", "NONE", "AppDef", "RetryPolicy", "Role", "macros", "validate_app",
    "AppDryRunInfo",
    "DryRunView",
    "ReplicaPlan",
    "AppStatusError", "InvalidAppError", "InvalidRunConfigException", "MalformedAppHandleException",
    "UnknownAppException", "UnknownSchedulerException",
    "AppHandle", "ParsedAppHandle", "make_app_handle", "make_unique", "parse_app_handle", "random_id",
    "BindMount", "DeviceMount", "Mount", "MountType", "VolumeMount", "parse_mounts",
    "NULL_RESOURCE", "NamedResources", "Resource", "get_named_resources", "named_resources", "resource",
    "CfgVal", "get_type_name", "runopt", "runopts", "materialize_appdef",
    "AppState", "AppStatus", "ReplicaState", "ReplicaStatus", "RoleStatus", "is_started", "is_terminal",
]  # fmt: skip
