"""pytest support for ``pytest --nbval notebooks/`` (not part of the tutorials).

* Each notebook runs against a fresh, empty ``JUPYTER_SCHED_LOG_DIR`` (as ``scripts/notebooks.py`` does
  when it stores the outputs), so ``%sched_list`` shows that notebook's jobs only, not the jobs of other
  notebooks or of the person's own sessions.
* A job output's ``application/vnd.jupyter-sched.job+json`` is not compared (its text/html record is).
* nbval applies ``--nbval-sanitize-with`` to string outputs only; a structured output (a dry run's
  ``application/json``) would be compared raw, random app ids and temp paths included. Such values are
  serialised first, so the same sanitizers apply to them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

import pytest

try:
    from nbval.plugin import IPyNbCell, IPyNbFile
except ImportError:  # pragma: no cover - nbval is in the test extra
    IPyNbCell = IPyNbFile = None

STATE_PREFIX = "jsched-notebooks-"

if IPyNbCell is not None:
    _sanitize_text = IPyNbCell.sanitize

    def _sanitize(self: Any, value: Any) -> Any:
        if isinstance(value, (dict, list)):
            value = json.dumps(value, indent=1, sort_keys=True)
        return _sanitize_text(self, value)

    IPyNbCell.sanitize = _sanitize

    _file_init = IPyNbFile.__init__

    def _init(self: Any, *args: Any, **kwargs: Any) -> None:
        _file_init(self, *args, **kwargs)
        # A job's output also carries which job it shows, for JupyterLab (handle, state, when, whether
        # final). nbval ignores display updates, so it compares the launch-time copy against the final one
        # the stored notebook holds (nbclient and JupyterLab apply the updates); the text/html record is
        # compared. nbval skips random widget model ids the same way.
        self.skip_compare = self.skip_compare + ("application/vnd.jupyter-sched.job+json",)

    IPyNbFile.__init__ = _init


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a notebook's kernel starts (with its first cell): a fresh state dir for that notebook."""
    notebook = item.parent
    if IPyNbFile is None or not isinstance(notebook, IPyNbFile) or hasattr(notebook, "_jsched_state"):
        return
    state = tempfile.mkdtemp(prefix=STATE_PREFIX)
    notebook._jsched_state = state
    os.environ["JUPYTER_SCHED_LOG_DIR"] = state
    item.session.config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))
