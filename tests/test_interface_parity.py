"""Code written for TorchX's scheduler API runs here with only its imports changed.

Two halves:

* A table of every public name TorchX's documentation lists (and the exact signatures of TorchX 0.7.0),
  checked against our modules: ``torchx.X`` -> ``jupyter_sched.X``. Each row cites where the item is
  documented. A signature row is written in Python syntax exactly as documented; it is compared with
  ``inspect.signature`` of ours by these rules, so that every *documented call* keeps working:

  - every documented parameter exists in ours, at the same position, with the same name and kind;
  - a documented default is our default (a dataclass ``default_factory`` counts by the value it makes);
  - a documented required parameter is required in ours too, unless the row lists it in ``may_default``
    (a compatible extension: a caller that passes it is unaffected);
  - ours may have extra parameters only after the documented positional ones, and each must have a
    default (or be ``*args``/``**kwargs``);
  - where the documentation only gives a parameter's position (the reference's shorthand, e.g.
    ``make_app_handle(s, sess, id)``), the row names it ``_pos<N>`` and its name is not compared.

  Where a document is silent (return annotations, parameter types) nothing is compared.

* End-to-end snippets written as a TorchX user writes them against TorchX's documented calls, with
  only the imports changed, run for real on ``local_cwd``, ``local_dir`` and ``local_docker``.

Sources: the table below is self-contained. Each row names where TorchX documents the item: ``S000``..
are pages of TorchX's API documentation (two versions of the docker and local scheduler pages; where they
differ, the newer one is the contract), ``REF_*`` are modules of TorchX 0.7.0 (``torchx.specs``,
``torchx.schedulers.api``, the registry, ``LocalScheduler``, ``DockerScheduler``).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import os
import stat
import sys
import typing
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pytest

from jupyter_sched.specs import MISSING, NONE, NULL_RESOURCE, AppState, RetryPolicy, random_id

from .schedulers.docker.fixtures import BUSYBOX, remove_session
from .schedulers.helpers import wait_until

S000 = "TorchX docs: docker scheduler (newer)"
S001 = "TorchX docs: docker scheduler (older)"
S002 = "TorchX docs: Scheduler API"
S003 = "TorchX docs: local scheduler (newer)"
S004 = "TorchX docs: local scheduler (older)"
REF_SPECS = "TorchX 0.7.0: torchx.specs"
REF_API = "TorchX 0.7.0: torchx.schedulers.api"
REF_REG = "TorchX 0.7.0: torchx.schedulers registry"
REF_LOCAL = "TorchX 0.7.0: LocalScheduler"
REF_DOCKER = "TorchX 0.7.0: DockerScheduler"

SPECS = "jupyter_sched.specs"
SPECS_API = "jupyter_sched.specs.api"
SCHED = "jupyter_sched.schedulers"
API = "jupyter_sched.schedulers.api"
LOCAL = "jupyter_sched.schedulers.local_scheduler"
DOCKER = "jupyter_sched.schedulers.docker_scheduler"


@dataclass(frozen=True)
class Factory:
    """A documented ``<factory>`` default (a dataclass ``default_factory``) making ``value``."""

    value: Any


# Names a documented default may use; they evaluate to our objects, whose values are pinned in VALUES.
_DEFAULT_NAMES: Dict[str, Any] = {
    "FACTORY": Factory, "AppState": AppState, "NONE": NONE, "MISSING": MISSING,
    "NULL_RESOURCE": NULL_RESOURCE, "RetryPolicy": RetryPolicy,
}  # fmt: skip


@dataclass(frozen=True)
class Doc:
    """One documented callable or class: ``target`` is ``module:Qual.name`` in our package."""

    target: str
    params: Optional[str]  # documented parameters in Python syntax, e.g. "(app_id, k=0)"; None: not given
    src: str
    abstract: Optional[bool] = None  # documented as abstract (True) or as a concrete method (False)
    may_default: Tuple[str, ...] = ()  # documented-required parameters that ours gives a default


# fmt: off
DOCS: List[Doc] = [
    # -- jupyter_sched.schedulers (torchx.schedulers) -------------------------------------------------------
    Doc(f"{SCHED}:get_scheduler_factories", "()", S002),
    Doc(f"{SCHED}:get_default_scheduler_name", "()", S002),
    Doc(f"{SCHED}:Scheduler", "(backend, session_name)", S002),
    Doc(f"{SCHED}:SchedulerFactory", "(*args, **kwargs)", S002),
    Doc(f"{SCHED}:DEFAULT_SCHEDULER_MODULES", None, REF_REG),
    # -- the Scheduler contract (torchx.schedulers.api) ---------------------------------------------------------
    Doc(f"{API}:Scheduler", "(backend, session_name)", S002),
    Doc(f"{API}:Scheduler.cancel", "(app_id)", S002, abstract=False),
    Doc(f"{API}:Scheduler.close", "()", S002, abstract=False),
    Doc(f"{API}:Scheduler.describe", "(app_id)", S002, abstract=True),
    Doc(f"{API}:Scheduler.exists", "(app_id)", S002, abstract=False),
    Doc(f"{API}:Scheduler.list", "()", S002, abstract=True),
    Doc(f"{API}:Scheduler.log_iter", "(app_id, role_name, k=0, regex=None, since=None, until=None, "
                                     "should_tail=False, streams=None)", S002, abstract=False),
    Doc(f"{API}:Scheduler.run_opts", "()", S002, abstract=False),
    Doc(f"{API}:Scheduler.schedule", "(dryrun_info)", S002, abstract=True),
    Doc(f"{API}:Scheduler.submit", "(app, cfg, workspace=None)", S002, abstract=False),
    Doc(f"{API}:Scheduler.submit_dryrun", "(app, cfg)", S002, abstract=False),
    Doc(f"{API}:Scheduler._submit_dryrun", "(app, cfg)", REF_API, abstract=True),
    Doc(f"{API}:Scheduler._cancel_existing", "(app_id)", REF_API, abstract=True),
    Doc(f"{API}:Scheduler._validate", "(app, scheduler)", REF_API, abstract=False),
    Doc(f"{API}:SchedulerFactory", "(*args, **kwargs)", S002),
    Doc(f"{API}:DescribeAppResponse", "(app_id='<NOT_SET>', state=AppState.UNSUBMITTED, num_restarts=-1, "
                                      "msg='<NONE>', structured_error_msg='<NONE>', ui_url=None, "
                                      "roles_statuses=FACTORY([]), roles=FACTORY([]))", S002),
    Doc(f"{API}:ListAppResponse", "(app_id, state, app_handle='<NOT_SET>')", S002),
    Doc(f"{API}:Stream", None, S002),
    Doc(f"{API}:WorkspaceMixin", None, REF_API),
    Doc(f"{API}:WorkspaceMixin.workspace_opts", "()", REF_API),
    Doc(f"{API}:filter_regex", "(_pos0, _pos1)", REF_API),
    Doc(f"{API}:split_lines", "(_pos0)", REF_API),
    Doc(f"{API}:split_lines_iterator", "(_pos0)", REF_API),
    # -- local scheduler (torchx.schedulers.local_scheduler) -------------------------------------------------
    Doc(f"{LOCAL}:LocalScheduler", "(session_name, image_provider_class, cache_size=100, extra_paths=None)",
        S003, may_default=("image_provider_class",)),
    Doc(f"{LOCAL}:LocalScheduler.close", "()", S003),
    Doc(f"{LOCAL}:LocalScheduler.describe", "(app_id)", S003),
    Doc(f"{LOCAL}:LocalScheduler.log_iter", "(app_id, role_name, k=0, regex=None, since=None, until=None, "
                                            "should_tail=False, streams=None)", S003),
    Doc(f"{LOCAL}:LocalScheduler.run_opts", "()", S003),
    Doc(f"{LOCAL}:LocalScheduler.schedule", "(dryrun_info)", S003),
    Doc(f"{LOCAL}:LocalOpts", None, S003),
    Doc(f"{LOCAL}:ImageProvider", "()", S003),
    Doc(f"{LOCAL}:ImageProvider.fetch", "(image)", S003, abstract=True),
    Doc(f"{LOCAL}:ImageProvider.fetch_role", "(role)", S003, abstract=False),
    Doc(f"{LOCAL}:ImageProvider.get_cwd", "(image)", S003, abstract=False),
    Doc(f"{LOCAL}:ImageProvider.get_entrypoint", "(img_root, role)", S003, abstract=False),
    Doc(f"{LOCAL}:ImageProvider.get_replica_param", "(img_root, role, stdout=None, stderr=None, combined=None)",
        S003, abstract=False),
    Doc(f"{LOCAL}:CWDImageProvider", "(cfg)", S003, may_default=("cfg",)),
    Doc(f"{LOCAL}:CWDImageProvider.fetch", "(image)", S003),
    Doc(f"{LOCAL}:CWDImageProvider.get_cwd", "(image)", S003),
    Doc(f"{LOCAL}:CWDImageProvider.get_entrypoint", "(img_root, role)", S003),
    Doc(f"{LOCAL}:LocalDirectoryImageProvider", "(cfg)", S003, may_default=("cfg",)),
    Doc(f"{LOCAL}:LocalDirectoryImageProvider.fetch", "(image)", S003),
    Doc(f"{LOCAL}:LocalDirectoryImageProvider.get_cwd", "(image)", S003),
    Doc(f"{LOCAL}:LocalDirectoryImageProvider.get_entrypoint", "(img_root, role)", S003),
    Doc(f"{LOCAL}:create_cwd_scheduler", "(session_name, **kwargs)", S003),
    Doc(f"{LOCAL}:LogIterator", "(app_id, regex, log_file, scheduler, should_tail=True)", S003),
    Doc(f"{LOCAL}:PopenRequest", "(app_id, log_dir, role_params, role_log_dirs)", S003),
    Doc(f"{LOCAL}:ReplicaParam", "(args, env, stdout=None, stderr=None, combined=None, cwd=None)", S003),
    Doc(f"{LOCAL}:SignalException", "(msg, sigval)", S003),
    # -- docker scheduler (torchx.schedulers.docker_scheduler) -----------------------------------------------
    Doc(f"{DOCKER}:DockerScheduler", "(session_name)", S000),
    Doc(f"{DOCKER}:DockerScheduler.describe", "(app_id)", S000),
    Doc(f"{DOCKER}:DockerScheduler.list", "()", S000),
    Doc(f"{DOCKER}:DockerScheduler.log_iter", "(app_id, role_name, k=0, regex=None, since=None, until=None, "
                                             "should_tail=False, streams=None)", S000),
    Doc(f"{DOCKER}:DockerScheduler.schedule", "(dryrun_info)", S000),
    Doc(f"{DOCKER}:DockerOpts", None, S000),
    Doc(f"{DOCKER}:DockerWorkspaceMixin", None, S000),
    Doc(f"{DOCKER}:DockerWorkspaceMixin.build_workspace_and_update_role", "(role, workspace, cfg)", REF_DOCKER),
    Doc(f"{DOCKER}:DockerJob", "(app_id, containers)", S000),
    Doc(f"{DOCKER}:DockerContainer", "(image, command, kwargs)", S000, may_default=("kwargs",)),
    Doc(f"{DOCKER}:create_scheduler", "(session_name, **kwargs)", S000),
    Doc(f"{DOCKER}:has_docker", "()", S000),
    # -- names TorchX's documented signatures spell as torchx.specs.api.X (S002 DescribeAppResponse, S004) -------------
    Doc(f"{SPECS_API}:AppState", None, S002),
    Doc(f"{SPECS_API}:RoleStatus", "(role, replicas)", S002),
    Doc(f"{SPECS_API}:Role", None, S002),
    Doc(f"{SPECS_API}:AppDryRunInfo", "(request, fmt)", S004),
    Doc(f"{SPECS_API}:runopts", "()", S004),
    # -- the data model (torchx.specs) -------------------------------------------------------------------
    Doc(f"{SPECS}:AppDef", "(name, roles=FACTORY([]), metadata=FACTORY({}))", REF_SPECS),
    Doc(f"{SPECS}:Role", "(name, image, min_replicas=None, base_image=None, entrypoint=MISSING, "
                         "args=FACTORY([]), env=FACTORY({}), num_replicas=1, max_retries=0, "
                         "retry_policy=RetryPolicy.APPLICATION, resource=NULL_RESOURCE, port_map=FACTORY({}), "
                         "metadata=FACTORY({}), mounts=FACTORY([]))", REF_SPECS),
    Doc(f"{SPECS}:Role.pre_proc", "(scheduler, dryrun_info)", REF_SPECS),
    Doc(f"{SPECS}:Resource", "(cpu, gpu, memMB, capabilities=FACTORY({}), devices=FACTORY({}))", REF_SPECS),
    Doc(f"{SPECS}:Resource.copy", "(original, **capabilities)", REF_SPECS),
    Doc(f"{SPECS}:resource", "(cpu=None, gpu=None, memMB=None, h=None)", REF_SPECS),
    Doc(f"{SPECS}:named_resources", None, REF_SPECS),
    Doc(f"{SPECS}:macros", None, REF_SPECS),
    Doc(f"{SPECS}:macros.Values", "(img_root, app_id, replica_id, rank0_env, base_img_root='DEPRECATED')",
        REF_SPECS),
    Doc(f"{SPECS}:macros.Values.apply", "(role)", REF_SPECS),
    Doc(f"{SPECS}:macros.Values.substitute", "(_pos0)", REF_SPECS),
    Doc(f"{SPECS}:RetryPolicy", None, REF_SPECS),
    Doc(f"{SPECS}:MountType", None, REF_SPECS),
    Doc(f"{SPECS}:BindMount", "(src_path, dst_path, read_only=False)", REF_SPECS),
    Doc(f"{SPECS}:VolumeMount", "(src, dst_path, read_only=False)", REF_SPECS),
    Doc(f"{SPECS}:DeviceMount", "(src_path, dst_path, permissions='rwm')", REF_SPECS),
    Doc(f"{SPECS}:parse_mounts", "(opts)", REF_SPECS),
    Doc(f"{SPECS}:AppState", None, S002),
    Doc(f"{SPECS}:ReplicaState", None, REF_SPECS),
    Doc(f"{SPECS}:is_terminal", "(state)", REF_SPECS),
    Doc(f"{SPECS}:is_started", "(_pos0)", REF_SPECS),
    Doc(f"{SPECS}:ReplicaStatus", "(id, state, role, hostname, structured_error_msg=NONE)", REF_SPECS),
    Doc(f"{SPECS}:RoleStatus", "(role, replicas)", REF_SPECS),
    Doc(f"{SPECS}:AppStatus", "(state, num_restarts=0, msg='', structured_error_msg=NONE, ui_url=None, "
                              "roles=FACTORY([]))", REF_SPECS),
    Doc(f"{SPECS}:AppStatus.is_terminal", "()", REF_SPECS),
    Doc(f"{SPECS}:AppStatus.raise_for_status", "()", REF_SPECS),
    Doc(f"{SPECS}:AppStatus.format", "(filter_roles=None)", REF_SPECS),
    Doc(f"{SPECS}:AppDryRunInfo", "(request, fmt)", REF_SPECS),
    Doc(f"{SPECS}:CfgVal", None, REF_SPECS),
    Doc(f"{SPECS}:runopt", "(default, opt_type, is_required, help)", REF_SPECS),
    Doc(f"{SPECS}:runopts", "()", REF_SPECS),
    Doc(f"{SPECS}:runopts.add", "(cfg_key, type_, help, default=None, required=False)", REF_SPECS),
    Doc(f"{SPECS}:runopts.get", "(name)", REF_SPECS),
    Doc(f"{SPECS}:runopts.update", "(other)", REF_SPECS),
    Doc(f"{SPECS}:runopts.is_type", "(obj, tp)", REF_SPECS),
    Doc(f"{SPECS}:runopts.resolve", "(cfg)", REF_SPECS),
    Doc(f"{SPECS}:runopts.cfg_from_str", "(_pos0)", REF_SPECS),
    Doc(f"{SPECS}:InvalidRunConfigException", "(_pos0, _pos1, _pos2)", REF_SPECS, may_default=("_pos2",)),
    Doc(f"{SPECS}:AppHandle", None, REF_SPECS),
    Doc(f"{SPECS}:make_app_handle", "(_pos0, _pos1, _pos2)", REF_SPECS),
    Doc(f"{SPECS}:parse_app_handle", "(_pos0)", REF_SPECS),
    Doc(f"{SPECS}:ParsedAppHandle", "(scheduler_backend, session_name, app_id)", REF_SPECS),
    Doc(f"{SPECS}:make_unique", "(_pos0)", REF_REG),
    Doc(f"{SPECS}:MalformedAppHandleException", None, REF_SPECS),
    Doc(f"{SPECS}:UnknownAppException", None, REF_SPECS),
    Doc(f"{SPECS}:UnknownSchedulerException", None, REF_SPECS),
    Doc(f"{SPECS}:AppStatusError", None, REF_SPECS),
]

# Documented constant and enum values: (target, value, source).
VALUES: List[Tuple[str, Any, str]] = [
    (f"{API}:Stream.STDOUT", "stdout", S002),
    (f"{API}:Stream.STDERR", "stderr", S002),
    (f"{API}:Stream.COMBINED", "combined", S002),
    (f"{SPECS}:AppState.UNSUBMITTED", 0, REF_SPECS),
    (f"{SPECS}:AppState.SUBMITTED", 1, REF_SPECS),
    (f"{SPECS}:AppState.PENDING", 2, REF_SPECS),
    (f"{SPECS}:AppState.RUNNING", 3, REF_SPECS),
    (f"{SPECS}:AppState.SUCCEEDED", 4, REF_SPECS),
    (f"{SPECS}:AppState.FAILED", 5, REF_SPECS),
    (f"{SPECS}:AppState.CANCELLED", 6, REF_SPECS),
    (f"{SPECS}:AppState.UNKNOWN", 7, REF_SPECS),
    (f"{SPECS}:MISSING", "<MISSING>", REF_SPECS),
    (f"{SPECS}:NONE", "<NONE>", REF_SPECS),
    (f"{SPECS}:ALL", "all", REF_SPECS),
    (f"{SPECS}:macros.img_root", "${img_root}", REF_SPECS),
    (f"{SPECS}:macros.app_id", "${app_id}", REF_SPECS),
    (f"{SPECS}:macros.replica_id", "${replica_id}", REF_SPECS),
    (f"{SPECS}:macros.rank0_env", "${rank0_env}", REF_SPECS),
]

# Documented enum members (names): (enum target, member names, source).
ENUM_MEMBERS: List[Tuple[str, Tuple[str, ...], str]] = [
    (f"{SPECS}:RetryPolicy", ("REPLICA", "APPLICATION", "HOT_SPARE"), REF_SPECS),
]

# Documented enum values (no member names given): (enum target, values, source).
ENUM_VALUES: List[Tuple[str, Tuple[Any, ...], str]] = [
    (f"{API}:Stream", ("combined", "stdout", "stderr"), S002),
    (f"{SPECS}:MountType", ("bind", "volume", "device"), REF_SPECS),
]

# Documented run options: (scheduler factory, key, type, default, source).
RUN_OPTS: List[Tuple[str, str, Any, Any, str]] = [
    (f"{LOCAL}:create_cwd_scheduler", "log_dir", str, None, S003),
    (f"{LOCAL}:create_cwd_scheduler", "prepend_cwd", bool, False, S003),
    (f"{LOCAL}:create_cwd_scheduler", "auto_set_cuda_visible_devices", bool, False, S003),
    (f"{DOCKER}:create_scheduler", "copy_env", List[str], None, S000),
    (f"{DOCKER}:create_scheduler", "env", Dict[str, str], None, S000),
    (f"{DOCKER}:create_scheduler", "image_repo", str, None, S000),
    (f"{DOCKER}:create_scheduler", "quiet", bool, False, S000),
    (f"{DOCKER}:create_scheduler", "privileged", bool, False, REF_DOCKER),
]

# Documented cfg TypedDict keys: (TypedDict target, keys, source).
OPTS_KEYS: List[Tuple[str, Tuple[str, ...], str]] = [
    (f"{LOCAL}:LocalOpts", ("log_dir", "prepend_cwd", "auto_set_cuda_visible_devices"), REF_LOCAL),
    (f"{DOCKER}:DockerOpts", ("copy_env", "env", "privileged", "image_repo", "quiet"), REF_DOCKER),
]

# Documented bases: (class, base, source).
BASES: List[Tuple[str, str, str]] = [
    (f"{LOCAL}:LocalScheduler", f"{API}:Scheduler", S003),
    (f"{DOCKER}:DockerScheduler", f"{API}:Scheduler", S000),
    (f"{DOCKER}:DockerScheduler", f"{DOCKER}:DockerWorkspaceMixin", S000),
    (f"{DOCKER}:DockerWorkspaceMixin", f"{API}:WorkspaceMixin", REF_DOCKER),
    (f"{LOCAL}:CWDImageProvider", f"{LOCAL}:ImageProvider", S003),
    (f"{LOCAL}:LocalDirectoryImageProvider", f"{LOCAL}:ImageProvider", S003),
]
# fmt: on


# -- resolution and comparison ---------------------------------------------------------------------------------


def resolve(target: str) -> Tuple[Any, Any]:
    """``module:A.b`` -> (the object, its holder: the class it was looked up on, or the module)."""
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    holder: Any = obj
    for part in qualname.split("."):
        assert hasattr(obj, part), f"{target}: {part!r} is missing from {getattr(obj, '__name__', obj)!r}"
        holder, obj = obj, getattr(obj, part)
    return obj, holder


def our_signature(target: str) -> inspect.Signature:
    obj, holder = resolve(target)
    sig = inspect.signature(obj)
    name = target.rpartition(".")[2]
    if inspect.isclass(holder) and not inspect.isclass(obj):
        raw = inspect.getattr_static(holder, name)
        if not isinstance(raw, (staticmethod, classmethod)):  # an unbound method: drop ``self``
            params = list(sig.parameters.values())[1:]
            sig = sig.replace(parameters=params)
    return sig


def documented_signature(params: str) -> inspect.Signature:
    return inspect.signature(eval(f"lambda {params[1:-1]}: None", dict(_DEFAULT_NAMES)))  # noqa: S307


def effective_default(target: str, param: inspect.Parameter) -> Any:
    """A parameter's default; for a dataclass field with a ``default_factory``, Factory(what it makes)."""
    if param.default is not inspect.Parameter.empty and repr(param.default) == "<factory>":
        cls, _ = resolve(target)
        field = {f.name: f for f in dataclasses.fields(cls)}[param.name]
        return Factory(field.default_factory())  # type: ignore[misc]
    return param.default


