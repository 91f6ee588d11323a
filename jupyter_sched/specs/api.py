"""The data model under the module path TorchX's interface documents its types at (``torchx.specs.api``).

Its reference documentation spells types as ``torchx.specs.api.AppState``, ``...Role``, ``...runopts``
and so on, and code written for it imports them from there. This module re-exports the very same objects
as :mod:`jupyter_sched.specs` (no copies, no wrappers), so ``from jupyter_sched.specs.api import Role``
works and ``isinstance`` checks agree whichever path was used. New code should import from
:mod:`jupyter_sched.specs`.
"""

from jupyter_sched.specs import *  # noqa: F401,F403 (a pure re-export)
from jupyter_sched.specs import __all__ as __all__
