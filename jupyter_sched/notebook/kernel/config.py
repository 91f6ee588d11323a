"""The configuration of the notebook layer: traits of :class:`SchedMagics` and a snapshot for the panes.

The traits live in :class:`SchedConfig`, a mixin of ``SchedMagics``, so that they are set from
``ipython_kernel_config.py`` (``c.SchedMagics.refresh_interval = 0.5``) and listed and changed live with
``%config SchedMagics``. Panes and threads never read traits: they get a frozen :class:`PaneSettings`
taken when they are built, so a ``%config`` in one cell cannot change a pane half-way through a render.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Tuple
from typing import List as TList

from traitlets import Bool, Dict, Float, HasTraits, Int, List, TraitError, Unicode, default, validate

from jupyter_sched.frontend.logview.log_model import KEEP_LINES, MAX_LINE_CHARS

NONINTERACTIVE_ENV = "JUPYTER_SCHED_NONINTERACTIVE"


@dataclass(frozen=True)
class PaneSettings:
    """What a pane needs to know, frozen when the pane is made."""

    refresh_interval: float = 0.25
    status_interval: float = 1.0
    tail_lines: int = 400
    keep_lines: int = KEEP_LINES
    max_line_chars: int = MAX_LINE_CHARS
    #: Characters of log HTML per update: colour markup can make one 4,000-character line ~150 KB, so
    #: lines x characters alone does not bound what a tick sends (or costs to render).
    max_update_chars: int = 256_000


class SchedConfig(HasTraits):
    """The configurable traits of ``SchedMagics`` (see the module docstring)."""

    default_scheduler = Unicode(
        "",
        help="Scheduler used when %sched_run is given no -s/--scheduler. Empty: as `jupyter-sched run`"
        " (the project's [tool.jupyter_sched] default_scheduler, else local_cwd).",
    ).tag(config=True)
    scheduler_cfg = Dict(
        {},
        help="Default run options per scheduler, e.g. {'local_docker': {'copy_env': ['HF_*']}}."
        " Values may be typed or strings in --cfg syntax; --cfg given to %sched_run wins.",
    ).tag(config=True)
    session_name = Unicode(
        "default",
        help="Session name: apps are listed, found after a kernel restart and addressed"
        " (scheduler://session/app_id) per session. The CLI uses 'default' too.",
    ).tag(config=True)
    log_dir = Unicode(
        "",
        help="Where job state and logs live (the local backend's log_dir, and the notebook's job registry)."
        " Empty: $JUPYTER_SCHED_LOG_DIR, else ~/.local/state/jupyter_sched/logs. Setting it exports"
        " JUPYTER_SCHED_LOG_DIR in the kernel so every local scheduler and restarted kernel agrees on it.",
    ).tag(config=True)
    refresh_interval = Float(
        0.25, help="Seconds between updates of a log pane (a pane sends at most one message per interval)."
    ).tag(config=True)
    status_interval = Float(1.0, help="Seconds between status checks of a running app.").tag(config=True)
    tail_lines = Int(400, help="Log lines shown in a log pane (the rest are counted, not sent).").tag(config=True)
    keep_lines = Int(KEEP_LINES, help="Log lines kept in kernel memory per replica stream.").tag(config=True)
    max_line_chars = Int(MAX_LINE_CHARS, help="Characters kept per log line; the rest are counted.").tag(config=True)
    wait = Bool(False, help="Block %sched_run until the app ends (as if --wait were given).").tag(config=True)
    cancel_on_interrupt = Bool(
        False,
        help="Cancel the app when the kernel is interrupted during a blocking %sched_run/%sched_logs."
        " Default: interrupting only stops watching (detaches); the app keeps running.",
    ).tag(config=True)
    interactive = Bool(
        help="Show live widgets. Default: True in a Jupyter kernel with ipywidgets, unless"
        f" ${NONINTERACTIVE_ENV}=1; False in terminal IPython. When False the magics print plain text."
    ).tag(config=True)
    list_schedulers = List(
        Unicode(),
        default_value=[],
        help="Schedulers %sched_list queries besides the default one and those used in this kernel,"
        " e.g. ['local_docker'] to see docker apps again after a kernel restart.",
    ).tag(config=True)

    @default("interactive")
    def _interactive_default(self) -> bool:
        if os.environ.get(NONINTERACTIVE_ENV, "").lower() in ("1", "true", "yes"):
            return False
        shell = getattr(self, "shell", None)
        if shell is None or getattr(shell, "kernel", None) is None:
            return False
        import importlib.util

        return importlib.util.find_spec("ipywidgets") is not None

    @validate("scheduler_cfg")
    def _check_scheduler_cfg(self, proposal: Any) -> Any:
        """Each value is the run options of one scheduler as a dict; the options themselves are checked
        against the scheduler when %sched_run uses them (that needs the scheduler's runopts)."""
        for name, opts in proposal["value"].items():
            if not isinstance(opts, Mapping):
                hint = f" (as a dict: {{{name!r}: {{'cancel_grace': 2}}}})"
                raise TraitError(
                    f"scheduler_cfg[{name!r}] = {opts!r} must be a dict of run options{hint}"
                    if not isinstance(opts, str) else
                    f"scheduler_cfg[{name!r}] = {opts!r} must be a dict of run options, not a --cfg string;"
                    f" write {{{name!r}: {{'cancel_grace': '2'}}}} instead of {{{name!r}: 'cancel_grace=2'}}"
                )  # fmt: skip
        return proposal["value"]

    @validate("refresh_interval")
    def _check_refresh(self, proposal: Any) -> float:
        return _at_least(proposal, 0.05)

    @validate("status_interval")
    def _check_status(self, proposal: Any) -> float:
        return _at_least(proposal, 0.1)

    @validate("tail_lines", "keep_lines", "max_line_chars")
    def _check_positive(self, proposal: Any) -> int:
        if proposal["value"] < 1:
            raise TraitError(f"{proposal['trait'].name} must be >= 1, got {proposal['value']}")
        return int(proposal["value"])

    def pane_settings(self) -> PaneSettings:
        return PaneSettings(
            refresh_interval=self.refresh_interval,
            status_interval=self.status_interval,
            tail_lines=self.tail_lines,
            keep_lines=max(self.keep_lines, self.tail_lines),
            max_line_chars=self.max_line_chars,
        )


def checked_config(config: Any, section: str = "SchedMagics") -> Tuple[Any, TList[str]]:
    """``config`` without the ``c.SchedMagics.*`` values its traits refuse, and one message per value
    dropped (naming it and why). A refused value would make the whole magics class fail to build (traitlets
    rolls back every value and raises), i.e. ``%load_ext`` fail because of one typo in
    ``ipython_kernel_config.py`` or an earlier bad ``%config`` (IPython keeps it in the shell's config)."""
    from copy import deepcopy

    from traitlets.config import LazyConfigValue

    if config is None or section not in config:
        return config, []
    probe = SchedConfig()
    bad, problems = [], []
    for name, value in list(config[section].items()):
        if name not in probe.trait_names() or not probe.trait_metadata(name, "config"):
            continue  # traitlets warns about unknown names itself
        try:
            if isinstance(value, LazyConfigValue):  # e.g. c.SchedMagics.list_schedulers.append(...)
                value = deepcopy(value).get_value(getattr(probe, name))  # get_value caches: not the original
            setattr(probe, name, value)
        except Exception as e:  # noqa: BLE001 - TraitError, or whatever a lazy value raises
            bad.append(name)
            problems.append(f"{section}.{name} = {value!r} ignored (using the default): {e}")
    if not bad:
        return config, []
    good = deepcopy(config)
    for name in bad:
        del good[section][name]
    return good, problems


def _at_least(proposal: Any, low: float) -> float:
    value = float(proposal["value"])
    if value < low:
        raise TraitError(f"{proposal['trait'].name} must be >= {low} seconds, got {value}")
    return value
