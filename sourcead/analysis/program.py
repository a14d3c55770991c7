"""The analyzed function that forward and reverse mode read: core form plus side tables."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..derive.linearize import Linearized, UnsupportedDerivative, linearize
from ..frontend.parse import ParsedFunction
from ..ir.core import Assign, CoreFunction
from ..ir.exprs import number
from ..ir.naming import Namer
from ..rules import classify
from .activity import Activity
from .definite import placeholder, possibly_undefined
from .kinds import Kinds


def builds_array(stmt: Assign) -> bool:
    """`np.zeros(n)`, `x.copy()` or `y = x`: an array made, copied or renamed, not computed elementwise
    (`u += y` and `u -= np.ones(n)` add to u: not made)."""
    if stmt.accumulate is not None:
        return False
    value = stmt.value
    if isinstance(value, cst.Name):
        return True
    found = classify(value) if isinstance(value, cst.Call) else None
    return found is not None and (found[0].constant or copied_array(stmt) is not None)


def copied_array(stmt: Assign) -> cst.Name | None:
    """The array that `b = np.copy(a)` copies (a named one: a copy of an expression is computed)."""
    found = classify(stmt.value) if isinstance(stmt.value, cst.Call) else None
    if found is None or not found[0].copies:
        return None
    source = found[1].args["a"]
    return source if isinstance(source, cst.Name) else None


@dataclass
class Program:
    parsed: ParsedFunction
    fn: CoreFunction
    kinds: Kinds
    activity: Activity
    namer: Namer

    @property
    def wrt(self) -> tuple[str, ...]:
        return self.activity.wrt

    def is_active(self, var: str) -> bool:
        return var in self.activity.active

    def is_active_leaf(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return self.is_active(node.value)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            return self.is_active(node.value.value)
        return False

    def linearize(self, value: cst.BaseExpression, origin: cst.CSTNode) -> Linearized:
        try:
            return linearize(value, self.is_active_leaf, self.namer, self.kinds.type_of)
        except UnsupportedDerivative as exc:
            raise self.parsed.error(
                f"`{exc}` has no derivative rule, and here it is applied to a value that carries a derivative",
                exc.node if self.parsed.locate(exc.node) else origin,
                "Compute it from values that carry no derivative, or give it a rule "
                "(sourcead.custom_rule for a function of floats).",
            ) from None

    def dot(self, var: str) -> str:
        """The name of `var`'s tangent (`x_dot`, unless the user has a variable of that name)."""
        return self.namer.dot(var)

    def bar(self, var: str) -> str:
        """The name of `var`'s adjoint (`x_bar`, unless the user has a variable of that name)."""
        return self.namer.bar(var)

    def shadow(self, node: cst.BaseExpression, suffix: str) -> cst.BaseExpression:
        """`x` -> `x_bar` and `a[i]` -> `a_bar[i]` (suffix "_bar" or "_dot")."""
        if isinstance(node, cst.Subscript):
            base = cst.ensure_type(node.value, cst.Name)
            return node.with_changes(value=cst.Name(self.namer.shadow(base.value, suffix)))
        return cst.Name(self.namer.shadow(cst.ensure_type(node, cst.Name).value, suffix))

    def element_is_float(self, node: cst.BaseExpression) -> bool:
        """Is `a_bar[i, j]` (an adjoint's element) one float, not a row or a slice of its array?"""
        if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name):
            return False
        var = self.namer.shadowed(node.value.value)
        if var is None or not self.kinds.is_array(var):
            return False
        of = self.kinds.type_of(node.with_changes(value=cst.Name(var)))
        return of.dtype == "float" and of.ndim == 0

    def activity_comments(self) -> list[str]:
        """The activity facts, for the generated code: what carries derivatives and why, and which
        float values get no derivative code at all."""
        facts = self.activity
        groups: dict[tuple, list[str]] = {}
        for var in sorted(facts.active):
            varied, useful = facts.because.get(var, ((), ()))
            groups.setdefault((tuple(sorted(varied)), tuple(sorted(useful))), []).append(var)
        lines = [
            f"active (varied from {', '.join(v)}; useful for {', '.join(u)}): {', '.join(names)}"
            for (v, u), names in groups.items()
        ] or ["active: none"]
        constant = sorted(v for v in self.kinds.of if self.kinds.carries(v) and v not in facts.active)
        if constant:
            lines.append(f"constant (no derivative code): {', '.join(constant)}")
        return lines

    def placeholders(self, read_at_end: tuple[str, ...] = (), tangents: bool = False) -> list[str]:
        """Lines giving a typed value to the variables some path reads before assigning them (see
        `definite.py`), and to those of `read_at_end` some path leaves unassigned."""
        returned = tuple(v.value for v in self.fn.ret.values if isinstance(v, cst.Name))
        known = set(self.fn.params) | {name for name, _ in self.fn.constants}
        missing = possibly_undefined(self.fn.body, known, returned + read_at_end)
        lines = []
        for var in sorted(v for v in missing if v in self.kinds.of):
            lines.append(f"{var} = {placeholder(self.kinds[var])}  # not assigned on every path: a typed placeholder")
            if tangents and self.is_active(var):
                lines.append(f"{self.dot(var)} = {placeholder(self.kinds[var])}")
        return lines

    def zero(self, var: str) -> cst.BaseExpression:
        """A zero derivative shaped like `var` (float64 whatever `var`'s dtype)."""
        if self.kinds.is_array(var):
            t = self.kinds[var]  # float32 storage gets float64 derivatives
            like = "np.zeros_like({})" if t.dtype == "float" and not t.single else "np.zeros({}.shape)"
            return cst.parse_expression(like.format(var))
        return number(0.0)

    def adjoint_zero(self, var: str) -> cst.BaseExpression:
        """`zero(var)` as the reverse sweep writes it: a float array through the runtime's
        `zeros_like` (numba's overload of `np.zeros_like` costs 0.2-0.6 s of a cold first call per
        array type; the tangent code keeps NumPy's spelling, which the second-order pass reads)."""
        if self.kinds.is_array(var) and self.kinds[var].dtype == "float":
            return cst.parse_expression(f"zeros_like({var})")
        return self.zero(var)
