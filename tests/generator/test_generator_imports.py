"""The generator's modules import each other without a cycle (issue 19): a view imports
generator/render/base.py and the generation context, never another view, and no module
imports back what imports it.

The graph is read from the source (ast), with every import statement counted, those
inside functions too: an import deferred into a function hides a cycle from Python,
not from the design (the old generator/render.py imported its own views that way).
Imports under `if TYPE_CHECKING:` are not executed and are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

from suite import REPO

PACKAGE = "generator"


def _modules() -> dict[str, Path]:
    """Dotted name -> source file of every module of the package (packages by __init__)."""
    root = REPO / PACKAGE
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """The import statements of a module that run when their code runs."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (i for child in node.orelse for i in _imports_of(child))
            continue
        yield from _imports_of(node)


def _imports_of(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom, known) -> set[str]:
    """The package's modules an import statement of module `name` loads."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        parent = ".".join(base + ([node.module] if node.module else []))
    else:
        parent = node.module or ""
    found = {parent} if parent in known else set()
    # `from . import x` and `from .render import raw` load the submodules they name.
    found |= {f"{parent}.{alias.name}" for alias in node.names} & set(known)
    return found


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for node in _imports(tree):
            edges |= _targets(name, path, node, known)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_generator_has_no_import_cycle():
    graph = import_graph()
    # The graph is read right: the views' own imports are in it.
    assert {"generator.render.base", "generator.context"} <= graph["generator.render.raw"]
    assert "generator.device_functions" in graph["generator.render.raw"]
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_no_view_imports_another():
    graph = import_graph()
    views = {"generator.render.raw", "generator.render.checked", "generator.render.fast"}
    for view in sorted(views):
        assert not graph[view] & views, f"{view} imports {sorted(graph[view] & views)}"


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
