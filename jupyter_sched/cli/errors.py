"""Exceptions of the command line, and the exit codes they map to (see ``cli.main``).

They are the front-end layer's errors (:mod:`jupyter_sched.frontend.errors`) under the command line's
names: parsing and lookups live in that layer, shared with the notebook, and raise these.
"""

from __future__ import annotations

from jupyter_sched.frontend.errors import CommandError as CliError
from jupyter_sched.frontend.errors import ParserExit as CliExit
from jupyter_sched.frontend.errors import UsageError as CliUsageError

__all__ = ["CliError", "CliExit", "CliUsageError"]
