"""The application model: AppDef = named roles, each a command run as N replicas."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import Enum
from string import Template
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, TypeVar

from jupyter_sched.specs.errors import InvalidAppError
from jupyter_sched.specs.output.masking import masked_fields
from jupyter_sched.specs.output.names import safe_name
from jupyter_sched.specs.request.dryrun import DryRunView
from jupyter_sched.specs.request.mounts import Mount
from jupyter_sched.specs.request.resources import NULL_RESOURCE, Resource
from jupyter_sched.specs.request.runopts import CfgVal

T = TypeVar("T")

MISSING: str = "<MISSING>"
"""Default entrypoint: a Role without one cannot run."""
NONE: str = "<NONE>"
"""Default for unset messages."""
ALL: str = "all"


class RetryPolicy(str, Enum):
    """How replicas are restarted when ``max_retries > 0``.

    REPLICA restarts only the failed replica; APPLICATION restarts every replica of the app; HOT_SPARE keeps
    spares. Each backend documents which it honours.
    """

    REPLICA = "REPLICA"
    APPLICATION = "APPLICATION"
    HOT_SPARE = "HOT_SPARE"

    def __str__(self) -> str:
        return self.value


class macros:  # noqa: N801 (lowercase: the public name of the interface we implement)
    """Placeholders substituted per replica in ``args``, ``env`` values and ``metadata`` strings.

    ``entrypoint`` and ``image`` are not substituted. Unknown ``${x}`` stays as written and ``$$`` is a
    literal ``$`` (``string.Template.safe_substitute``).
    """

    img_root = "${img_root}"
    base_img_root = "${base_img_root}"
    app_id = "${app_id}"
    replica_id = "${replica_id}"
    rank0_env = "${rank0_env}"
    """Replaced by the *name* of the env var holding the rank-0 host (expand it yourself, e.g. ``sh -c``)."""

    @dataclass
    class Values:
        img_root: str
        app_id: str
        replica_id: str
        rank0_env: str
        base_img_root: str = "DEPRECATED"

        def substitute(self, arg: str) -> str:
            return Template(arg).safe_substitute(**self.__dict__)

        def apply(self, role: "Role") -> "Role":
            """A deep copy of ``role`` with the macros substituted; ``role`` itself is left untouched."""
            role = copy.deepcopy(role)
            role.args = [self.substitute(a) for a in role.args]
            role.env = {k: self.substitute(v) for k, v in role.env.items()}
            role.metadata = self._apply_nested(role.metadata)
            return role

        def _apply_nested(self, value: Any) -> Any:
            if isinstance(value, str):
                return self.substitute(value)
            if isinstance(value, dict):
                return {k: self._apply_nested(v) for k, v in value.items()}
            if isinstance(value, list):
                return [self._apply_nested(v) for v in value]
            return value


@dataclass
class Role:
    """A set of identical replicas running one command.

    Field order and defaults match the interface we implement, so ``Role("trainer", "img")`` works
    positionally. ``pre_proc`` lets a role adjust the scheduler's request before it is scheduled.
    """

    name: str
    image: str
    min_replicas: Optional[int] = None
    base_image: Optional[str] = None
    entrypoint: str = MISSING
    args: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    num_replicas: int = 1
    max_retries: int = 0
    retry_policy: RetryPolicy = RetryPolicy.APPLICATION
    resource: Resource = field(default_factory=lambda: NULL_RESOURCE)
    port_map: Dict[str, int] = field(default_factory=dict)
    metadata: Dict[str, Any] = field(default_factory=dict)
    mounts: List[Mount] = field(default_factory=list)

    def pre_proc(self, scheduler: str, dryrun_info: "AppDryRunInfo") -> "AppDryRunInfo":
        """Hook to modify the scheduler request for this role; the identity by default."""
        return dryrun_info

    def __repr__(self) -> str:  # secrets in env, args and metadata are masked (specs.masking)
        return masked_fields(self)


@dataclass
class AppDef:
    """A named application made of roles."""

    name: str
    roles: List[Role] = field(default_factory=list)
    metadata: Dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # the roles' reprs mask their secrets (specs.masking)
        return masked_fields(self)


def _bad_name(name: object) -> bool:
    return not isinstance(name, str) or not name.strip() or "\0" in name


def validate_app(app: AppDef) -> None:
    """Checks an AppDef for mistakes that would fail at launch, naming the field and the fix.

    Called before any replica starts, so bad input never leaves half an app running. Names are free text,
    as in TorchX (``_ignored_``, ``my app``): backends turn them into paths and engine names with
    :func:`jupyter_sched.specs.output.names.safe_name`, so two roles must differ after that too.
    """
    if not isinstance(app, AppDef):
        raise InvalidAppError("app", f"expected an AppDef, got {type(app).__name__}", "Build one with AppDef(...)")
    if _bad_name(app.name):
        raise InvalidAppError("name", f"{app.name!r} is not a valid app name", "Give the app a name, e.g. 'train'")
    if not app.roles:
        raise InvalidAppError(
            "roles", f"app {app.name!r} has no roles", "Add at least one Role, e.g. Role('main', image=...)"
        )
    seen: set[str] = set()
    safe_seen: Dict[str, str] = {}
    for i, role in enumerate(app.roles):
        where = f"roles[{i}]"
        if not isinstance(role, Role):
            raise InvalidAppError(where, f"expected a Role, got {type(role).__name__}", "Build it with Role(...)")
        if _bad_name(role.name):
            raise InvalidAppError(f"{where}.name", f"{role.name!r} is not a valid role name", "Name it, e.g. 'trainer'")
        if role.name in seen:
            raise InvalidAppError(
                f"{where}.name", f"role name {role.name!r} is used twice", "Give each role a unique name"
            )
        if safe_name(role.name, "role") in safe_seen:
            other = safe_seen[safe_name(role.name, "role")]
            raise InvalidAppError(
                f"{where}.name",
                f"roles {other!r} and {role.name!r} both become the directory and container name"
                f" {safe_name(role.name, 'role')!r}",
                "Make the names differ in letters, digits, '_', '.' or '-'",
            )
        seen.add(role.name)
        safe_seen[safe_name(role.name, "role")] = role.name
        if not role.entrypoint or role.entrypoint == MISSING:
            raise InvalidAppError(
                f"{where}.entrypoint", f"role {role.name!r} has no entrypoint", "Set entrypoint, e.g. 'python' or 'sh'"
            )
        if not isinstance(role.num_replicas, int) or isinstance(role.num_replicas, bool) or role.num_replicas < 1:
            raise InvalidAppError(
                f"{where}.num_replicas",
                f"role {role.name!r} has num_replicas={role.num_replicas!r}",
                "Set num_replicas to 1 or more",
            )
        if not isinstance(role.max_retries, int) or role.max_retries < 0:
            raise InvalidAppError(
                f"{where}.max_retries", f"max_retries={role.max_retries!r} is negative", "Use 0 (no retries) or more"
            )
        bad_args = [a for a in role.args if not isinstance(a, str)]
        if bad_args:
            raise InvalidAppError(
                f"{where}.args", f"args must be strings, got {bad_args[0]!r}", "Convert each arg with str(...)"
            )
        bad_env = {k: v for k, v in role.env.items() if not isinstance(k, str) or not isinstance(v, str)}
        if bad_env:
            k, v = next(iter(bad_env.items()))
            raise InvalidAppError(f"{where}.env[{k!r}]", f"env values must be strings, got {v!r}", "Quote it, e.g. '1'")


class AppDryRunInfo(Generic[T]):
    """Holds the scheduler-native request (``.request``) and how to print it (``repr(info)``).

    The scheduler sets the app and resolved cfg it was made from, and the runner sets the scheduler name;
    read them with :attr:`app`, :attr:`cfg` and :attr:`scheduler` (the ``_app``/``_cfg``/``_scheduler``
    attributes of TorchX's interface are kept for code written against it).
    """

    def __init__(self, request: T, fmt: Callable[[T], str]) -> None:
        self.request = request
        self._fmt = fmt
        self._app: Optional[AppDef] = None
        self._cfg: Mapping[str, CfgVal] = {}
        self._scheduler: Optional[str] = None

    @property
    def app(self) -> Optional[AppDef]:
        """The AppDef this request was made for (a copy: the caller's object is never modified)."""
        return self._app

    @property
    def cfg(self) -> Mapping[str, CfgVal]:
        """The resolved run options, defaults included."""
        return self._cfg

    @property
    def scheduler(self) -> Optional[str]:
        """The registry name of the scheduler (set by the runner)."""
        return self._scheduler

    def view(self) -> Optional[DryRunView]:
        """The request's neutral view (its ``dryrun_view()``), or None for a request that offers none."""
        describe = getattr(self.request, "dryrun_view", None)
        return describe() if callable(describe) else None

    def __repr__(self) -> str:
        return self._fmt(self.request)
