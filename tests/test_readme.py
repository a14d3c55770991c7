"""The README shows a real function and the adjoint that sourcead really generates for it."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import sourcead

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_adjoint_is_what_sourcead_emits():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import recurrence
    finally:
        sys.path.pop(0)
    blocks = _python_blocks()
    assert inspect.getsource(recurrence.recurrence) in blocks
    adjoint = next(b for b in blocks if b.startswith("def recurrence_vjp"))
    generated = sourcead.differentiable(recurrence.recurrence).source(mode="reverse", wrt="r")
    assert generated.endswith(adjoint)


def test_command_lines_in_the_docs_name_functions_that_exist():
    """Every `sourcead emit|check|activity PATH:FUNC` of README.md and CONTRIBUTING.md names a file of
    this checkout that defines FUNC (the programs under test moved to tests/programs/ once)."""
    named = []
    for doc in ("README.md", "CONTRIBUTING.md"):
        for block in re.findall(r"```sh\n(.*?)```", (ROOT / doc).read_text(), flags=re.S):
            named += re.findall(r"sourcead (?:emit|check|activity) ([\w./]+\.py):(\w+)", block)
    assert len(named) >= 10
    missing = [f"{path}:{func}" for path, func in named if not _defines(ROOT / path, func)]
    assert missing == []


def _defines(path: Path, func: str) -> bool:
    return path.is_file() and re.search(rf"^def {func}\(", path.read_text(), flags=re.M) is not None
