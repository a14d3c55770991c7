"""Deterministic names for generated code: `x_dot`, `x_bar`, `t0`, `tape`, ...

Every name generated code introduces comes from one `Namer`, which knows every name of the user's
code (and of the functions inlined into it) and the names generated modules import, so a
generated name never collides with one the user wrote: a user variable called `x_bar` pushes the
adjoint of `x` to `x_bar_1`. The same input always gives the same names (golden files).
"""

from __future__ import annotations

from collections.abc import Iterable

# Names that generated modules import or call: the user's own variables never take them (normalize
# renames a local or parameter that would) so the module's imports stay visible everywhere.
MODULES = frozenset({"np", "math", "numba", "prange", "jitable"})
BUILTINS = frozenset({"range", "len", "min", "max", "abs", "float", "int", "round", "True", "False", "None"})


def reserved_names() -> frozenset[str]:
    from ..runtime import HELPERS  # the runtime helpers generated code may import

    return MODULES | BUILTINS | frozenset(HELPERS)


class Namer:
    """Hands out fresh names that collide with nothing the user wrote or we made."""

    def __init__(self, names: Iterable[str]):
        self.taken = set(names) | reserved_names()
        self.counter = 0
        self.shadows: dict[tuple[str, str], str] = {}
        self.primal: dict[str, str] = {}  # shadow name -> the variable it shadows

    def fresh(self, base: str) -> str:
        """`base` if it is free, else `base_1`, `base_2`, ..."""
        candidate, k = base, 0
        while candidate in self.taken:
            k += 1
            candidate = f"{base}_{k}"
        self.taken.add(candidate)
        return candidate

    def temp(self) -> str:
        """The next numbered temporary `t0`, `t1`, ... that is free."""
        while f"t{self.counter}" in self.taken:
            self.counter += 1
        name = f"t{self.counter}"
        self.taken.add(name)
        return name

    def shadow(self, var: str, suffix: str) -> str:
        """The tangent (`_dot`) or adjoint (`_bar`) of `var`: `var_dot` unless that is taken."""
        key = (var, suffix)
        name = self.shadows.get(key)
        if name is None:
            name = self.shadows[key] = self.fresh(f"{var}{suffix}")
            self.primal[name] = var
        return name

    def dot(self, var: str) -> str:
        return self.shadow(var, "_dot")

    def bar(self, var: str) -> str:
        return self.shadow(var, "_bar")

    def shadowed(self, name: str) -> str | None:
        """The variable whose tangent or adjoint `name` is, or None."""
        return self.primal.get(name)
