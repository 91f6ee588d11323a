"""The data model of jupyter_sched: pure data and parsing, no I/O.

An :class:`AppDef` is a named set of :class:`Role` s, each a command run as ``num_replicas`` replicas.
Schedulers turn an AppDef plus run options (``cfg``) into a native request (:class:`AppDryRunInfo`),
run it, and report :class:`AppState` s back.
"""

from jupyter_sched.specs.app import (
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
from jupyter_sched.specs.builders import materialize_appdef  # noqa: E402 (needs the names above)
from jupyter_sched.specs.dryrun import DryRunView, ReplicaPlan
from jupyter_sched.specs.errors import (
    InvalidAppError,
    InvalidRunConfigException,
    MalformedAppHandleException,
    UnknownAppException,
    UnknownSchedulerException,
)
from jupyter_sched.specs.handles import (
    AppHandle,
    ParsedAppHandle,
    make_app_handle,
    make_unique,
    parse_app_handle,
    random_id,
)
from jupyter_sched.specs.mounts import BindMount, DeviceMount, Mount, MountType, VolumeMount, parse_mounts
from jupyter_sched.specs.resource_table import NamedResources, get_named_resources, named_resources, resource
from jupyter_sched.specs.resources import NULL_RESOURCE, Resource
from jupyter_sched.specs.runopts import CfgVal, get_type_name, runopt, runopts
from jupyter_sched.specs.state import (
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
