"""The architecture, checked: which package may import which, and no reach-ins.

README's picture is specs -> schedulers -> runner -> frontend -> {cli, functions -> notebook, server}, with
``logs/`` a pure leaf (``server/`` is the Jupyter server extension: a front end beside the notebook that no
other layer imports, and that imports neither the notebook nor IPython). These tests read every module's
source with :mod:`ast` (nothing is imported), so a violation names the file and line where it was written.

- **Layer imports.** Each package may import only the packages below it. ``notebook/`` never imports
  ``cli/`` (the shared front-end code lives in ``frontend/``), and only ``notebook/`` imports IPython
  or ipywidgets.
- **Wings.** Inside ``schedulers/``, each backend is a wing: its machinery in ``schedulers/<wing>/`` and its
  scheduler class at TorchX's module path (``<wing>_scheduler.py``, the face). A wing imports only itself,
  the shared ``schedulers/common/`` and the contract (the registry, ``api.py`` and our extensions); the
  shared place and the contract import no wing. Outside ``schedulers/``, code uses a backend through its face,
  the registry or the runner, not through its wing's modules.
- **No reach-ins.** No module uses another module's underscore names: neither ``from m import _x`` nor
  ``m._x`` / ``obj._x`` on something that is not ``self``/``cls``. Dunder names and a module's own
  names are fine.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

PKG = Path(__file__).resolve().parents[1] / "jupyter_sched"

#: package -> the packages of ours it may import (besides itself and the package root's __init__).
ALLOWED: Dict[str, Set[str]] = {
    "specs": set(),
    "logs": {"track"},  # the metric records' key rule and non-finite names, defined once by their writer
    "util": set(),  # TorchX's torchx.util path: entry-point loading (a leaf, like logs)
    # metrics from inside a job (standard library only, imported by training code): a leaf; the runner sets
    # its variables, the front ends read its files
    "track": set(),
    "schedulers": {"specs", "logs"},
    "components": {"specs", "util"},
    "runner": {"specs", "schedulers", "logs", "components", "track"},
    "frontend": {"specs", "schedulers", "logs", "components", "runner", "track"},
    # `jupyter-sched notebook` launches a notebook job, which is a function job (functions/notebooks/)
    "cli": {"specs", "schedulers", "logs", "components", "runner", "frontend", "functions", "track"},
    # function jobs (pickling, bootstrap, results), their Job and sweeps: a Job is the front ends' shared object
    "functions": {"specs", "schedulers", "components", "runner", "frontend", "track"},
    "notebook": {"specs", "schedulers", "logs", "components", "runner", "frontend", "functions", "track"},
    # the Jupyter server extension: the jobs API the JupyterLab extension reads (no kernel, no IPython)
    "server": {"specs", "schedulers", "logs", "runner", "frontend", "track"},
    "workspace": {"schedulers"},  # TorchX's module path for WorkspaceMixin: a re-export
}
#: Modules kept at a path TorchX documents that sits below what they wrap (a facade nothing below imports):
#: module -> the extra packages it may import.
TORCHX_PATHS: Dict[str, Set[str]] = {"specs/finder.py": {"components"}}
UI_LIBRARIES = ("IPython", "ipywidgets", "ipykernel", "traitlets")
#: Libraries a layer other than ``notebook/`` may import anyway: the server extension is configured the
#: way every Jupyter server extension is, with traitlets.
ALSO_ALLOWED: Dict[str, Set[str]] = {"server": {"traitlets"}}

#: The scheduler layer's wings -> the face that keeps the backend's class at TorchX's module path.
WINGS: Dict[str, str] = {
    "local": "local_scheduler",
    "docker": "docker_scheduler",
    "slurm": "slurm_scheduler",
    "torchx_bridge": "",  # its scheduler is reached through the registry's torchx: prefix only
}
SHARED = "common"
#: The modules loose in schedulers/ besides the faces: the registry, the contract and our extensions of it.
CONTRACT = {"__init__", "api", "timed_logs", "usage_api", "shared_files", "warm_start"}
FACES = {face: wing for wing, face in WINGS.items() if face}
MAX_LOOSE = 12  # loose modules in schedulers/ (a newcomer should see the wings, not a flat folder)
#: Modules outside schedulers/ that use a wing's module directly -> those modules (under schedulers/), and why.
#: Named by module, not by wing: the permission is for that one module, not for the wing's other rooms.
WING_USERS: Dict[str, Set[str]] = {
    # a function job checks a docker image's Python and cloudpickle through the engine client before launch
    "functions/calls/images.py": {"docker.engine"},
    # the exception the local backend's signal handler raises (SIGTERM to the CLI), from the stdlib-only module
    # that defines it: the face, local_scheduler, would load the whole backend for every verb
    "cli/main.py": {"local.processes.signals"},
    "cli/cmd_run.py": {"local.processes.signals"},
}


def _modules() -> Iterator[Tuple[Path, str, ast.Module]]:
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        layer = rel.parts[0][:-3] if len(rel.parts) == 1 else rel.parts[0]
        yield path, layer, ast.parse(path.read_text(), str(path))


def _imported(tree: ast.Module, path: Path) -> Iterator[Tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this file's package
                base = list(path.relative_to(PKG.parent).with_suffix("").parts[: -node.level])
                yield node.lineno, ".".join(base + ([node.module] if node.module else []))
            elif node.module:
                yield node.lineno, node.module


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PKG.parent)}:{line}"


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong: List[str] = []
    for path, layer, tree in _modules():
        if layer not in ALLOWED:
            continue
        for line, name in _imported(tree, path):
            parts = name.split(".")
            if parts[0] != "jupyter_sched" or len(parts) < 2:
                continue
            target = parts[1]
            if target in (layer, "__init__") or target in ALLOWED[layer]:
                continue
            if target in TORCHX_PATHS.get(str(path.relative_to(PKG)), set()):
                continue
            if target not in ALLOWED:  # a top-level module that is not a layer (e.g. __main__)
                continue
            wrong.append(f"{_where(path, line)}: {layer}/ imports {name}")
    assert not wrong, "\n".join(wrong)


def test_only_the_notebook_imports_ipython_and_widgets() -> None:
    wrong = [
        f"{_where(path, line)}: {name}"
        for path, layer, tree in _modules()
        if layer != "notebook"
        for line, name in _imported(tree, path)
        if name.split(".")[0] in UI_LIBRARIES and name.split(".")[0] not in ALSO_ALLOWED.get(layer, set())
    ]
    assert not wrong, "\n".join(wrong)


def _scheduler_part(name: str) -> str:
    """Which part of schedulers/ a dotted module name is in: a wing, ``common``, a face's wing, or the
    contract (``""``)."""
    parts = name.split(".")[2:]
    if not parts:
        return ""
    if parts[0] in WINGS or parts[0] == SHARED:
        return parts[0]
    return FACES.get(parts[0], "")


def test_each_wing_imports_only_itself_the_shared_place_and_the_contract() -> None:
    wrong: List[str] = []
    for path, layer, tree in _modules():
        rel = path.relative_to(PKG)
        if layer != "schedulers" or rel.name == "slurm_replica.py":
            continue
        here = _scheduler_part(".".join(("jupyter_sched",) + rel.with_suffix("").parts))
        for line, name in _imported(tree, path):
            if not name.startswith("jupyter_sched.schedulers."):
                continue
            there = _scheduler_part(name)
            if there in ("", here) or (there == SHARED and here != ""):
                continue
            if there == SHARED and rel.stem in CONTRACT:  # the contract may use the shared state dir
                continue
            wrong.append(f"{_where(path, line)}: {here or 'the contract'} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_outside_schedulers_no_module_imports_a_wings_machinery() -> None:
    wrong = [
        f"{_where(path, line)}: {name}"
        for path, layer, tree in _modules()
        if layer != "schedulers"
        for line, name in _imported(tree, path)
        if name.startswith("jupyter_sched.schedulers.")
        and name.split(".")[2] in WINGS
        and name.partition("jupyter_sched.schedulers.")[2] not in WING_USERS.get(str(path.relative_to(PKG)), set())
    ]
    assert not wrong, "\n".join(wrong)


def test_schedulers_shows_its_wings_not_a_flat_folder() -> None:
    folder = PKG / "schedulers"
    loose = sorted(p.stem for p in folder.glob("*.py"))
    assert len(loose) <= MAX_LOOSE, f"{len(loose)} loose modules in schedulers/: {loose}"
    assert set(loose) == CONTRACT | set(FACES), "a loose module is neither the contract nor a face"
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(WINGS) | {SHARED}, f"place {sorted(packages - set(WINGS) - {SHARED})} in WINGS"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


#: Underscore names that are public API of the standard library or of namedtuples, and the hooks
#: TorchX's Scheduler contract gives protected names (its Runner calls ``_validate`` and ``_submit_dryrun``).
STDLIB_PUBLIC = {"_exit", "_replace", "_asdict", "_fields", "_make", "_getframe"}
#: The interpreter's own exit steps (``threading._shutdown``, ``atexit._run_exitfuncs``): a replica forked by
#: the local zygote runs them itself before ``os._exit`` (``schedulers/local/warm_starts/zygote_server.py``).
STDLIB_PUBLIC |= {"_shutdown", "_run_exitfuncs"}
CONTRACT_HOOKS = {"_validate", "_submit_dryrun"}


def _own_private_names(tree: ast.Module) -> Set[str]:
    """The underscore names a module defines itself: its functions, classes, module globals, class
    attributes and the attributes it assigns (``self._x = ...``). Using any other underscore attribute
    is reaching into a name that some other module owns."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return {name for name in names if _private(name)}


def test_no_module_uses_another_modules_underscore_names() -> None:
    wrong: List[str] = []
    for path, _layer, tree in _modules():
        own = _own_private_names(tree) | STDLIB_PUBLIC | CONTRACT_HOOKS
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                (node.module or "").startswith("jupyter_sched") or node.level
            ):
                wrong += [
                    f"{_where(path, node.lineno)}: imports {alias.name} from {node.module or '.'}"
                    for alias in node.names
                    if _private(alias.name)
                ]
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
                wrong.append(f"{_where(path, node.lineno)}: {ast.unparse(node)}")
    assert not wrong, "\n".join(wrong)


def test_every_package_has_a_place_in_the_layer_table() -> None:
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    assert packages <= set(ALLOWED), f"place {sorted(packages - set(ALLOWED))} in ALLOWED"
