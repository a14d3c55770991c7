"""Generated functions as text, and the module that holds them (the pass `module`, `passes.py`).

`Line` is one generated simple statement (`target op value`), kept as libcst nodes until it is
written, so passes can ask what it reads. `Writer` indents blocks. `module_text` adds the header
and imports. The same input always gives byte-identical text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import libcst as cst

from .exprs import Frozen, code, constant_text, names_in, subscript_indices

INDENT = "    "


@dataclass(frozen=True)
class Line:
    """`target op value`, with an optional trailing comment."""

    target: cst.BaseExpression
    op: str
    value: cst.BaseExpression
    comment: str = ""

    def text(self) -> str:
        line = f"{code(self.target)} {self.op} {code(self.value)}"
        return f"{line}  # {self.comment}" if self.comment else line

    def reads(self, names_of: Callable[[cst.CSTNode], set[str]] = names_in) -> set[str]:
        """Names whose values this line reads (an augmented target is read too); `names_of` finds
        them in an expression (`analysis.reads.value_reads`: less those read only for a shape)."""
        names = names_of(self.value)
        if isinstance(self.target, cst.Subscript):
            for index in subscript_indices(self.target):
                names |= names_of(index)
            if self.op != "=":
                names |= names_in(self.target.value)
        elif self.op != "=" and isinstance(self.target, cst.Name):
            names.add(self.target.value)
        return names


def tuple_text(items: list[str]) -> str:
    """`(a, b)`, or `(a,)` for one item."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append(INDENT * self.depth + text)

    def comment(self, text: str) -> None:
        self.line(f"# {text}")

    def emit(self, lines: list[Line]) -> None:
        for item in lines:
            self.line(item.text())

    @contextmanager
    def block(self, header: str, comment: str = "") -> Iterator[None]:
        """`header:` and the lines written inside, indented; `comment` says what the block does
        (on the header's line, so that it stays whatever becomes of the block's statements)."""
        self.line(f"{header}:  # {comment}" if comment else header + ":")
        start = len(self.lines)
        self.depth += 1
        yield
        if all(line.lstrip().startswith("#") for line in self.lines[start:]):
            self.line("pass")  # nothing to do here (e.g. a replayed loop whose writes are shared)
        self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def module_text(
    header: str,
    function: str,
    constants: tuple[tuple[str, Frozen], ...],
    helpers: list[str],
    bindings: list[str] = (),  # type: ignore[assignment]
) -> str:
    """A complete module: header comment, the imports the function uses, frozen globals, the
    functions of custom rules (`bindings`), the function."""
    parts = [f"# {header}\n# Do not edit: regenerate with `sourcead emit`.\n"]
    imports = []
    if "math." in function or any(isinstance(v, float) and not math.isfinite(v) for _, v in constants):
        imports.append("import math\n")
    if "numba." in function:
        imports.append("import numba\n")
    if "np." in function or any(hasattr(v, "ndim") for _, v in constants):
        imports.append("import numpy as np\n")
    if imports:
        parts.append("".join(imports))
    if "prange(" in function:
        parts.append("from numba import prange\n")
    from ..runtime import HELPERS

    # a call of the helper itself, not of a method or module attribute of that name (np.zeros_like)
    used = set(helpers) | {name for name in HELPERS if re.search(rf"(?<![\w.]){name}\(", function)}
    if used:
        parts.append(f"from sourcead.runtime import {', '.join(sorted(used))}\n")
    rules = [line for line in bindings if "nested_entry(" not in line]
    if rules:
        parts.append(
            "from sourcead.custom import jitable\n\n# functions with custom rules, and their partials\n"
            + "".join(f"{line}\n" for line in rules)
        )
    calls = [line for line in bindings if "nested_entry(" in line]
    if calls:  # nested.py
        parts.append(
            "from sourcead.nested import nested_entry\n\n# derivatives it calls (their compiled code), and their hvp\n"
            + "".join(f"{line}\n" for line in calls)
        )
    if constants:
        frozen = "".join(f"{name} = {constant_text(value)}\n" for name, value in constants)
        parts.append("# globals of the user's module, frozen at transformation time as numba freezes them\n" + frozen)
    parts.append("\n" + function)
    return "\n".join(parts)
