"""Opt-in auto-loading: ``python -m jupyter_sched.notebook.autoload enable|disable|status``.

IPython has no drop-in configuration directory (one ``ipython_kernel_config.py`` per profile or
environment; ``jupyter-config/`` only reaches the Jupyter *server*), so a package cannot ship a file that
loads it into every kernel without clobbering someone else's. Instead this command edits the one file the
user chooses, idempotently, between marker lines it alone manages:

* default: the current IPython profile's ``ipython_kernel_config.py`` (``--profile``, ``--ipython-dir``);
* ``--sys-prefix``: ``{sys.prefix}/etc/ipython/ipython_kernel_config.py``, for every kernel of this env.

``enable`` appends ``jupyter_sched`` to ``c.InteractiveShellApp.extensions`` (kernels load it at start);
``--lazy`` instead declares the magics in ``c.MagicsManager.lazy_magics`` so the extension loads on the first
``%sched_*``. ``disable`` removes the block. Both print the file they touched.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

BEGIN = "# >>> jupyter_sched autoload (managed by `python -m jupyter_sched.notebook.autoload`) >>>"
END = "# <<< jupyter_sched autoload <<<"
CONFIG_FILE = "ipython_kernel_config.py"
MAGICS = (
    "sched_run", "sched_notebook", "sched_logs", "sched_status", "sched_job", "sched_list", "sched_cancel",
    "sched_describe",
)  # fmt: skip


def block(lazy: bool = False) -> str:
    if lazy:
        names = ", ".join(f'"{name}": "jupyter_sched"' for name in MAGICS)
        body = f"c.MagicsManager.lazy_magics.update({{{names}}})"
    else:
        body = 'c.InteractiveShellApp.extensions.append("jupyter_sched")'
    return f"{BEGIN}\n{body}\n{END}\n"


def config_path(profile: str = "default", ipython_dir: Optional[str] = None, sys_prefix: bool = False) -> str:
    """The ``ipython_kernel_config.py`` to edit."""
    if sys_prefix:
        return os.path.join(sys.prefix, "etc", "ipython", CONFIG_FILE)
    if ipython_dir is None:
        from IPython.paths import get_ipython_dir

        ipython_dir = get_ipython_dir()
    return os.path.join(ipython_dir, f"profile_{profile}", CONFIG_FILE)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _without_block(text: str) -> str:
    start = text.find(BEGIN)
    if start < 0:
        return text
    end = text.find(END, start)
    end = len(text) if end < 0 else end + len(END)
    if text[end:end + 1] == "\n":
        end += 1
    return text[:start] + text[end:]


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def enable(path: str, lazy: bool = False) -> bool:
    """Writes (or rewrites) the block; False if the file already had exactly that block."""
    text = _read(path)
    wanted = block(lazy)
    if wanted in text:
        return False
    rest = _without_block(text)
    if rest and not rest.endswith("\n"):
        rest += "\n"
    _write(path, rest + wanted)
    return True


def disable(path: str) -> bool:
    """Removes the block; False if there was none."""
    text = _read(path)
    if BEGIN not in text:
        return False
    _write(path, _without_block(text))
    return True


def status(path: str) -> str:
    text = _read(path)
    if BEGIN not in text:
        return "disabled"
    return "enabled (lazy)" if "lazy_magics" in text[text.find(BEGIN):] else "enabled"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jupyter_sched.notebook.autoload",
        description="Load jupyter_sched into every IPython kernel (or stop doing so) by editing one"
        " ipython_kernel_config.py between marker lines.",
    )
    parser.add_argument("action", choices=["enable", "disable", "status"])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--profile", default="default", help="IPython profile (default: default)")
    where.add_argument("--sys-prefix", action="store_true", help=f"{sys.prefix}/etc/ipython (this environment)")
    parser.add_argument("--ipython-dir", help="IPython directory (default: $IPYTHONDIR or ~/.ipython)")
    parser.add_argument("--lazy", action="store_true", help="load on the first %%sched_* magic instead of at start")
    args = parser.parse_args(argv)
    path = config_path(args.profile, args.ipython_dir, args.sys_prefix)
    if args.action == "enable":
        changed = enable(path, args.lazy)
        print(f"{'enabled' if changed else 'already enabled'}: {path}")
        print("New kernels load jupyter_sched; restart running kernels (or run %load_ext jupyter_sched).")
    elif args.action == "disable":
        changed = disable(path)
        print(f"{'disabled' if changed else 'was not enabled'}: {path}")
    else:
        print(f"{status(path)}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
