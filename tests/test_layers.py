"""The package's shape, checked from its source: stage folders on floors, imports pointing down, no
import cycle, small modules, a short top level (issue 39; docs/architecture.md).

Imports are read with `ast`, those inside functions included (a function-level import is as much
a dependency as one at the top; it only hides it).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sourcead"
MAX_LINES = 600
MAX_TOP_LEVEL = 15

# Lowest first: a module imports only from its own folder or from a lower floor. `forward/` and
# `reverse/` share a floor, so neither imports the other. The top-level modules are places of
# their own: the leaves (errors, the version, `functions`) at the bottom with the custom-rule
# registry (`custom`) and the derivative-call registry (`nested`) just above them, the re-exports
# and the command line's entry at the top.
FLOORS = {
    "errors": 0,
    "_version": 0,
    "functions": 0,
    "runtime": 1,
    "colouring": 1,
    "ir": 2,
    "rules": 3,
    "derive": 4,
    "frontend": 5,
    "analysis": 6,
    "transforms": 7,
    "forward": 8,
    "reverse": 8,
    "pattern": 8,
    "postpass": 9,
    "pipeline": 10,
    "build": 11,
    "api": 12,
    "bridges": 13,
    "__init__": 14,
    "__main__": 14,
    "custom": 1,
    "nested": 1,
    "torch": 14,
    "jax": 14,
}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a folder's `__init__.py` by the folder's name)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


MODULES = _modules()


def _imported(name: str, source: str, is_package: bool = False) -> set[str]:
    """The package's modules that module `name` (of text `source`) imports, anywhere in its body."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            # `from . import x` with x a module depends on x; `from .m import f` on m
            found.update(subs if subs and len(subs) == len(node.names) else [base, *subs])
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in MODULES and m != name}


EDGES = {
    name: _imported(name, path.read_text(encoding="utf-8"), path.name == "__init__.py")
    for name, path in MODULES.items()
}


def _place(name: str) -> str:
    """The folder (or top-level module) a module belongs to: the key of `FLOORS`."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(EDGES[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(MODULES)))
    try:
        for v in sorted(MODULES):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def _upward() -> list[str]:
    """Every import from a module to one on its own floor in another place, or on a higher floor."""
    bad = []
    for name in sorted(EDGES):
        for target in sorted(EDGES[name]):
            here, there = _place(name), _place(target)
            if here != there and FLOORS[there] >= FLOORS[here]:
                bad.append(f"{name} (floor {FLOORS[here]}) imports {target} (floor {FLOORS[there]})")
    return bad


def test_the_reader_finds_imports_inside_functions():
    """The checks below see what they claim to: relative and absolute imports, a function's own."""
    source = (
        "from ..ir import core\n"
        "from . import parse\n"
        "from .. import errors\n"
        "import numpy\n"
        "def f():\n"
        "    from ..rules import literal\n"
        "    import sourcead.runtime\n"
    )
    found = _imported("sourcead.frontend.fence", source)
    assert found == {
        "sourcead.ir.core",
        "sourcead.frontend.parse",
        "sourcead.errors",
        "sourcead.rules",
        "sourcead.runtime",
    }
    assert _imported("sourcead.ir", "from . import core\n", is_package=True) == {"sourcead.ir.core"}
    assert len(MODULES) > 50 and sum(map(len, EDGES.values())) > 100


def test_every_folder_and_top_level_module_has_a_floor():
    """A new stage folder or top-level module says where it sits (and docs/architecture.md too)."""
    assert sorted({_place(name) for name in MODULES} - set(FLOORS)) == []


def test_at_most_15_modules_at_the_top_level():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top


def test_no_import_cycle():
    cycles = _cycles()
    assert cycles == [], "\n".join(" <-> ".join(c) for c in cycles)


def test_imports_point_down():
    bad = _upward()
    assert bad == [], "\n".join(bad)


def test_no_module_over_600_lines():
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in MODULES.values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
