"""Finding components by name, under TorchX's module path (``torchx.specs.finder``).

The finding itself is :mod:`jupyter_sched.components.finder` (built-ins, the ``jupyter_sched.components``
entry-point group, ``path/file.py:fn`` and ``module.path:fn``); TorchX's view of it (:class:`FoundComponent`,
:class:`ModuleComponentsFinder` and the functions it documents) is :mod:`jupyter_sched.components.found`. This
module only gives them the path TorchX documents, like ``specs/api.py``: it is a facade above the component
library, and nothing in the data model imports it.
:class:`ComponentNotFoundException` is the error TorchX code catches; ours
(``components.errors.ComponentNotFoundError``) is a subclass of it and of ``ValueError``.
"""

from jupyter_sched.components.errors import ComponentNotFoundException, ComponentValidationException
from jupyter_sched.components.found import (
    ComponentsFinder,
    CustomComponentsFinder,
    FoundComponent,
    ModuleComponentsFinder,
    get_builtin_source,
    get_component,
    get_components,
    module_relname,
)
from jupyter_sched.components.modules import is_namespace_package, is_package

__all__ = [
    "ComponentNotFoundException", "ComponentValidationException", "ComponentsFinder", "CustomComponentsFinder",
    "FoundComponent", "ModuleComponentsFinder", "get_component", "get_builtin_source", "get_components",
    "is_namespace_package", "is_package", "module_relname",
]  # fmt: skip
