"""Whether a positioned rejection misreports the user's code: the checker counts those with the
unpositioned errors (issue 38, findings 6 and 7: the user's lines and the user's names only)."""

from __future__ import annotations

import builtins
import keyword
import re
from pathlib import Path
from typing import Any


def misreported(exc: Any, message: str, program_file: str | None) -> str:
    """What a positioned rejection misreports about the user's code (issue 38, findings 6, 7): a
    statement's problem placed on a `def` line, or a name in its first line that the user's code
    does not have (a compiler-made name such as `result0_1`). Empty when neither."""
    if program_file is None:
        return ""
    lines = Path(program_file).read_text(encoding="utf-8").splitlines()
    line = lines[exc.where.line - 1] if 0 < exc.where.line <= len(lines) else ""
    if line.lstrip().startswith("def "):
        return "positioned at a def line"
    words = set(re.findall(r"\w+", "\n".join(lines))) | _PYTHON_NAMES
    for quoted in re.findall(r"`([^`]*)`", message):
        unknown = [n for n in re.findall(r"(?<![.\w])[A-Za-z_]\w*", quoted) if n not in words]  # not attributes
        if unknown:
            return f"names `{unknown[0]}`, which the user's code does not have"
    return ""


_PYTHON_NAMES = set(dir(builtins)) | set(keyword.kwlist)
