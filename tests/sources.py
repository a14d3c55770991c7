"""Functions the tests write as text: each in a module of its own, since sourcead reads a
function's source file."""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Callable
from pathlib import Path

_COUNT = itertools.count()


def function_from_source(folder: Path, text: str, name: str) -> Callable:
    """`name` from `text` (which may use `math` and `np`), written to a new module in `folder`."""
    path = folder / f"source_{next(_COUNT)}.py"
    path.write_text("import math\nimport numpy as np\n\n" + text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return getattr(module, name)
