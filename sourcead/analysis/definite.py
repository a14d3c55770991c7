"""Definite assignment: variables that some path reads before it assigns them.

The core form can read a variable on a path that never assigned it, where the user's code could
not: `exits.py` turns an early return into flags, so `return 1.0` in a loop followed by
`diff = ...; return diff[1]` leaves `diff` unassigned on the path that returned early, and the
reverse sweep still initializes `diff_bar = np.zeros_like(diff)`. numba also rejects a variable
it cannot prove assigned ("Unsupported assignment encountered: Undefined"). Such variables are
given a typed placeholder where the generated function starts: 0.0, 0, False, or an empty array
of the right dtype and ndim. A path that really reads the placeholder is one that Python would
not have run.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir.core import Assign, For, If, Permute, Stmt, While
from ..ir.types import Type
from .reads import names_read


def possibly_undefined(body: tuple[Stmt, ...], params: Iterable[str], read_at_end: Iterable[str] = ()) -> set[str]:
    """Variables read (or written element by element) where some path has not assigned them, and
    those of `read_at_end` that some path leaves unassigned at the end of `body`."""
    found: set[str] = set()
    defined = _block(body, set(params), found)
    return found | (set(read_at_end) - defined)


def placeholder(t: Type) -> str:
    """A typed value standing for a variable not assigned yet."""
    if t.is_array:
        shape = "0" if t.ndim == 1 else "(" + ", ".join(["0"] * t.ndim) + ")"
        dtype = {"float": "", "int": ", np.int64", "bool": ", np.bool_"}[t.dtype]
        return f"np.empty({shape}{dtype})"
    return {"float": "0.0", "int": "0", "bool": "False"}[t.dtype]


def _block(body, defined: set[str], found: set[str]) -> set[str]:
    defined = set(defined)
    for stmt in body:
        found |= names_read(stmt) - defined - {"True", "False", "None", "math", "np"}
        if isinstance(stmt, Assign) and not stmt.writes_element:
            defined.add(stmt.var)
        elif isinstance(stmt, Permute):
            defined |= set(stmt.targets) if set(stmt.sources) <= defined else set()
        elif isinstance(stmt, If):
            defined = _block(stmt.body, defined, found) & _block(stmt.orelse, defined, found)
        elif isinstance(stmt, For):
            _block(stmt.body, defined | {stmt.var}, found)  # it may run no iteration
        elif isinstance(stmt, While):
            _block(stmt.body, defined, found)
    return defined
