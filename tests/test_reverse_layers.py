"""The reverse mode's modules import only down: its emitters reach each other through one
dispatcher (`reverse/emit/dispatch.py`), and `reverse/` imports nothing from the floors above it
or beside it (`forward/`, `transforms/`, `postpass/`, ...). Imports inside functions and under
`TYPE_CHECKING` count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "sourcead"
EMITTERS = ("forward_sweep", "reverse_sweep", "checkpoint", "gather")


def _imports(path: Path) -> set[str]:
    """The modules `path` imports (relative imports resolved), at any depth of its tree."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


@pytest.mark.parametrize("emitter", EMITTERS)
def test_an_emitter_imports_no_other_emitter(emitter):
    imported = _imports(PACKAGE / "reverse" / "emit" / f"{emitter}.py")
    others = {f"sourcead.reverse.emit.{other}" for other in EMITTERS if other != emitter}
    assert not imported & others


def test_reverse_imports_no_floor_above_or_beside_it():
    above = ("forward", "transforms", "postpass", "pipeline", "build", "api", "bridges")
    for path in sorted((PACKAGE / "reverse").rglob("*.py")):
        wrong = {m for m in _imports(path) if m.split(".")[:2] in (["sourcead", floor] for floor in above)}
        assert not wrong, f"{path.relative_to(PACKAGE)} imports {sorted(wrong)}"


def test_reverse_and_postpass_modules_stay_under_600_lines():
    for folder in ("reverse", "postpass"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            assert len(path.read_text().splitlines()) <= 600, path.relative_to(PACKAGE)
