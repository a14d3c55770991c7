"""One comparison of generated code with its golden file, for every test that pins some
(`pytest --update-golden` rewrites them)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def check_golden(path: Path, text: str, update: bool, what: str) -> None:
    """Fail with a readable diff where `text` (the generated code of `what`) differs from the file
    at `path`; write it instead when asked to update, or when the file is new (and fail then, so
    that it gets checked in)."""
    if update or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not update:
            pytest.fail(f"{path.name} did not exist; written now, check it in")
        return
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "generated"))
        pytest.fail(f"generated code for {what} differs from {path.name}:\n{diff}")
