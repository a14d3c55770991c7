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
