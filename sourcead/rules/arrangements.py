"""Primitives that rearrange or make arrays without arithmetic: flips, rolls, joins (np.concatenate,
np.hstack, np.vstack), triangles (np.triu, np.tril), np.atleast_2d, and the constant matrices
np.eye and np.identity. Each is linear: its adjoint is its transpose (a flip flips back, a roll
rolls back, a join's adjoint is the parts of g each operand became, a triangle keeps the same
triangle of g).

Where numba's NumPy takes no axis (np.flip, np.roll) or no list (np.concatenate), normalize lowers
the call (`lower`) into a runtime helper of `sourcead.runtime.arrangements` declared here too.
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import template
from ..ir.types import FLOAT, INT, Type, array, promote
from . import results
from .forms import Args, Bilinear, Primitive, Pullback, ResultError
from .signature import Signature

S = Signature.parse


def _axis_helper(helper: str, *others: str):
    """np.flip(a, axis=k) is flip_along(a, k), np.roll(a, s, axis=k) roll_along(a, s, k)."""

    def lower(bound) -> cst.BaseExpression | None:
        axis = bound.get("axis")
        if axis is None:
            return None
        names = "".join(f", {{{o}}}" for o in others)
        return template(f"{helper}({{a}}{names}, {{axis}})", a=bound.get("a"), axis=axis,
                        **{o: bound.get(o) for o in others})  # fmt: skip

    return lower


def _fixed_axis(helper: str, axis: int):
    """np.flipud(a) is flip_along(a, 0), np.fliplr(a) flip_along(a, 1)."""
    return lambda bound: template(f"{helper}({{a}}, {axis})", a=bound.get("a"))


def _default_k(name: str):
    """np.triu(a) is np.triu(a, k=0): the derivative reads k."""

    def lower(bound) -> cst.BaseExpression | None:
        if bound.get("k") is not None:
            return None
        return template(f"{name}({{a}}, k=0)", a=bound.get("a"))

    return lower


def _joined(axis: int | None, rows: bool = False):
    """np.concatenate((a, b, c), axis=k) is join_along(join_along(a, b, k), c, k); np.hstack joins
    1-D arrays along axis 0 and 2-D ones along axis 1 (axis -1 for both); np.vstack joins the
    operands made 2-D (np.atleast_2d) along axis 0. A sequence that is not written in the call (a
    tuple variable) is not lowered, and the result rule refuses it."""

    def lower(bound) -> cst.BaseExpression | None:
        arrays = bound.get("arrays")
        if not isinstance(arrays, (cst.Tuple, cst.List)) or not arrays.elements:
            return None
        given = bound.get("axis")
        k = given if axis is None and given is not None else cst.parse_expression(str(0 if axis is None else axis))
        parts = [e.value for e in arrays.elements]
        if rows:
            parts = [template("np.atleast_2d({a})", a=p) for p in parts]
        joined = parts[0]
        for part in parts[1:]:
            joined = template("join_along({a}, {b}, {k})", a=joined, b=part, k=k)
        return joined if len(parts) > 1 else template("np.copy({a})", a=joined)

    return lower


def _sequence(args: Args) -> Type:
    raise ResultError(
        f"{args.name} takes a tuple or list of arrays written in the call here, e.g. {args.name}((a, b))",
        "Write the arrays in the call: np.concatenate((a, b), axis=0).",
        "arrays",
    )


def _joined_pair(args: Args) -> Type:
    """join_along(a, b, axis): 1-D or 2-D arrays of one number of dimensions."""
    a, b = args["a"], args["b"]
    for param, t in (("a", a), ("b", b)):
        if t.ndim not in (1, 2):
            raise ResultError(f"np.concatenate, np.hstack and np.vstack join 1-D or 2-D arrays here, got "
                              f"{t.describe()}", "Join 3-D arrays by writing into slices of np.empty(...).",
                              param)  # fmt: skip
    if a.ndim != b.ndim:
        raise ResultError(
            f"np.concatenate joins arrays of one number of dimensions, got {a.describe()} and {b.describe()}",
            "Give both the same dimensions (x[None, :], x[:, None]).",
            "b",
        )
    axis = args.literal("axis")
    if not isinstance(axis, int) or not -a.ndim <= axis < a.ndim:
        raise ResultError(f"axis {axis} is out of range for {a.describe()}", param="axis")
    return array(promote(a.dtype, b.dtype), a.ndim)


def _at_least_2d(args: Args) -> Type:
    t = args["a"]
    if not t.is_array or t.ndim > 2:
        raise ResultError(f"np.atleast_2d takes a 1-D or 2-D array here, got {t.describe()}", param="a")
    return array(t.dtype, 2)


def _rolled(args: Args) -> Type:
    if args["shift"] != INT:
        raise ResultError(f"the shift of np.roll must be an int, got {args['shift'].describe()}", param="shift")
    return results.array_operand("a", (1, 2, 3))(args)


def _square(params: tuple[str, ...]):
    """np.eye(N, M=None, k=0), np.identity(n): a 2-D array of the dtype asked for (float)."""

    def result(args: Args) -> Type:
        for p in params:
            if args.has(p) and args[p] != INT:
                raise ResultError(f"the size {p} of {args.name} must be an int, got {args[p].describe()}", param=p)
        return array(results.dtype_given(args, "float"), 2)

    return result


_FLIP = Pullback("flip_along({t}, {axis})", "flip_along({g}, {axis})")
_JOIN = Bilinear(
    ("join_along({t}, np.zeros_like({b}), {axis})", "join_along(np.zeros_like({a}), {t}, {axis})"),
    ("first_part({g}, {a}, {axis})", "second_part({g}, {a}, {axis})"),
)

ARRANGEMENTS: list[Primitive] = [
    Primitive("np.flip", S("a, axis=!"), results.array_operand("a", (1, 2, 3)),
              Pullback("np.flip({t})", "np.flip({g})"), lower=_axis_helper("flip_along"), view=True,
              example="np.sum(np.flip(a) * a) + np.sum(np.flip(b) * np.sin(b)) + np.sum(np.flip(a, axis=1) * a)"),
    Primitive("np.flipud", S("a"), results.array_operand("a", (1, 2, 3)), lower=_fixed_axis("flip_along", 0)),
    Primitive("np.fliplr", S("a"), results.array_operand("a", (2, 3)), lower=_fixed_axis("flip_along", 1)),
    Primitive("flip_along", S("a, axis=!"), results.array_operand("a", (1, 2, 3)), _FLIP, helpers=("flip_along",),
              view=True, example="np.sum(np.flip(a, 0) * a) + np.sum(np.flip(a, axis=-1) ** 2)"),
    Primitive("np.roll", S("a, shift, axis=!"), _rolled, Pullback("np.roll({t}, {shift})", "np.roll({g}, -({shift}))"),
              operands=("a",), lower=_axis_helper("roll_along", "shift"),
              example="np.sum(np.roll(c, 1) * c) + np.sum(np.roll(a, -2) * np.cos(a))"),
    Primitive("roll_along", S("a, shift, axis=!"), _rolled,
              Pullback("roll_along({t}, {shift}, {axis})", "roll_along({g}, -({shift}), {axis})"), operands=("a",),
              helpers=("roll_along",), example="np.sum(np.roll(a, 1, axis=0) * a) + np.sum(np.roll(a, 2, 1) ** 2)"),
    Primitive("np.triu", S("a, k=!"), results.array_operand("a", (2,)),
              Pullback("np.triu({t}, {k})", "np.triu({g}, {k})"), lower=_default_k("np.triu"), shape_like="{a}",
              example="np.sum(np.triu(a) * a) + np.sum(np.triu(a, 1) ** 2) + np.sum(np.triu(a, k=-1) * a)"),
    Primitive("np.tril", S("a, k=!"), results.array_operand("a", (2,)),
              Pullback("np.tril({t}, {k})", "np.tril({g}, {k})"), lower=_default_k("np.tril"), shape_like="{a}",
              example="np.sum(np.tril(a) * a) + np.sum(np.tril(a, -1) ** 2) + np.sum(np.tril(a, k=1) * a)"),
    Primitive("np.atleast_2d", S("a"), _at_least_2d,
              Pullback("np.atleast_2d({t})", "np.reshape(np.ascontiguousarray({g}), {x}.shape)"), view=True,
              example="np.sum(np.atleast_2d(b) * a) + np.sum(np.atleast_2d(a) ** 2)"),
    Primitive("np.concatenate", S("arrays, axis=!"), _sequence, lower=_joined(None),
              example="np.sum(np.concatenate((b, c)) ** 2) + np.sum(np.concatenate([a, a * a], axis=1) * 0.5)"),
    Primitive("np.hstack", S("arrays"), _sequence, lower=_joined(-1),
              example="np.sum(np.hstack((b, c, b)) ** 2) + np.sum(np.hstack([a, np.sin(a)]) * 0.5)"),
    Primitive("np.vstack", S("arrays"), _sequence, lower=_joined(0, rows=True),
              example="np.sum(np.vstack((b, b * b)) * a[:2]) + np.sum(np.vstack([a, a]) ** 2)"),
    Primitive("join_along", S("a, b, axis=!"), _joined_pair, _JOIN,
              helpers=("join_along", "first_part", "second_part"),
              example="np.sum(np.concatenate((a, a * b), axis=0) ** 2)"),
    Primitive("np.eye", S("N, M=, k=!, dtype=!"), _square(("N", "M")), constant=True),
    Primitive("np.identity", S("n, dtype=!"), _square(("n",)), constant=True),
]  # fmt: skip

__all__ = ["ARRANGEMENTS", "FLOAT"]
