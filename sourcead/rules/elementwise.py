"""Elementwise primitives: arithmetic operators, the math functions and their NumPy twins.

Partials are templates over the operands `{x}`, `{y}` and the result `{z}`; `{r}` is `1.0 / {y}`,
bound once (a quotient's two partials share one division); `{m}` is `math` on floats and `np` on
arrays. A partial is instantiated only for an operand that carries a derivative,
so `{m}.log({x})` in the partial of `x ** y` with respect to `y` never runs when `y` is a constant.
`domain` is where the tests draw each operand from: away from singularities, kinks and jumps.
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import is_number, number_value, template
from ..ir.types import FLOAT, INT
from . import results
from .forms import Partials, Primitive, SecondOrderGap, Selection
from .signature import Signature

ONE, TWO = Signature.parse("x"), Signature.parse("x, y")
WHOLE, SMALL, POSITIVE, ABOVE_ONE = (-1.5, 1.5), (-0.8, 0.8), (0.5, 3.0), (1.5, 3.0)
NEGATIVE, LOW, HIGH = (-2.0, -0.5), (-1.5, -0.5), (0.5, 1.5)
NEAR_TWO_AND_HALF, NEAR_ONE = (2.3, 2.6), (0.95, 1.05)  # x / y stays within (2.19, 2.74): no jump

# name, NumPy's name, partials, domain: both twins come from one line
_MATH = (
    ("sin", "sin", ("{m}.cos({x})",), (WHOLE,)),
    ("cos", "cos", ("-{m}.sin({x})",), (WHOLE,)),
    ("tan", "tan", ("1.0 + {z} * {z}",), ((-1.0, 1.0),)),
    ("asin", "arcsin", ("1.0 / {m}.sqrt(1.0 - {x} * {x})",), (SMALL,)),
    ("acos", "arccos", ("-1.0 / {m}.sqrt(1.0 - {x} * {x})",), (SMALL,)),
    ("atan", "arctan", ("1.0 / (1.0 + {x} * {x})",), (WHOLE,)),
    ("sinh", "sinh", ("{m}.cosh({x})",), (WHOLE,)),
    ("cosh", "cosh", ("{m}.sinh({x})",), (WHOLE,)),
    ("tanh", "tanh", ("1.0 - {z} * {z}",), (WHOLE,)),
    ("asinh", "arcsinh", ("1.0 / {m}.sqrt({x} * {x} + 1.0)",), (WHOLE,)),
    ("acosh", "arccosh", ("1.0 / {m}.sqrt({x} * {x} - 1.0)",), (ABOVE_ONE,)),
    ("atanh", "arctanh", ("1.0 / (1.0 - {x} * {x})",), (SMALL,)),
    ("exp", "exp", ("{z}",), (WHOLE,)),
    ("expm1", "expm1", ("{z} + 1.0",), (WHOLE,)),
    ("log", "log", ("1.0 / {x}",), (POSITIVE,)),
    ("log1p", "log1p", ("1.0 / (1.0 + {x})",), ((-0.5, 2.0),)),
    ("log2", "log2", ("1.0 / ({x} * 0.6931471805599453)",), (POSITIVE,)),
    ("log10", "log10", ("1.0 / ({x} * 2.302585092994046)",), (POSITIVE,)),
    ("sqrt", "sqrt", ("0.5 / {z}",), (POSITIVE,)),
    ("hypot", "hypot", ("{x} / {z}", "{y} / {z}"), (WHOLE, POSITIVE)),  # 0 at the origin: see _AT_ORIGIN
    ("copysign", "copysign", ("{m}.copysign(1.0, {x}) * {m}.copysign(1.0, {y})", "0.0"), (POSITIVE, NEGATIVE)),
    ("atan2", "arctan2", ("{y} / ({x} * {x} + {y} * {y})", "-{x} / ({x} * {x} + {y} * {y})"), (WHOLE, POSITIVE)),
)
# one instruction on a float (a square root, a sign bit): cheaper to compute again than to record
_CHEAP = ("sqrt", "copysign")
# partials infinite or nan where the value is finite: sqrt at 0, arcsin and arccos at -1 and 1,
# arccosh at 1, arctan2 at the origin (0 / 0). Forward mode guards their contributions by the
# tangent (`Partials.singular`). Not log (-inf at 0, as its partial), nor a division (x / 0 is not
# finite either), nor hypot (0 at the origin, `_AT_ORIGIN`)
_SINGULAR = ("asin", "acos", "acosh", "sqrt", "atan2")

# The partial of x ** y with respect to y is log(x) x ** y: zero where x is 0 (0 ** y is flat for
# y > 0), never log(0) * 0. On arrays, log(x + (x == 0)) is log(x) where x is not 0, and 0 there.
# Both partials are singular: x ** (y - 1) is infinite at x = 0 for y < 1, and log(x) is nan for
# x < 0 where an integral y gives a finite value.
_POWER_PARTIALS = Partials(
    ("{y} * {x} ** ({y} - 1.0)", "({m}.log({x}) * {z} if {x} != 0.0 else 0.0)"),
    arrays=("{y} * {x} ** ({y} - 1.0)", "np.log({x} + ({x} == 0.0)) * {z}"),
    singular=(0, 1),
    regular_above_zero=True,
)


# hypot(x, y) has no derivative at the origin; there, as a norm's subgradient, 0 (PyTorch's choice),
# so that hypot(0, 0 * a) is flat in a rather than nan. On arrays z + (z == 0) is z, or 1 where z is 0.
_AT_ORIGIN = Partials(
    ("({x} / {z} if {z} != 0.0 else 0.0)", "({y} / {z} if {z} != 0.0 else 0.0)"),
    arrays=("{x} / ({z} + ({z} == 0.0))", "{y} / ({z} + ({z} == 0.0))"),
)

_CUBE_ROOT = Partials(("1.0 / (3.0 * {z} * {z})",), singular=(0,), regular_above_zero=True)

# the tangents of math.gamma and math.lgamma call digamma, whose derivative (trigamma) is not declared
_NO_TRIGAMMA = SecondOrderGap("its tangent calls `digamma`, which has no derivative rule (trigamma)")


def _math_twins() -> list[Primitive]:
    found = []
    for name, np_name, partials, domain in _MATH:
        sig = ONE if len(partials) == 1 else TWO
        singular = tuple(range(len(partials))) if name in _SINGULAR else ()
        regular = name == "sqrt"  # 0.5 / z is finite where x > 0
        form = _AT_ORIGIN if name == "hypot" else Partials(partials, singular=singular, regular_above_zero=regular)
        cheap = name in _CHEAP
        found.append(Primitive(f"math.{name}", sig, results.math_floats, form, domain=domain, recomputed=cheap))
        found.append(Primitive(f"np.{np_name}", sig, results.floats(), form, domain=domain, recomputed=cheap))
    return found


def _literal_operand(bound, simplify: bool) -> Partials | None:
    """`x ** c`, `math.pow(x, c)`, `np.power(x, c)` for a literal c: singular only for 0 < c < 1
    (`x ** 0.5` at x = 0, where the value is 0), and for the operator a simpler partial (none at
    all for c == 0). `c ** y` for a literal c >= 0: log(c) is finite (or guarded at 0), not singular."""
    base, exponent = bound.get("x"), bound.get("y")
    if exponent is not None and is_number(exponent):
        c = number_value(exponent)
        singular = (0,) if 0.0 < c < 1.0 else ()
        if not simplify:
            return Partials(_POWER_PARTIALS.templates, _POWER_PARTIALS.arrays, singular, regular_above_zero=True)
        if c == 0.0:
            return Partials(("0.0",))
        if c == 1.0:
            return Partials(("1.0",))
        if c == 2.0:
            return Partials(("2.0 * {x}",))
        return Partials((f"{c!r} * {{x}} ** {c - 1.0!r}",), singular=singular, regular_above_zero=True)
    if base is not None and is_number(base) and number_value(base) >= 0.0:
        return Partials(_POWER_PARTIALS.templates, _POWER_PARTIALS.arrays)
    return None


def _literal_exponent(bound) -> Partials | None:
    return _literal_operand(bound, simplify=True)


def _literal_power(bound) -> Partials | None:
    return _literal_operand(bound, simplify=False)


ELEMENTWISE: list[Primitive] = [
    *_math_twins(),
    Primitive("math.pow", TWO, results.math_floats, _POWER_PARTIALS, domain=(POSITIVE, WHOLE),
              special=_literal_power),
    Primitive("np.power", TWO, results.floats(), _POWER_PARTIALS, domain=(POSITIVE, WHOLE), special=_literal_power),
    Primitive("math.fabs", ONE, results.math_floats, Partials(("math.copysign(1.0, {x})",)), domain=(NEGATIVE,),
              recomputed=True),
    Primitive("np.fabs", ONE, results.floats(), Partials(("{m}.copysign(1.0, {x})",)), domain=(POSITIVE,)),
    Primitive("np.abs", ONE, results.like("x"), Partials(("{m}.copysign(1.0, {x})",)), domain=(NEGATIVE,)),
    # numba has no abs() of arrays: the result rule refuses one and says np.abs
    Primitive("abs", ONE, results.numbers_only(), Partials(("{m}.copysign(1.0, {x})",)), domain=(POSITIVE,),
              recomputed=True),
    Primitive("math.erf", ONE, results.math_floats, Partials(("1.1283791670955126 * math.exp(-{x} * {x})",)),
              domain=(WHOLE,)),
    Primitive("math.erfc", ONE, results.math_floats, Partials(("-1.1283791670955126 * math.exp(-{x} * {x})",)),
              domain=(WHOLE,)),
    Primitive("np.square", ONE, results.floats(), Partials(("2.0 * {x}",)), domain=(WHOLE,)),
    Primitive("np.reciprocal", ONE, results.like("x"), Partials(("-{z} * {z}",)), domain=(POSITIVE,)),
    Primitive("np.cbrt", ONE, results.floats(), _CUBE_ROOT, domain=(POSITIVE,)),
    # numba has no math.cbrt: np.cbrt of a float is the same number
    Primitive("math.cbrt", ONE, results.math_floats, lower=lambda bound: template("np.cbrt({x})", x=bound.get("x")),
              domain=(POSITIVE,)),
    # the derivative of log |Gamma(x)| is the digamma function (sourcead.runtime.digamma)
    Primitive("math.lgamma", ONE, results.math_floats, Partials(("digamma({x})",)), helpers=("digamma",),
              domain=(POSITIVE,), second_order=_NO_TRIGAMMA),
    Primitive("math.gamma", ONE, results.math_floats, Partials(("{z} * digamma({x})",)), helpers=("digamma",),
              domain=(POSITIVE,), second_order=_NO_TRIGAMMA),
    # max(a, b, c) is normalized to max(max(a, b), c): Python's first maximal argument
    Primitive("max", Signature.parse("x, y, ..."), results.numbers_only(), Selection(("{a0} >= {a1}", "{a0} < {a1}")),
              domain=(HIGH, LOW), recomputed=True),
    Primitive("min", Signature.parse("x, y, ..."), results.numbers_only(), Selection(("{a0} <= {a1}", "{a0} > {a1}")),
              domain=(LOW, HIGH), recomputed=True),
    Primitive("np.maximum", TWO, results.floats(), Selection(("{a0} >= {a1}", "{a0} < {a1}")), domain=(HIGH, LOW)),
    Primitive("np.minimum", TWO, results.floats(), Selection(("{a0} <= {a1}", "{a0} > {a1}")), domain=(HIGH, LOW)),
    Primitive("float", ONE, results.numbers_only("float"), Partials(("1.0",)), domain=(WHOLE,)),
]  # fmt: skip


def _operator(text: str):
    """A NumPy ufunc spelled as the operator it computes: normalize writes `np.add(x, y)` as `x + y`."""
    return lambda bound: template(text, **bound.args)


# NumPy's names of the arithmetic operators (np.power and np.square are primitives of their own)
UFUNC_OPERATORS: list[Primitive] = [
    Primitive("np.add", TWO, results.arithmetic(), lower=_operator("{x} + {y}"), domain=(WHOLE, WHOLE)),
    Primitive("np.subtract", TWO, results.arithmetic(), lower=_operator("{x} - {y}"), domain=(WHOLE, WHOLE)),
    Primitive("np.multiply", TWO, results.arithmetic(), lower=_operator("{x} * {y}"), domain=(WHOLE, WHOLE)),
    Primitive("np.divide", TWO, results.arithmetic(divides=True), lower=_operator("{x} / {y}"),
              spellings=("np.true_divide",), domain=(WHOLE, POSITIVE)),
    Primitive("np.negative", ONE, results.arithmetic(), lower=_operator("-{x}"), domain=(WHOLE,)),
    Primitive("np.positive", ONE, results.arithmetic(), lower=_operator("+{x}"), domain=(WHOLE,)),
]  # fmt: skip

# the shape NumPy broadcasts the operands to, not the values: what unbroadcast reads of `x + y`
_BROADCAST_LIKE = "broadcast_like({x}, {y})"
_SHAPE = ("broadcast_like",)

OPERATORS: list[Primitive] = [
    Primitive("Add", TWO, results.arithmetic(), Partials(("1.0", "1.0")), domain=(WHOLE, WHOLE),
              shape_like=_BROADCAST_LIKE, helpers=_SHAPE),
    Primitive("Subtract", TWO, results.arithmetic(), Partials(("1.0", "-1.0")), domain=(WHOLE, WHOLE),
              shape_like=_BROADCAST_LIKE, helpers=_SHAPE),
    Primitive("Multiply", TWO, results.arithmetic(), Partials(("{y}", "{x}")), domain=(WHOLE, WHOLE),
              shape_like=_BROADCAST_LIKE, helpers=_SHAPE),
    Primitive("Divide", TWO, results.arithmetic(divides=True), Partials(("{r}", "-{z} * {r}")),
              domain=(WHOLE, POSITIVE), shape_like=_BROADCAST_LIKE, helpers=_SHAPE),
    Primitive("Power", TWO, results.arithmetic(), _POWER_PARTIALS, domain=(POSITIVE, WHOLE),
              special=_literal_exponent),
    Primitive("Modulo", TWO, results.arithmetic(), Partials(("1.0", "-{m}.floor({x} / {y})")),
              domain=(NEAR_TWO_AND_HALF, NEAR_ONE)),
    Primitive("FloorDivide", TWO, results.arithmetic(), constant=True, domain=(NEAR_TWO_AND_HALF, NEAR_ONE)),
    Primitive("Minus", ONE, results.arithmetic(), Partials(("-1.0",)), domain=(WHOLE,)),
    Primitive("Plus", ONE, results.arithmetic(), Partials(("1.0",)), domain=(WHOLE,)),
]  # fmt: skip

# The operator classes of libcst, by the primitive they are.
OPERATOR_NODES: dict[type, str] = {
    cst.Add: "Add",
    cst.Subtract: "Subtract",
    cst.Multiply: "Multiply",
    cst.Divide: "Divide",
    cst.Power: "Power",
    cst.Modulo: "Modulo",
    cst.FloorDivide: "FloorDivide",
    cst.MatrixMultiply: "MatrixMultiply",
    cst.Minus: "Minus",
    cst.Plus: "Plus",
    cst.Not: "not",
}

__all__ = ["ELEMENTWISE", "FLOAT", "INT", "OPERATORS", "OPERATOR_NODES", "UFUNC_OPERATORS"]
