"""Project configuration: the ``[tool.jupyter_sched]`` table of the nearest ``pyproject.toml``.

Found by walking up from the current directory to the first ``pyproject.toml`` that has the table, e.g.::

    [tool.jupyter_sched]
    default_scheduler = "local_cwd"

    [tool.jupyter_sched.schedulers.local_cwd]      # default --cfg of a scheduler
    prepend_cwd = true

    [tool.jupyter_sched.components."utils.sh"]      # default flags of a component
    num_replicas = 2
    env = { LOGLEVEL = "INFO" }

Command-line flags (and a magic line's) override all of it. It sits in the front-end layer, below both
the command line and the notebook, as TorchX keeps its config below its CLI (``torchx/runner/config.py``).
Reading TOML needs Python 3.11 (``tomllib``) or the ``tomli`` package; on 3.10 without ``tomli`` a config
table is ignored with a warning.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, Optional

FILE_NAME = "pyproject.toml"
TABLE = "[tool.jupyter_sched"
KEYS = ("default_scheduler", "schedulers", "components")


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass
class ProjectConfig:
    """What the project's config says; empty when there is none."""

    path: Optional[str] = None
    default_scheduler: Optional[str] = None
    schedulers: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    """scheduler name -> run option defaults (typed as written in TOML; text is cast like ``--cfg``)."""
    components: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    """component name -> flag defaults (passed to ``materialize`` as ``defaults``)."""

    def scheduler_cfg(self, scheduler: str) -> Dict[str, Any]:
        return dict(self.schedulers.get(scheduler, {}))

    def where(self, *keys: str) -> str:
        """``pyproject.toml [tool.jupyter_sched.schedulers.local_cwd]``: where a value came from."""
        table = ".".join(["tool.jupyter_sched", *(f'"{k}"' if "." in k else k for k in keys)])
        return f"{self.path} [{table}]"


def _toml() -> Optional[ModuleType]:
    """``tomllib`` (3.11+), else ``tomli`` (a dependency on 3.10, see pyproject.toml)."""
    try:  # mypy checks as Python 3.10, which has no tomllib
        import tomllib  # type: ignore[import-not-found,unused-ignore]

        return tomllib
    except ModuleNotFoundError:
        pass
    try:
        import tomli

        return tomli
    except ModuleNotFoundError:
        return None


def find_config(start: Optional[str] = None) -> Optional[str]:
    """The nearest ``pyproject.toml`` at or above ``start`` (default: cwd) that mentions ``[tool.jupyter_sched``."""
    here = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(here, FILE_NAME)
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as f:
                    if TABLE in f.read():
                        return candidate
            except OSError:
                pass
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def load_config(start: Optional[str] = None, path: Optional[str] = None) -> ProjectConfig:
    """Reads the project config (``path``, or the one :func:`find_config` finds). Raises ConfigError for a
    file that is not valid TOML or has unknown keys; returns an empty config when there is none."""
    path = path or find_config(start)
    if path is None:
        return ProjectConfig()
    toml = _toml()
    if toml is None:
        warnings.warn(
            f"ignoring {path}: reading [tool.jupyter_sched] needs Python 3.11+ or `pip install tomli`",
            stacklevel=2,
        )
        return ProjectConfig()
    try:
        with open(path, "rb") as f:
            data = toml.load(f)
    except (OSError, ValueError) as e:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"cannot read {path}: {e}") from None
    table = data.get("tool", {}).get("jupyter_sched")
    if table is None:
        return ProjectConfig()
    config = ProjectConfig(path=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.jupyter_sched must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"{config.where()}: unknown key {unknown[0]!r}; valid keys: {', '.join(KEYS)}"
        )
    default = table.get("default_scheduler")
    if default is not None and not isinstance(default, str):
        raise ConfigError(f"{config.where()}: default_scheduler must be a string, got {default!r}")
    config.default_scheduler = default
    for key in ("schedulers", "components"):
        sub = table.get(key, {})
        if not isinstance(sub, dict) or not all(isinstance(v, dict) for v in sub.values()):
            raise ConfigError(
                f"{config.where(key)}: must hold one table per name, e.g. [tool.jupyter_sched.{key}.NAME]"
            )
        setattr(config, key, {name: dict(values) for name, values in sub.items()})
    for name in config.components:
        if name in ("utils", "dist"):
            raise ConfigError(
                f"{config.where('components', name)}: a component name with a dot must be quoted,"
                f' e.g. [tool.jupyter_sched.components."{name}.sh"]'
            )
    return config
