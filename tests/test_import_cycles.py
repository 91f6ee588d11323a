"""No import cycles between two modules of jupyter_sched, counting every import.

``tests/test_layers.py`` checks the direction between packages; this test checks it between modules. It
reads every module's source with :mod:`ast` (nothing is imported) and follows every import: at module
level, inside functions and methods, and under ``if TYPE_CHECKING:``. A cycle closed by an import inside
a function still ties the two modules together (each needs the other to work), so it counts.

A type-only import (under ``TYPE_CHECKING``) may close a cycle only when the import line says why that is
the clearer design, with a comment containing ``type-only cycle:`` and the reason.

An edge goes to the module that is imported: ``from pkg import mod`` to ``pkg.mod`` when ``mod`` is a module
of ours, ``from pkg.mod import name`` to ``pkg.mod``, and ``import a.b.c`` to ``a.b.c``. A package's
``__init__`` is its own module (``jupyter_sched.schedulers``); it is not counted as imported by its
submodules' imports, since Python runs it first anyway and it cannot need them back without an edge of
its own.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

PKG = Path(__file__).resolve().parents[1] / "jupyter_sched"
ROOT = PKG.name
#: The comment that lets a TYPE_CHECKING import close a cycle, followed by why.
TYPE_ONLY_REASON = "type-only cycle:"


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool = False) -> Iterator[Tuple[ast.stmt, bool]]:
    """Every import statement under ``tree``, and whether it sits under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), type_only)
        else:
            yield from _imports(node, type_only)


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node: ast.stmt, name: str, path: Path, modules: Dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == ROOT:
                yield alias.name
        return
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = _package_of(name, path).split(".")
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if source.split(".")[0] != ROOT:
        return
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        yield sub if sub in modules else source


def _comment_on(lines: List[str], node: ast.stmt) -> str:
    end = node.end_lineno or node.lineno
    return " ".join(lines[line - 1].partition("#")[2] for line in range(node.lineno, end + 1))


#: module -> {imported module: (line, is the import excused: a type-only import that says why)}
Graph = Dict[str, Dict[str, Tuple[int, bool]]]


def import_graph() -> Graph:
    modules = all_modules()
    graph: Graph = {name: {} for name in modules}
    for name, path in modules.items():
        source = path.read_text()
        lines = source.splitlines()
        for node, type_only in _imports(ast.parse(source, str(path))):
            excused = type_only and TYPE_ONLY_REASON in _comment_on(lines, node)
            for target in _targets(node, name, path, modules):
                if target == name or target not in modules:
                    continue
                seen = graph[name].get(target)
                if seen is None or (seen[1] and not excused):  # one unexcused import makes the edge count
                    graph[name][target] = (node.lineno, excused)
    return graph


def strongly_connected(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: List[Tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _shortest_cycle(edges: Dict[str, Set[str]], start: str, members: Set[str]) -> List[str]:
    paths: Dict[str, Optional[str]] = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node] & members):
                if child == start:
                    cycle = [node]
                    while paths[cycle[-1]] is not None:
                        cycle.append(paths[cycle[-1]])  # type: ignore[arg-type]
                    return list(reversed(cycle)) + [start]
                if child not in paths:
                    paths[child] = node
                    following.append(child)
        frontier = following
    return [start]


def counted(graph: Graph) -> Dict[str, Set[str]]:
    """The edges that count: all but the type-only imports that say why they close a cycle."""
    return {name: {target for target, (_, ok) in targets.items() if not ok} for name, targets in graph.items()}


def describe_cycles(graph: Graph) -> List[str]:
    edges = counted(graph)
    described = []
    for component in strongly_connected(edges):
        cycle = _shortest_cycle(edges, component[0], set(component))
        steps = [f"{a} -> {b} (line {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:])]
        described.append(f"{len(component)} modules tied: {', '.join(component)}\n  e.g. " + "\n       ".join(steps))
    return described


def cycle_edges(graph: Graph) -> List[str]:
    """Every import that lies inside a cycle, to see all the arrows a break has to remove."""
    edges = counted(graph)
    inside = []
    for component in strongly_connected(edges):
        members = set(component)
        inside += [f"{a} -> {b} (line {graph[a][b][0]})" for a in component for b in sorted(edges[a] & members)]
    return inside


def test_no_import_cycles_between_modules() -> None:
    graph = import_graph()
    cycles = describe_cycles(graph)
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(cycles) + "\nimports inside them:\n" + "\n".join(
        cycle_edges(graph)
    )


def test_no_module_imports_the_package_root() -> None:
    """The root ``__init__`` holds the public entry points (``submit``, the IPython extension hooks), which
    reach the top layers: a module below that imports it (for ``__version__``, say) closes a cycle through
    them. The version is ``jupyter_sched.version``, a leaf."""
    graph = import_graph()
    wrong = [f"{name} (line {targets[ROOT][0]})" for name, targets in graph.items() if ROOT in targets]
    assert not wrong, "import the package root: " + ", ".join(wrong)


def test_the_graph_sees_imports_inside_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        f"    from {ROOT}.specs.request.app import AppDef\n"
        f"    from {ROOT}.specs.status import state  # {TYPE_ONLY_REASON} a reason\n"
        "def f():\n"
        f"    from {ROOT}.logs import lines\n"
        f"    import {ROOT}.runner.api\n"
        f"    from .. import specs\n"
    )
    path = PKG / "schedulers" / "probe.py"
    found: Dict[str, Tuple[int, bool]] = {}
    modules = all_modules()
    lines = source.splitlines()
    for node, type_only in _imports(ast.parse(source)):
        for target in _targets(node, "jupyter_sched.schedulers.probe", path, modules):
            found[target] = (node.lineno, type_only and TYPE_ONLY_REASON in _comment_on(lines, node))
    assert found == {
        f"{ROOT}.specs.request.app": (3, False),
        f"{ROOT}.specs.status.state": (4, True),
        f"{ROOT}.logs.lines": (6, False),
        f"{ROOT}.runner.api": (7, False),
        f"{ROOT}.specs": (8, False),
    }


def test_a_cycle_is_found_and_named() -> None:
    graph: Graph = {"a": {"b": (1, False)}, "b": {"c": (2, False)}, "c": {"a": (3, False)}, "d": {"a": (4, True)}}
    graph["a"]["d"] = (5, False)
    assert describe_cycles(graph) == [
        "3 modules tied: a, b, c\n  e.g. a -> b (line 1)\n       b -> c (line 2)\n       c -> a (line 3)"
    ]
