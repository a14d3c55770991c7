"""`sourcead/api/` and `sourcead/bridges/` import only downwards: no module there imports one that
imports it back, counting imports inside functions and under TYPE_CHECKING, and `api/` never
imports a bridge (the bridges rebuild themselves from their own pickles)."""

from __future__ import annotations

import ast
from pathlib import Path

import sourcead

ROOT = Path(sourcead.__file__).resolve().parent


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The sourcead modules `path` imports anywhere in its text (a package's submodule by name)."""
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {target} | {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("sourcead.")}


def _graph() -> dict[str, set[str]]:
    files = [p for folder in ("api", "bridges") for p in (ROOT / folder).glob("*.py")]
    names = {_module(p) for p in files}
    return {_module(p): (_imports(p) & names) - {_module(p)} for p in files}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_api_and_bridges_have_no_import_cycle():
    graph = _graph()
    assert "sourcead.api.budget" in graph["sourcead.api.pickling"]  # the walk sees the imports
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_api_imports_no_bridge_and_pickling_no_transform():
    graph = _graph()
    for name, targets in graph.items():
        if name.startswith("sourcead.api"):
            assert not {t for t in targets if t.startswith("sourcead.bridges")}, name
    low = {"sourcead.api.protocol", "sourcead.api.budget"}
    assert graph["sourcead.api.pickling"] <= low
    assert graph["sourcead.api.njit"] <= low
