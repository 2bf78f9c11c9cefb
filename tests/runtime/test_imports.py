"""How cudart's hand-written modules import one another, read from their source (ast).

A module inside the package reaches the serving generated module (cudart.sys) through
cudart._serving, never through the top-level package: `import cudart` from inside would
run the package's __getattr__ from below it, and couple each helper to the package's
namespace. And the modules a module imports as it is imported form no cycle, so each
imports whole whatever the entry point.
"""

from __future__ import annotations

import ast
from pathlib import Path

from suite import REPO

from cudart._views import is_view, split_name

PACKAGE = REPO / "cudart"


def hand_written() -> dict[str, Path]:
    """{dotted module name: file} of the package's own modules, recursively (the
    generated modules are links to generated/ in a checkout)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_symlink() or "__pycache__" in path.parts:
            continue
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = hand_written()


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def base_of(module: str, node: ast.ImportFrom) -> str:
    """The absolute name a `from ... import` names, relative levels resolved."""
    if not node.level:
        return node.module or ""
    package = module if is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def is_submodule(name: str) -> bool:
    """A module of the package (hand-written, a generated one through its link, or a
    version's view of a merged one: cudart/_views.py)."""
    folder, _, leaf = name.rpartition(".")
    where = REPO.joinpath(*folder.split("."))
    split = split_name(leaf) if folder == "cudart" else None
    if split is not None and is_view(*split):
        return True
    return (where / f"{leaf}.py").exists() or (where / leaf / "__init__.py").exists()


def reaches_the_package(module: str, node: ast.AST) -> str | None:
    """What `node` takes from the top-level package `cudart` itself, if anything."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == "cudart" or alias.name.startswith("cudart."):
                return f"import {alias.name}"
    elif isinstance(node, ast.ImportFrom) and base_of(module, node) == "cudart":
        names = [a.name for a in node.names if not is_submodule(f"cudart.{a.name}")]
        if names:
            return f"from cudart import {', '.join(names)}"
    return None


def test_no_module_imports_the_top_level_package():
    assert "cudart.kernels._function" in MODULES and "cudart._serving" in MODULES
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            what = reaches_the_package(module, node)
            if what:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {what}")
    assert not found, "\n".join(found)


def test_the_scan_sees_each_way_of_reaching_the_package():
    """The rule above tells these apart (a check that cannot fail proves nothing)."""
    cases = {
        "import cudart": True,
        "import cudart.errors": True,
        "from cudart import sys": True,
        "from . import sys as raw": True,  # in cudart/_backend.py
        "from . import select_version": True,
        "from . import _hostmem": False,  # a module of the package
        "from .errors import CudaError": False,
        "from cudart.errors import CudaError": False,
    }
    for source, flagged in cases.items():
        node = ast.parse(source).body[0]
        assert bool(reaches_the_package("cudart._backend", node)) is flagged, source
    node = ast.parse("from .. import select_version").body[0]
    assert reaches_the_package("cudart.kernels._function", node)
    node = ast.parse("from .. import _backend").body[0]
    assert not reaches_the_package("cudart.kernels._function", node)


def import_time_imports(module: str, tree: ast.Module) -> set[str]:
    """The package's hand-written modules `module` imports as it is imported: its
    top-level statements (and their try/if blocks), not imports inside functions nor
    under `if TYPE_CHECKING:`. Its own packages are left out: they are being imported
    already when it is."""
    found: set[str] = set()

    def visit(statements):
        for node in statements:
            if isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = base_of(module, node)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)

    visit(tree.body)
    ancestors = {module.rsplit(".", k)[0] for k in range(1, module.count(".") + 1)}
    return {name for name in found if name in MODULES and name not in ancestors | {module}}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph`, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(node):
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = walk(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = walk(node)
            if found:
                return found
    return None


def test_no_import_cycle_among_the_packages_modules():
    graph = {
        module: import_time_imports(module, ast.parse(path.read_text(), str(path)))
        for module, path in MODULES.items()
    }
    assert graph["cudart.kernels._function"] >= {"cudart._backend", "cudart.kernels._launch"}
    found = cycle(graph)
    assert found is None, " -> ".join(found or ())
    # The search finds one where there is one.
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
