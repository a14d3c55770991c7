"""The rule table: partial derivatives of every primitive, declared once for both modes.

Templates name the operands `{x}` (first) and `{y}` (second) and the result `{z}`. A partial is
instantiated only for an operand that carries a derivative, so `log({x})` in the partial of `x ** y`
with respect to `y` is never evaluated when `y` is a constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..exprs import is_number, number_value


@dataclass(frozen=True)
class Rule:
    """z = f(x[, y]): one partial-derivative template per operand; `linear` ops read no values."""

    name: str
    partials: tuple[str, ...]
    linear: bool = False


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.name: rule for rule in rules}


# Calls that are differentiable elementwise functions of floats (canonical names).
ELEMENTWISE: dict[str, Rule] = _rules(
    Rule("math.sin", ("math.cos({x})",)),
    Rule("math.cos", ("-math.sin({x})",)),
    Rule("math.tan", ("1.0 + {z} * {z}",)),
    Rule("math.exp", ("{z}",)),
    Rule("math.log", ("1.0 / {x}",)),
    Rule("math.sqrt", ("0.5 / {z}",)),
    Rule("math.tanh", ("1.0 - {z} * {z}",)),
    Rule("math.pow", ("{y} * math.pow({x}, {y} - 1.0)", "math.log({x}) * {z}")),
    Rule("abs", ("math.copysign(1.0, {x})",)),
    Rule("min", ("(1.0 if {x} <= {y} else 0.0)", "(0.0 if {x} <= {y} else 1.0)")),
    Rule("max", ("(1.0 if {x} >= {y} else 0.0)", "(0.0 if {x} >= {y} else 1.0)")),
    Rule("float", ("1.0",), linear=True),
)

# Arithmetic operators, by libcst operator class name.
BINARY_OPERATORS: dict[str, Rule] = _rules(
    Rule("Add", ("1.0", "1.0"), linear=True),
    Rule("Subtract", ("1.0", "-1.0"), linear=True),
    Rule("Multiply", ("{y}", "{x}")),
    Rule("Divide", ("1.0 / {y}", "-{z} / {y}")),
    Rule("Power", ("{y} * {x} ** ({y} - 1.0)", "math.log({x}) * {z}")),
    Rule("Modulo", ("1.0", "-math.floor({x} / {y})")),
    Rule("FloorDivide", ("0.0", "0.0"), linear=True),  # piecewise constant
)

UNARY_OPERATORS: dict[str, Rule] = _rules(
    Rule("Minus", ("-1.0",), linear=True),
    Rule("Plus", ("1.0",), linear=True),
)

# Calls whose result carries no derivative (integers, shapes, fresh constant arrays).
CONSTANT_FUNCTIONS = frozenset({"len", "int", "range", "prange"})
ARRAY_CREATION = frozenset({"np.zeros", "np.empty", "np.zeros_like", "np.ones", "np.empty_like"})


def binary_rule(operator: cst.BaseBinaryOp, exponent: cst.BaseExpression) -> Rule | None:
    """The rule of a binary operator; `x ** c` with a literal `c` gets its own simpler partial."""
    kind = type(operator).__name__
    if kind == "Power" and is_number(exponent):
        c = number_value(exponent)
        if c == 2.0:
            return Rule("Power", ("2.0 * {x}",))
        if c == 1.0:
            return Rule("Power", ("1.0",), linear=True)
        return Rule("Power", (f"{c!r} * {{x}} ** {c - 1.0!r}",))
    return BINARY_OPERATORS.get(kind)


def known_calls() -> frozenset[str]:
    """Canonical names of every function the compiler knows."""
    return frozenset(ELEMENTWISE) | CONSTANT_FUNCTIONS | ARRAY_CREATION
