"""The table of named resources (``cpu.small``, ``gpu.large``, ``aws_p4d.24xlarge``...) and ``resource()``.

It sits above the catalogs it reads (``named_resources_generic``, ``named_resources_aws``), which build
plain :class:`~jupyter_sched.specs.request.resources.Resource` values and know nothing of the table.
"""

from __future__ import annotations

import copy
import difflib
from typing import Dict, Iterator, Mapping, Optional

from jupyter_sched.specs import named_resources_aws, named_resources_generic
from jupyter_sched.specs.request.resources import NULL_RESOURCE, Resource

__all__ = ["NamedResources", "get_named_resources", "named_resources", "resource"]


class NamedResources(Mapping[str, Resource]):
    """Read-only table of named resources; an unknown name suggests the closest known one.

    Entries come from the built-in tables (generic sizes, AWS instance types) plus the entry-point group
    ``jupyter_sched.named_resources`` (each entry point is a zero-argument callable returning a Resource);
    plugins add to the built-ins, they never replace the whole table.
    """

    def __init__(self, table: Optional[Mapping[str, Resource]] = None) -> None:
        if table is None:
            builtin = {**named_resources_generic.NAMED_RESOURCES, **named_resources_aws.NAMED_RESOURCES}
            table = {name: make() for name, make in builtin.items()}
            self._plugins_loaded = False
        else:
            self._plugins_loaded = True
        self._table: Dict[str, Resource] = dict(table)
        self._table.setdefault("NULL", NULL_RESOURCE)
        self._table.setdefault("MISSING", NULL_RESOURCE)

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group="jupyter_sched.named_resources"):
            self._table[ep.name] = ep.load()()

    def __getitem__(self, name: str) -> Resource:
        self._load_plugins()
        try:
            return copy.deepcopy(self._table[name])
        except KeyError:
            close = difflib.get_close_matches(name, list(self._table), n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            raise KeyError(
                f"No named resource found for `{name}`.{hint} Known: {', '.join(sorted(self._table))}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(self._table)

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._table)


named_resources: NamedResources = NamedResources()


def resource(
    cpu: Optional[int] = None,
    gpu: Optional[int] = None,
    memMB: Optional[int] = None,  # noqa: N803 - TorchX's parameter name
    h: Optional[str] = None,
) -> Resource:
    """A Resource from either a named resource ``h`` (which wins) or explicit values.

    Unspecified values default to 2 CPUs, 0 GPUs and 1024 MB. Unlike TorchX, an explicit ``0`` is kept
    as ``0`` (``cpu=0`` does not silently become 2).
    """
    if h:
        return get_named_resources(h)
    return Resource(
        cpu=2 if cpu is None else cpu,
        gpu=0 if gpu is None else gpu,
        memMB=1024 if memMB is None else memMB,
    )


def get_named_resources(res: str) -> Resource:
    """The named resource ``res`` (a fresh copy): built-in, or registered in the entry-point group
    ``jupyter_sched.named_resources``. An unknown name raises KeyError suggesting the closest one."""
    return named_resources[res]
