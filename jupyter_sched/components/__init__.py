"""Components: typed Python functions that return an :class:`~jupyter_sched.specs.AppDef`.

A component's signature becomes its command-line flags and its docstring its ``--help``, so the same
component runs from a terminal (``jupyter-sched run utils.sh echo hi``), from a script
(``runner.run_component("utils.sh", ["echo", "hi"], "local_cwd")``) and from a notebook
(``%sched_run utils.sh echo hi``). Built-ins live in :mod:`.utils` and :mod:`.dist`; others come from the
entry-point group ``jupyter_sched.components`` or ``path/to/file.py:function``.

Writing one::

    from jupyter_sched.specs import AppDef, Role

    def greet(who: str = "world", times: int = 1) -> AppDef:
        \"\"\"Greets someone.

        Args:
            who: whom to greet
            times: how many replicas greet
        \"\"\"
        return AppDef("greet", [Role("greet", "busybox", entrypoint="echo", args=[f"hi {who}"],
                                     num_replicas=times)])

    # jupyter-sched run greet.py:greet --who you --times 2
"""

from jupyter_sched.components.builder import Component, Flag, build_component
from jupyter_sched.components.errors import (
    ComponentArgError,
    ComponentError,
    ComponentHelp,
    ComponentNotFoundError,
    ComponentValidationError,
    MisplacedFlagError,
)
from jupyter_sched.components.finder import (
    get_component,
    list_builtins,
    list_components,
    materialize,
)

__component_modules__ = ("dist", "utils")
"""The submodules that hold the built-ins (the rest is machinery; see :mod:`.modules`)."""

__all__ = [
    "Component", "Flag", "build_component",
    "ComponentArgError", "ComponentError", "ComponentHelp", "ComponentNotFoundError", "ComponentValidationError",
    "MisplacedFlagError", "get_component", "list_builtins", "list_components", "materialize",
]  # fmt: skip
