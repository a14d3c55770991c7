"""Deterministic names for generated code: `x_dot`, `x_bar`, `t0`, `t1`, ...

The same input always gives the same names, so generated code is byte-stable (golden files).
"""

from __future__ import annotations

from collections.abc import Iterable


class Namer:
    """Hands out fresh names that collide with nothing the user wrote or we made."""

    def __init__(self, variables: Iterable[str], other: Iterable[str] = ()):
        """`variables` may get `_dot` and `_bar` shadows, so those names are taken too."""
        self.taken = set(other)
        for var in variables:
            self.taken |= {var, dot(var), bar(var)}
        self.counter = 0

    def fresh(self, base: str) -> str:
        """`base` if it (and its `_dot` and `_bar` shadows) is free, else `base_1`, `base_2`, ..."""
        candidate, k = base, 0
        while {candidate, dot(candidate), bar(candidate)} & self.taken:
            k += 1
            candidate = f"{base}_{k}"
        self.taken |= {candidate, dot(candidate), bar(candidate)}
        return candidate

    def temp(self) -> str:
        """The next numbered temporary `t0`, `t1`, ... that is free."""
        while f"t{self.counter}" in self.taken:
            self.counter += 1
        name = f"t{self.counter}"
        self.taken.add(name)
        return name


def dot(var: str) -> str:
    return f"{var}_dot"


def bar(var: str) -> str:
    return f"{var}_bar"
