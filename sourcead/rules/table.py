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


# Calls that are differentiable elementwise functions of floats (canonical names). The NumPy
# twins of the math functions have the same partials, written with NumPy so they hold for arrays.
_MATH: tuple[Rule, ...] = (
    Rule("sin", ("{m}.cos({x})",)),
    Rule("cos", ("-{m}.sin({x})",)),
    Rule("tan", ("1.0 + {z} * {z}",)),
    Rule("asin", ("1.0 / {m}.sqrt(1.0 - {x} * {x})",)),
    Rule("acos", ("-1.0 / {m}.sqrt(1.0 - {x} * {x})",)),
    Rule("atan", ("1.0 / (1.0 + {x} * {x})",)),
    Rule("sinh", ("{m}.cosh({x})",)),
    Rule("cosh", ("{m}.sinh({x})",)),
    Rule("tanh", ("1.0 - {z} * {z}",)),
    Rule("asinh", ("1.0 / {m}.sqrt({x} * {x} + 1.0)",)),
    Rule("acosh", ("1.0 / {m}.sqrt({x} * {x} - 1.0)",)),
    Rule("atanh", ("1.0 / (1.0 - {x} * {x})",)),
    Rule("exp", ("{z}",)),
    Rule("expm1", ("{z} + 1.0",)),
    Rule("log", ("1.0 / {x}",)),
    Rule("log1p", ("1.0 / (1.0 + {x})",)),
    Rule("log2", ("1.0 / ({x} * 0.6931471805599453)",)),
    Rule("log10", ("1.0 / ({x} * 2.302585092994046)",)),
    Rule("sqrt", ("0.5 / {z}",)),
    Rule("hypot", ("{x} / {z}", "{y} / {z}")),
    Rule("copysign", ("{m}.copysign(1.0, {x}) * {m}.copysign(1.0, {y})", "0.0")),
    Rule("atan2", ("{y} / ({x} * {x} + {y} * {y})", "-{x} / ({x} * {x} + {y} * {y})")),
)
_MATH_ONLY = (
    Rule("math.pow", ("{y} * math.pow({x}, {y} - 1.0)", "math.log({x}) * {z}")),
    Rule("math.fabs", ("math.copysign(1.0, {x})",)),
    Rule("math.erf", ("1.1283791670955126 * math.exp(-{x} * {x})",)),
    Rule("math.erfc", ("-1.1283791670955126 * math.exp(-{x} * {x})",)),
)
_NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2"}  # fmt: skip
_NUMPY_ONLY = (
    Rule("np.power", ("{y} * np.power({x}, {y} - 1.0)", "np.log({x}) * {z}")),
    Rule("np.abs", ("np.sign({x})",)),
    Rule("np.fabs", ("np.sign({x})",)),
    Rule("np.square", ("2.0 * {x}",)),
    # written with comparisons times 1.0, so they hold elementwise for arrays as well as for floats
    Rule("np.maximum", ("({x} >= {y}) * 1.0", "({x} < {y}) * 1.0")),
    Rule("np.minimum", ("({x} <= {y}) * 1.0", "({x} > {y}) * 1.0")),
)


def _twins() -> tuple[Rule, ...]:
    rules = []
    for rule in _MATH:
        rules.append(Rule(f"math.{rule.name}", tuple(p.replace("{m}", "math") for p in rule.partials)))
        name = _NUMPY_NAMES.get(rule.name, rule.name)
        rules.append(Rule(f"np.{name}", tuple(p.replace("{m}", "np") for p in rule.partials)))
    return tuple(rules)