def defaults_equal(documented: Any, ours: Any) -> bool:
    if isinstance(documented, Factory):  # a fresh mutable default per instance, and the same value
        return isinstance(ours, Factory) and ours.value == documented.value
    if isinstance(ours, Factory):  # e.g. ``resource=NULL_RESOURCE``, made by a factory
        ours = ours.value
    return bool(ours == documented) and type(ours) is type(documented)


def signature_mismatches(doc: Doc) -> List[str]:
    """Every way our signature breaks a call written against the documented one (empty: none)."""
    assert doc.params is not None
    expected = list(documented_signature(doc.params).parameters.values())
    actual = list(our_signature(doc.target).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    problems: List[str] = []
    matched: set = set()
    for i, exp in enumerate(expected):
        if exp.kind in variadic:
            ours_var = [p for p in actual if p.kind == exp.kind]
            if not ours_var:
                problems.append(f"missing {'*' if exp.kind == exp.VAR_POSITIONAL else '**'}{exp.name}")
            matched.update(p.name for p in ours_var)
            continue
        if exp.kind in positional:
            ours = actual[i] if i < len(actual) else None
            if ours is None or ours.kind not in positional:
                problems.append(f"no positional parameter #{i} ({exp.name})")
                continue
            if not exp.name.startswith("_pos") and ours.name != exp.name:
                problems.append(f"parameter #{i} is {ours.name!r}, documented {exp.name!r}")
                continue
        else:
            ours = next((p for p in actual if p.name == exp.name), None)
            if ours is None:
                problems.append(f"missing keyword parameter {exp.name!r}")
                continue
        matched.add(ours.name)
        if ours.kind != exp.kind:
            problems.append(f"{exp.name}: kind {ours.kind.description}, documented {exp.kind.description}")
        ours_default = effective_default(doc.target, ours)
        if exp.default is inspect.Parameter.empty:
            if ours_default is not inspect.Parameter.empty and exp.name not in doc.may_default:
                problems.append(f"{exp.name}: has default {ours_default!r}, documented as required")
        elif ours_default is inspect.Parameter.empty:
            problems.append(f"{exp.name}: required, documented default {exp.default!r}")
        elif not defaults_equal(exp.default, ours_default):
            problems.append(f"{exp.name}: default {ours_default!r}, documented {exp.default!r}")
    for extra in actual:
        if extra.name in matched or extra.kind in variadic:
            continue
        if extra.default is inspect.Parameter.empty:
            problems.append(f"extra parameter {extra.name!r} has no default: documented calls omit it")
    return problems


def documented_as_class(doc: Doc) -> bool:
    """A top-level CamelCase name documented with a constructor signature."""
    qualname = doc.target.partition(":")[2]
    return doc.params is not None and "." not in qualname and qualname[:1].isupper()


# -- the table-driven checks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", DOCS, ids=[d.target for d in DOCS])
def test_documented_name_exists_with_documented_signature(doc: Doc) -> None:
    obj, _ = resolve(doc.target)
    if doc.params is not None:
        problems = signature_mismatches(doc)
        assert not problems, f"{doc.target} (documented in {doc.src}): " + "; ".join(problems)
    if doc.abstract is not None:
        is_abstract = bool(getattr(obj, "__isabstractmethod__", False))
        assert is_abstract == doc.abstract, (
            f"{doc.target} is {'abstract' if is_abstract else 'concrete'}, {doc.src} documents it"
            f" {'abstract' if doc.abstract else 'concrete'}: subclasses written for TorchX would break"
        )
    if documented_as_class(doc):  # a class, not e.g. a typing alias: it can be subclassed or isinstance'd
        assert inspect.isclass(obj), f"{doc.target} is documented as a class in {doc.src}, ours is {obj!r}"


def test_signature_rules_catch_incompatible_changes() -> None:
    """The comparison itself: each kind of break a documented call would hit is reported."""

    def check(params: str, ours: Any, may_default: Tuple[str, ...] = ()) -> List[str]:
        module = type(sys)("parity_probe")
        module.f = ours  # type: ignore[attr-defined]
        sys.modules["parity_probe"] = module
        try:
            return signature_mismatches(Doc("parity_probe:f", params, "test", may_default=may_default))
        finally:
            del sys.modules["parity_probe"]

    assert check("(a, b=1)", lambda a, b=1: None) == []
    assert check("(a, b=1)", lambda a, b=1, c=None: None) == []
    assert check("(a, **kw)", lambda a, extra=None, **kw: None) == []
    assert check("(a, b=1)", lambda b, a=1: None)  # renamed / reordered
    assert check("(a, b=1)", lambda a, b=2: None)  # other default
    assert check("(a, b=1)", lambda a, *, b=1: None)  # became keyword-only
    assert check("(a, b)", lambda a, b=0: None)  # required -> default, not allowed unless listed
    assert check("(a, b)", lambda a, b=0: None, may_default=("b",)) == []
    assert check("(a, b=1)", lambda a, b: None)  # default removed
    assert check("(a, b=1)", lambda a, c, b=1: None)  # inserted before a documented positional
    assert check("(a)", lambda a, c: None)  # extra required parameter
    assert check("(a, **kw)", lambda a: None)  # **kwargs dropped
    assert check("(_pos0)", lambda anything: None) == []


@pytest.mark.parametrize("target,value,src", VALUES, ids=[v[0] for v in VALUES])
def test_documented_value(target: str, value: Any, src: str) -> None:
    obj, _ = resolve(target)
    assert obj == value, f"{target} is {obj!r}, {src} documents {value!r}"
    if isinstance(obj, enum.Enum):
        assert obj.value == value


@pytest.mark.parametrize("target,names,src", ENUM_MEMBERS, ids=[e[0] for e in ENUM_MEMBERS])
def test_documented_enum_members(target: str, names: Tuple[str, ...], src: str) -> None:
    cls, _ = resolve(target)
    missing = [n for n in names if n not in cls.__members__]
    assert not missing, f"{target} lacks {missing} ({src})"


@pytest.mark.parametrize("target,values,src", ENUM_VALUES, ids=[e[0] for e in ENUM_VALUES])
def test_documented_enum_values(target: str, values: Tuple[Any, ...], src: str) -> None:
    cls, _ = resolve(target)
    for value in values:
        assert cls(value).value == value, f"{target}({value!r}) ({src})"


@pytest.mark.parametrize("factory,key,tp,default,src", RUN_OPTS, ids=[f"{r[0]}-{r[1]}" for r in RUN_OPTS])
def test_documented_run_option(factory: str, key: str, tp: Any, default: Any, src: str) -> None:
    create, _ = resolve(factory)
    sched = create(session_name="parity")
    try:
        opt = sched.run_opts().get(key)
        assert opt is not None, f"{factory}(...).run_opts() has no {key!r} ({src})"
        assert opt.opt_type == tp, f"{key}: type {opt.opt_type}, {src} documents {tp}"
        assert opt.default == default and type(opt.default) is type(default), f"{key}: default {opt.default!r}"
        assert not opt.is_required, f"{key} is documented under 'optional arguments' ({src})"
    finally:
        sched.close()


# Lines of ``repr(run_opts())`` TorchX's docs print verbatim under "Config Options": (factory, line, source).
RUN_OPTS_LINES: List[Tuple[str, str, str]] = [
    (f"{LOCAL}:create_cwd_scheduler", "log_dir=LOG_DIR (str, None)", S003),
    (f"{LOCAL}:create_cwd_scheduler", "prepend_cwd=PREPEND_CWD (bool, False)", S003),
    (f"{LOCAL}:create_cwd_scheduler",
     "auto_set_cuda_visible_devices=AUTO_SET_CUDA_VISIBLE_DEVICES (bool, False)", S003),
    (f"{DOCKER}:create_scheduler", "image_repo=IMAGE_REPO (str, None)", S000),
    (f"{DOCKER}:create_scheduler", "quiet=QUIET (bool, False)", S000),
]


@pytest.mark.parametrize("factory,line,src", RUN_OPTS_LINES, ids=[r[1].split("=")[0] for r in RUN_OPTS_LINES])
def test_documented_run_option_help_line(factory: str, line: str, src: str) -> None:
    create, _ = resolve(factory)
    sched = create(session_name="parity")
    try:
        text = repr(sched.run_opts())
        assert "optional arguments:" in text
        assert line in [ln.strip() for ln in text.splitlines()], f"{line!r} not in run_opts() help ({src}):\n{text}"
    finally:
        sched.close()


@pytest.mark.parametrize("target,keys,src", OPTS_KEYS, ids=[o[0] for o in OPTS_KEYS])
def test_documented_cfg_typeddict_keys(target: str, keys: Tuple[str, ...], src: str) -> None:
    cls, _ = resolve(target)
    missing = set(keys) - set(typing.get_type_hints(cls))
    assert not missing, f"{target} lacks keys {sorted(missing)} ({src})"


@pytest.mark.parametrize("child,base,src", BASES, ids=[f"{b[0]}<{b[1]}" for b in BASES])
def test_documented_bases(child: str, base: str, src: str) -> None:
    assert issubclass(resolve(child)[0], resolve(base)[0]), f"{child} must subclass {base} ({src})"


def test_null_resource_and_named_resources() -> None:
    """REF §2.1: NULL_RESOURCE is -1/-1/-1 and is Role's default; the generic named resources' sizes."""
    from jupyter_sched.specs import Resource, Role, named_resources

    assert NULL_RESOURCE == Resource(cpu=-1, gpu=-1, memMB=-1)
    assert Role("foobar", "torch").resource == NULL_RESOURCE
    gib = 1024
    sizes = {
        "gpu.small": (8, 1, 32 * gib), "gpu.medium": (16, 2, 64 * gib), "gpu.large": (32, 4, 128 * gib),
        "gpu.xlarge": (64, 8, 256 * gib), "cpu.nano": (1, 0, 512), "cpu.micro": (1, 0, 1 * gib),
        "cpu.small": (1, 0, 2 * gib), "cpu.medium": (2, 0, 4 * gib), "cpu.large": (2, 0, 8 * gib),
        "cpu.xlarge": (8, 0, 32 * gib),
    }  # fmt: skip
    for name, (cpu, gpu, mem) in sizes.items():
        res = named_resources[name]
        assert (res.cpu, res.gpu, res.memMB) == (cpu, gpu, mem), name
    assert named_resources["NULL"] == NULL_RESOURCE and named_resources["MISSING"] == NULL_RESOURCE
    with pytest.raises(KeyError, match="Did you mean `gpu.small`"):
        named_resources["gpu.smal"]


def test_specs_api_module_names_are_the_specs_names() -> None:
    """TorchX's docs spell types as ``torchx.specs.api.X``; ours are the same objects as ``specs.X``."""
    import jupyter_sched.specs as specs
    import jupyter_sched.specs.api as specs_api

    for name in specs.__all__:
        assert getattr(specs_api, name) is getattr(specs, name), name


def test_registry_has_the_documented_scheduler_names() -> None:
    """REF §2.3: ``local_cwd`` and ``local_docker`` are registered; the default is the first entry (S002)."""
    from jupyter_sched.schedulers import get_default_scheduler_name, get_scheduler_factories

    factories = get_scheduler_factories()
    assert {"local_cwd", "local_docker"} <= set(factories)
    assert get_default_scheduler_name() == next(iter(factories))


# -- end-to-end: TorchX user code, only the imports changed ------------------------------------------------------


def _wait_terminal(scheduler: Any, app_id: str, timeout: float = 60.0) -> Any:
    wait_until(lambda: scheduler.describe(app_id).state in (AppState.SUCCEEDED, AppState.FAILED,
                                                            AppState.CANCELLED), timeout, f"{app_id} to end")
    return scheduler.describe(app_id)


def test_e2e_local_cwd_submit_describe_log_iter(log_dir: str) -> None:
    # was: from torchx.schedulers import get_scheduler_factories
    #      from torchx.schedulers.api import Stream
    #      from torchx.specs import AppDef, AppState, Role, macros
    from jupyter_sched.schedulers import get_scheduler_factories
    from jupyter_sched.schedulers.api import DescribeAppResponse, Stream
    from jupyter_sched.specs import AppDef, AppState, Role, macros

    scheduler = get_scheduler_factories()["local_cwd"](session_name="parity")
    try:
        role = Role("echo", "ignored-by-local_cwd", entrypoint="sh",
                    args=["-c", f"echo out-{macros.replica_id}; echo err-{macros.replica_id} >&2"],
                    num_replicas=2)  # fmt: skip
        app = AppDef("echo", [role])
        cfg = scheduler.run_opts().cfg_from_str(f"log_dir={log_dir},prepend_cwd=false")
        app_id = scheduler.submit(app, cfg)
        assert scheduler.exists(app_id)

        resp = _wait_terminal(scheduler, app_id)
        assert isinstance(resp, DescribeAppResponse)
        assert resp.app_id == app_id and resp.state == AppState.SUCCEEDED
        assert resp.ui_url and resp.ui_url.startswith("file://")

        for k in range(2):
            out = list(scheduler.log_iter(app_id, "echo", k, streams=Stream.STDOUT))
            err = list(scheduler.log_iter(app_id, "echo", k=k, streams=Stream.STDERR))
            both = list(scheduler.log_iter(app_id, "echo", k=k, should_tail=True))  # default: combined
            assert out == [f"out-{k}\n"] and err == [f"err-{k}\n"]
            assert sorted(both) == sorted(out + err)
        assert list(scheduler.log_iter(app_id, "echo", 1, regex="^err")) == ["err-1\n"]
        with pytest.raises(ValueError):  # S002: an unsupported ``streams`` raises ValueError
            scheduler.log_iter(app_id, "echo", 0, streams="stdin")  # type: ignore[arg-type]
        # Layout documented in REF §3.3: <log_dir>/<session>/<app_id>/<role>/<k>/{stdout,stderr,combined}.log
        assert os.path.isfile(os.path.join(log_dir, "parity", app_id, "echo", "1", "combined.log"))

        assert scheduler.describe("echo-doesnotexist") is None
        assert not scheduler.exists("echo-doesnotexist")
    finally:
        scheduler.close()
        scheduler.close()  # S002: close may be called multiple times


def test_e2e_local_create_scheduler_dryrun_schedule_cancel(log_dir: str) -> None:
    # was: from torchx.schedulers.local_scheduler import PopenRequest, ReplicaParam, create_scheduler
    #      from torchx.specs import AppDef, AppDryRunInfo, AppState, Role
    from jupyter_sched.schedulers.local_scheduler import PopenRequest, ReplicaParam, create_scheduler
    from jupyter_sched.specs import AppDef, AppDryRunInfo, AppState, Role

    scheduler = create_scheduler(session_name="parity")  # the module's factory; its default image is the CWD
    try:
        app = AppDef(name="sleeper", roles=[Role("sleep", "unused", entrypoint="sleep", args=["600"])])
        cfg = {"log_dir": log_dir}
        # S002: submit can be trivially implemented by submit_dryrun followed by schedule
        dryrun_info = scheduler.submit_dryrun(app, cfg)
        assert isinstance(dryrun_info, AppDryRunInfo)
        request = dryrun_info.request
        assert isinstance(request, PopenRequest)
        (param,) = request.role_params["sleep"]
        assert isinstance(param, ReplicaParam) and param.args == ["sleep", "600"]
        assert param.cwd == os.getcwd()  # S003: CWDImageProvider uses the current working directory
        assert dryrun_info._app is not None and dryrun_info._app.name == "sleeper"  # REF §2.1 back-references
        assert dryrun_info._cfg["log_dir"] == log_dir
        assert "sleep" in repr(dryrun_info)

        app_id = scheduler.schedule(dryrun_info)
        assert app_id == request.app_id
        wait_until(lambda: scheduler.describe(app_id).state == AppState.RUNNING, 60, f"{app_id} to run")
        scheduler.cancel(app_id)
        scheduler.cancel(app_id)  # S002: idempotent
        assert _wait_terminal(scheduler, app_id).state == AppState.CANCELLED
    finally:
        scheduler.close()


def test_e2e_local_scheduler_with_directory_images(log_dir: str, tmp_path: Any) -> None:
    # was: from torchx.schedulers.local_scheduler import (
    #          CWDImageProvider, LocalDirectoryImageProvider, LocalScheduler)
    from jupyter_sched.schedulers.local_scheduler import (
        CWDImageProvider,
        LocalDirectoryImageProvider,
        LocalScheduler,
    )
    from jupyter_sched.specs import AppDef, AppState, Role

    image = tmp_path / "img"
    image.mkdir()
    script = image / "run.sh"
    script.write_text("#!/bin/sh\necho \"cwd=$(pwd) arg=$1\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)

    # S003: LocalScheduler(session_name, image_provider_class, cache_size=100, extra_paths=None)
    scheduler = LocalScheduler("parity", LocalDirectoryImageProvider, 100, None)
    try:
        # S003: a relative entrypoint resolves as img_root/role.entrypoint; the child runs in img_root
        app = AppDef("dirimg", [Role("main", str(image), entrypoint="run.sh", args=["x"])])
        app_id = scheduler.submit(app, cfg={"log_dir": log_dir})
        assert _wait_terminal(scheduler, app_id).state == AppState.SUCCEEDED
        assert list(scheduler.log_iter(app_id, "main")) == [f"cwd={image} arg=x\n"]

        provider = LocalDirectoryImageProvider({})
        assert provider.fetch(str(image)) == str(image)
        with pytest.raises(ValueError):  # S003: fetch(Image(name="foobar")) raises ValueError
            provider.fetch("foobar")
        with pytest.raises(ValueError):  # S003: a directory that does not exist raises ValueError
            provider.fetch(str(tmp_path / "dir" / "that" / "does" / "not_exist"))
        assert CWDImageProvider({}).fetch("/tmp/foobar") == os.getcwd()  # S003: the image name is ignored
        assert CWDImageProvider({}).fetch("foobar:latest") == os.getcwd()
    finally:
        scheduler.close()


def test_parse_mounts_accepts_the_documented_syntax() -> None:
    """S000 "Mounts": bind, named volume and device tokens, as components pass them (one string each)."""
    # was: from torchx.specs import BindMount, DeviceMount, VolumeMount, parse_mounts
    from jupyter_sched.specs import BindMount, DeviceMount, VolumeMount, parse_mounts

    assert parse_mounts([
        "type=bind,src=/host/data,dst=/data,readonly",
        "type=volume,src=cache,dst=/cache",
        "type=device,src=/dev/fuse,permissions=rw",
        "type=device,src=/dev/null,dst=/dev/nil",
    ]) == [
        BindMount(src_path="/host/data", dst_path="/data", read_only=True),
        VolumeMount(src="cache", dst_path="/cache", read_only=False),
        DeviceMount(src_path="/dev/fuse", dst_path="/dev/fuse", permissions="rw"),
        DeviceMount(src_path="/dev/null", dst_path="/dev/nil", permissions="rwm"),
    ]  # fmt: skip


def test_e2e_local_docker_submit_describe_list_log_iter_cancel(tmp_path: Any, docker_engine: None) -> None:
    # was: from torchx.schedulers.docker_scheduler import create_scheduler
    #      from torchx.specs import AppDef, AppState, Role, macros, parse_mounts
    from jupyter_sched.schedulers.docker_scheduler import create_scheduler
    from jupyter_sched.specs import AppDef, AppState, Role, macros, parse_mounts

    session = f"parity-{random_id()}"
    scheduler = create_scheduler(session_name=session)
    try:
        (tmp_path / "msg").write_text("from the host\n")
        greet = Role(
            "greet", BUSYBOX, entrypoint="sh",
            args=["-c", f"echo hello {macros.replica_id} $GREETING$OTHER; cat /data/msg"],
            num_replicas=2,
            mounts=parse_mounts([f"type=bind,src={tmp_path},dst=/data,readonly"]),
        )
        app = AppDef("hello", [greet])
        # S000: env=ENV1:v1,ENV2:v2 or ENV1:V1;ENV2:V2
        cfg = scheduler.run_opts().cfg_from_str("env=GREETING:hi;OTHER:!")
        assert cfg == {"env": {"GREETING": "hi", "OTHER": "!"}}
        app_id = scheduler.submit(app, cfg=cfg)
        resp = _wait_terminal(scheduler, app_id, timeout=120)
        assert resp.state == AppState.SUCCEEDED
        replicas = sorted((r.id, r.state) for rs in resp.roles_statuses for r in rs.replicas)
        assert replicas == [(0, AppState.SUCCEEDED), (1, AppState.SUCCEEDED)]
        assert list(scheduler.log_iter(app_id, "greet", k=1)) == ["hello 1 hi!\n", "from the host\n"]
        listed = [r for r in scheduler.list() if r.app_id == app_id]
        assert [(r.app_id, r.state) for r in listed] == [(app_id, AppState.SUCCEEDED)]

        sleeper = AppDef("sleeper", [Role("sleep", BUSYBOX, entrypoint="sleep", args=["600"])])
        sleeper_id = scheduler.submit(sleeper, {})
        wait_until(lambda: scheduler.describe(sleeper_id).state == AppState.RUNNING, 120, "sleeper to run")
        scheduler.cancel(sleeper_id)
        # TorchX 0.7 ends a cancelled docker app FAILED (exit 137); ours says CANCELLED (README "What we fixed")
        assert _wait_terminal(scheduler, sleeper_id, timeout=120).state == AppState.CANCELLED
        assert scheduler.describe(f"{app_id}-unknown") is None
    finally:
        remove_session(session)
        scheduler.close()
