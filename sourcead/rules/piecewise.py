"""Primitives whose derivative is zero wherever it is defined: integer conversions, rounding,
signs, comparisons and logic. Their results never carry derivatives. Also the module constants."""

from __future__ import annotations

import math

from ..ir.types import BOOL, FLOAT, INT, Type
from . import results
from .forms import Args, Constant, Primitive, ResultError
from .signature import Signature

ONE = Signature.parse("x")


def _rounded(args: Args) -> Type:
    """round(x) is an int; round(x, n) a float."""
    results.numbers_only()(Args(args.name, {"x": args["x"]}))
    return FLOAT if args.has("ndigits") else INT


def _integer(args: Args) -> Type:
    t = args["x"]
    if not t.is_scalar:
        raise ResultError(f"int() takes a number, not {t.describe()}", "Index the array.", "x")
    return INT


PIECEWISE: list[Primitive] = [
    Primitive("int", ONE, _integer, constant=True),
    Primitive("round", Signature.parse("x, ndigits="), _rounded, constant=True),
    Primitive("math.floor", ONE, results.fixed(INT), constant=True),
    Primitive("math.ceil", ONE, results.fixed(INT), constant=True),
    Primitive("math.trunc", ONE, results.fixed(INT), constant=True),
    Primitive("math.isnan", ONE, results.fixed(BOOL), constant=True),
    Primitive("math.isinf", ONE, results.fixed(BOOL), constant=True),
    Primitive("math.isfinite", ONE, results.fixed(BOOL), constant=True),
    Primitive("np.floor", ONE, results.floats(), constant=True),
    Primitive("np.ceil", ONE, results.floats(), constant=True),
    Primitive("np.trunc", ONE, results.floats(), constant=True),
    Primitive("np.rint", ONE, results.floats(), constant=True),
    Primitive("np.sign", ONE, results.like("x"), constant=True),
    # comparisons, `and`, `or`, `not` (spelled by operators, not names)
    Primitive("compare", Signature.parse("x, y, ..."), results.booleans, constant=True),
    Primitive("and", Signature.parse("x, y"), results.logical, constant=True),
    Primitive("or", Signature.parse("x, y"), results.logical, constant=True),
    Primitive("not", ONE, results.logical, constant=True),
]

CONSTANTS: list[Constant] = [
    Constant("math.pi", math.pi),
    Constant("math.e", math.e),
    Constant("math.tau", math.tau),
    Constant("math.inf", math.inf),
    Constant("math.nan", math.nan),
    Constant("np.pi", math.pi),
    Constant("np.e", math.e),
    Constant("np.inf", math.inf),
    Constant("np.nan", math.nan),
]