ELEMENTWISE: dict[str, Rule] = _rules(
    *_twins(),
    *_MATH_ONLY,
    *_NUMPY_ONLY,
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


@dataclass(frozen=True)
class Reduction:
    """z = f(x) of one whole array: the tangent from x's tangent `{t}`, and the contribution of z's
    adjoint `{g}` to x's adjoint (a float result is broadcast over x by `x_bar += ...`)."""

    name: str
    tangent: str
    adjoint: str
    keeps_shape: bool = False  # an array result (transpose, cumsum), not a float


REDUCTIONS: dict[str, Reduction] = {
    r.name: r
    for r in (
        Reduction("np.sum", "np.sum({t})", "{g}"),
        Reduction("np.mean", "np.mean({t})", "{g} / {x}.size"),
        Reduction("np.max", "np.ravel({t})[np.argmax({x})]", "argmax_mask({x}) * {g}"),
        Reduction("np.min", "np.ravel({t})[np.argmin({x})]", "argmin_mask({x}) * {g}"),
        Reduction("np.prod", "np.sum({t} * prod_others({x}))", "prod_others({x}) * {g}"),
        Reduction(
            "np.linalg.norm",
            "np.dot(np.ravel({x}), np.ravel({t})) / np.linalg.norm({x})",
            "{x} * ({g} / np.linalg.norm({x}))",
        ),
        Reduction("np.transpose", "np.transpose({t})", "np.transpose({g})", keeps_shape=True),
        Reduction("np.cumsum", "np.cumsum({t})", "np.cumsum({g}[::-1])[::-1]", keeps_shape=True),
    )
}

# Reductions over one axis (`np.sum(x, axis=k)`): `{k}` is the axis; `expand_axis` puts the adjoint
# back into x's shape (a float for 1-D x, a row or a column of a 2-D x) for broadcasting.
AXIS_REDUCTIONS: dict[str, Reduction] = {
    r.name: r
    for r in (
        # np.mean over an axis is normalized to np.sum(x, axis=k) / x.shape[k]: numba lacks it
        Reduction("np.sum", "np.sum({t}, axis={k})", "expand_axis({g}, {x}, {k})", keeps_shape=True),
    )
}

# Piecewise selections of their operands: each operand's derivative passes where it is the one
# selected. Per operand, the mask (over the operands `{a0}`, `{a1}`, `{a2}`) where it is selected, or
# None for an operand that is never differentiated (the condition of np.where).
SELECTIONS: dict[str, tuple[str | None, ...]] = {
    "np.where": (None, "{a0}", "~({a0})"),
    "np.clip": ("({a0} >= {a1}) & ({a0} <= {a2})", "{a0} < {a1}", "{a0} > {a2}"),
}

# np.reshape(x, shape) (and x.reshape(...)): linear; the adjoint is reshaped back to x's shape.
RESHAPES = frozenset({"np.reshape"})

# Calls whose result carries no derivative: integers, shapes, piecewise-constant functions.
INTEGER_FUNCTIONS = frozenset(
    {"len", "int", "round", "math.floor", "math.ceil", "math.trunc", "np.argmax", "np.argmin"}
)
CONSTANT_FUNCTIONS = INTEGER_FUNCTIONS | frozenset(
    {"range", "prange", "np.floor", "np.ceil", "np.trunc", "np.sign", "np.round", "np.rint"}
)
ARRAY_CREATION = frozenset(
    {"np.zeros", "np.empty", "np.zeros_like", "np.ones", "np.empty_like", "np.ones_like", "np.full", "np.full_like",
     "np.arange", "np.linspace"}
)  # fmt: skip


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


@dataclass(frozen=True)
class Bilinear:
    """z = f(a, b), linear in each operand: the tangent contributions of `{t}` (a's or b's tangent)
    and the adjoint contributions from z's adjoint `{g}`, over the operands `{a}` and `{b}`."""

    name: str
    tangent_a: str
    tangent_b: str
    adjoint_a: str
    adjoint_b: str


# `a @ b` is np.dot(a, b); its transposes are runtime helpers that pick the rule by the ndims.
BILINEAR: dict[str, Bilinear] = {
    r.name: r
    for r in (
        Bilinear(
            "np.dot", "np.dot({t}, {b})", "np.dot({a}, {t})", "matmul_bar_left({g}, {a}, {b})",
            "matmul_bar_right({g}, {a}, {b})",
        ),
        Bilinear("np.outer", "np.outer({t}, {b})", "np.outer({a}, {t})", "np.dot({g}, {b})", "np.dot({a}, {g})"),
    )
}  # fmt: skip
MATMUL = BILINEAR  # the names of matrix products


def known_calls() -> frozenset[str]:
    """Canonical names of every function the compiler knows."""
    return (
        frozenset(ELEMENTWISE)
        | frozenset(REDUCTIONS)
        | frozenset(MATMUL)
        | frozenset(SELECTIONS)
        | RESHAPES
        | CONSTANT_FUNCTIONS
        | ARRAY_CREATION
    )
