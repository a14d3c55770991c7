"""The analyzed function that forward and reverse mode read: core form plus side tables."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .activity import Activity
from .core import Assign, CoreFunction
from .exprs import dotted, number
from .kinds import ARRAY, Kinds, expr_kind
from .linearize import Linearized, UnsupportedDerivative, linearize
from .naming import Namer
from .parse import ParsedFunction
from .rules import ARRAY_CREATION


def builds_array(stmt: Assign) -> bool:
    """`np.zeros(n)`, `x.copy()` or `y = x`: an array made or renamed, not computed elementwise."""
    value = stmt.value
    return (
        isinstance(value, cst.Name)
        or isinstance(value, cst.Call)
        and (dotted(value.func) in ARRAY_CREATION or dotted(value.func).endswith(".copy"))
    )


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
            return linearize(
                value, self.is_active_leaf, self.namer, lambda e: expr_kind(e, self.kinds.of, self.kinds.ndim)
            )
        except UnsupportedDerivative as exc:
            raise self.parsed.error(
                f"no derivative rule for `{exc}` applied to a value that carries a derivative",
                exc.node if self.parsed.locate(exc.node) else origin,
                "Move this computation out of the differentiated path, or ask for a rule in sourcead/rules/.",
            ) from None

    def shadow(self, node: cst.BaseExpression, suffix: str) -> cst.BaseExpression:
        """`x` -> `x_bar` and `a[i]` -> `a_bar[i]` (suffix "_bar" or "_dot")."""
        if isinstance(node, cst.Subscript):
            return node.with_changes(value=cst.Name(node.value.value + suffix))  # type: ignore[union-attr]
        return cst.Name(node.value + suffix)  # type: ignore[union-attr]

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

    def zero(self, var: str) -> cst.BaseExpression:
        """A zero derivative shaped like `var`."""
        if self.kinds[var] == ARRAY:
            return cst.parse_expression(f"np.zeros_like({var})")
        return number(0.0)
