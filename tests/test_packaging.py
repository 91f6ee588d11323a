"""The development venv has both of jupyter_sched's Jupyter extensions enabled, as a wheel's install has them.

A contributor who follows the README's set-up runs ``jupyter lab`` from ``.venv`` and expects the Jobs sidebar:
the server extension comes with the editable install (``etc/jupyter/jupyter_server_config.d/jupyter_sched.json``,
the file a wheel installs), the JupyterLab extension with ``scripts/setup/labextension.sh``, which builds it and
links it into the venv as JupyterLab's extension template does (``jupyter labextension develop --overwrite .``).
These tests ask the venv's own ``jupyter`` what it enables, with the user's Jupyter dirs and any
``JUPYTER_PATH`` out of the way, so only the venv (and the machine's system dirs) can answer.

What a wheel built from a clean clone and ``pip install .`` give is checked by ``scripts/ci/wheel_smoke.sh``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import missing_engine

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "jupyter_sched" / "labextension"
JUPYTER = Path(sys.executable).with_name("jupyter")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _jupyter(tmp_path: Path, *args: str) -> str:
    """``jupyter ARGS`` from this venv, its output without colours; user-level dirs are empty temp dirs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        NO_COLOR="1",
        PYTHONNOUSERSITE="1",
    )
    proc = subprocess.run(
        [str(JUPYTER), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    out = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, f"jupyter {' '.join(args)} exited {proc.returncode}:\n{out}"
    return out


def _sections(out: str, header: re.Pattern[str]) -> Dict[str, List[str]]:
    """The listing's lines under each header line (a directory), stripped."""
    sections: Dict[str, List[str]] = {}
    current = None
    for line in out.splitlines():
        m = header.match(line)
        if m:
            current = sections.setdefault(m.group(1).rstrip("/"), [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return sections


@pytest.fixture(scope="module")
def built() -> None:
    if not JUPYTER.exists():
        missing_engine("jupyter", f"no {JUPYTER} (bash scripts/setup/python.sh)")
    if not (BUILD / "package.json").is_file():
        missing_engine("the JupyterLab extension build", f"no {BUILD} (bash scripts/setup/labextension.sh)")


def test_the_venv_enables_the_jupyterlab_extension_from_the_checkout(built: None, tmp_path: Path) -> None:
    out = _jupyter(tmp_path, "labextension", "list")
    venv_dir = os.path.join(sys.prefix, "share", "jupyter", "labextensions")
    # a header is a directory alone on its line; extensions are indented under it
    listed = _sections(out, re.compile(r"^(/\S*)\s*$")).get(venv_dir.rstrip("/"), [])
    mine = [line for line in listed if line.split()[0] == "jupyter-sched"]
    assert mine, f"jupyter-sched is not among {venv_dir}'s extensions (bash scripts/setup/labextension.sh):\n{out}"
    assert re.fullmatch(r"jupyter-sched v\S+ enabled OK( .*)?", mine[0]), mine[0]
    # the venv's copy is the checkout's build itself, so a rebuild shows at the next page load
    assert (Path(venv_dir) / "jupyter-sched").resolve() == BUILD.resolve(), (
        f"{venv_dir}/jupyter-sched is not a link to {BUILD}: a copy goes stale at the next rebuild"
    )


def test_the_venv_enables_the_server_extension(built: None, tmp_path: Path) -> None:
    out = _jupyter(tmp_path, "server", "extension", "list")
    config_dir = os.path.join(sys.prefix, "etc", "jupyter")
    listed = _sections(out, re.compile(r"^Config dir: (\S+)\s*$")).get(config_dir, [])
    assert "jupyter_sched.server enabled" in listed, f"not enabled by {config_dir}:\n{out}"
    assert any(re.fullmatch(r"jupyter_sched\.server\s+\S*\s*OK", line) for line in listed), (
        f"jupyter_sched.server is enabled but does not load:\n{out}"
    )
