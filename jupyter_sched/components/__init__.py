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

Its modules:

* :mod:`.utils`, :mod:`.dist` -- the built-ins (``utils.echo``, ``utils.sh``, ..., ``dist.spmd``,
  ``dist.ddp``); :mod:`._common` their shared roles and apps; :mod:`._torchrun` what ``dist.ddp`` needs
  from torchrun; :mod:`.images` the images they run in; ``apps/`` the programs they run.
* :mod:`.finder` -- a component by name, and ``materialize``: a name and its arguments to an AppDef;
  :mod:`.found` the finder as TorchX's ``torchx.specs.finder`` describes it; :mod:`.modules` which
  functions of a module are components.
* :mod:`.builder` -- a component function to its flags, usage and help, and arguments to its AppDef;
  :mod:`.docstrings` a docstring to per-parameter help; :mod:`.types` the parameter types a component may
  declare.
* :mod:`.errors` -- errors of lookup, validation and argument parsing.
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
