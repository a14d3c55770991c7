"""Whole-array primitives: reductions, products, selections, reshapes, creation, sizes.

Parameters named `a` and `b` must be arrays, and those named `shape`, `newshape` and `num` sizes
(kinds guesses from them which parameters are arrays and which are ints);
`x` and `y` may be numbers or arrays. Templates name the operand `{x}`, its tangent `{t}`, the result
`{z}` and its adjoint `{g}`, and the other arguments by their parameter names (`{axis}`,
`{newshape}`). `example` is a float expression over arrays a (4x3), b (3,), c (4,), d (6,) of
entries in (0.1, 1), for the tests.
"""

from __future__ import annotations

import libcst as cst

from ..exprs import paren, template
from ..types import BOOL, FLOAT, INT, array
from . import results
from .forms import Bilinear, Method, Primitive, Pullback, Selection
from .signature import Signature

S = Signature.parse


def _sum_over_axis(bound) -> Pullback | None:
    if bound.get("axis") is None:
        return None
    return Pullback("np.sum({t}, axis={axis})", "expand_axis({g}, {x}, {axis})")


def _mean_over_axis(bound) -> cst.BaseExpression | None:
    """np.mean(a, axis=k) is np.sum(a, axis=k) / a.shape[k] (numba has no np.mean over an axis)."""
    axis = bound.get("axis")
    if axis is None:
        return None
    a = paren(bound.get("a"))
    return template("np.sum({a}, axis={k}) / {a}.shape[{k}]", a=a, k=axis)


_DOT = Bilinear(
    ("np.dot({t}, {b})", "np.dot({a}, {t})"),
    ("matmul_bar_left({g}, {a}, {b})", "matmul_bar_right({g}, {a}, {b})"),
)

ARRAYS: list[Primitive] = [
    # reductions
    Primitive("np.sum", S("a, axis=!"), results.reduced(), Pullback("np.sum({t})", "{g}", spread=True),
              special=_sum_over_axis, helpers=("expand_axis",),
              example="np.sum(np.sin(a) * a) + np.sum(np.sum(a, axis=0) ** 2) + np.sum(np.sum(a * a, axis=1) * c)"),
    Primitive("np.mean", S("a, axis=!"), results.reduced(float_result=True),
              Pullback("np.mean({t})", "{g} / {x}.size", spread=True), lower=_mean_over_axis,
              example="np.mean(np.exp(0.3 * a)) * np.mean(b) + np.sum(np.mean(a, axis=1) * c)"),
    Primitive("np.max", S("a"), results.reduced(), Pullback("np.ravel({t})[np.argmax({x})]", "at_argmax({g}, {x})"),
              helpers=("at_argmax",), example="np.max(a * a) + np.max(np.tanh(b))"),
    Primitive("np.min", S("a"), results.reduced(), Pullback("np.ravel({t})[np.argmin({x})]", "at_argmin({g}, {x})"),
              helpers=("at_argmin",), example="np.min(np.cos(a)) + np.min(b * b)"),
    Primitive("np.prod", S("a"), results.reduced(),
              Pullback("np.sum({t} * prod_others({x}))", "prod_others({x}) * {g}"), helpers=("prod_others",),
              example="np.prod(b + 1.0)"),
    Primitive("np.linalg.norm", S("a"), results.reduced(float_result=True),
              # at 0 (no derivative), 0: a norm's subgradient, as for math.hypot
              Pullback("(np.dot(np.ravel({x}), np.ravel({t})) / {z} if {z} != 0.0 else 0.0)",
                       "{x} * ({g} / {z} if {z} != 0.0 else 0.0)"),
              example="np.linalg.norm(a) + np.linalg.norm(np.sin(b))"),
    # shape-preserving and linear
    Primitive("np.transpose", S("a"), results.array_operand("a", (1, 2)), Pullback("np.transpose({t})",
              "np.transpose({g})"), example="np.sum(np.transpose(a) @ c)"),
    Primitive("np.cumsum", S("a"), results.array_operand("a", (1,)),
              Pullback("np.cumsum({t})", "np.cumsum({g}[::-1])[::-1]"), example="np.sum(np.cumsum(b) ** 2)"),
    Primitive("np.reshape", S("a, newshape"), results.reshaped,
              Pullback("np.reshape(np.ascontiguousarray({t}), {newshape})",
                       "np.reshape(np.ascontiguousarray({g}), {x}.shape)"),
              operands=("a",), example="np.sum(np.reshape(d, (2, 3)) @ b)"),
    Primitive("np.copy", S("a"), results.like("a"), Pullback("np.copy({t})", "{g}"), copies=True,
              example="np.sum(np.copy(a) * a)"),
    # a value saved before a call that may change it (normalize: evaluation order): a copy of an array
    Primitive("snapshot", S("x"), results.like("x"), Pullback("snapshot({t})", "{g}"), helpers=("snapshot",)),
    # products
    Primitive("np.dot", S("a, b"), results.matmul, _DOT, helpers=("matmul_bar_left", "matmul_bar_right"),
              example="np.dot(c, a @ b) + np.sum(np.dot(a, b) ** 2)"),
    Primitive("MatrixMultiply", S("a, b"), results.matmul, _DOT, helpers=("matmul_bar_left", "matmul_bar_right"),
              example="np.sum((a @ b) * c) + b @ b"),
    Primitive("np.outer", S("a, b"), results.outer,
              Bilinear(("np.outer({t}, {b})", "np.outer({a}, {t})"), ("np.dot({g}, {b})", "np.dot({a}, {g})")),
              example="np.sum(np.outer(c, b) * a)"),
    # selections; the seeded example inputs stay away from the kinks, where the selection switches
    Primitive("np.where", S("condition, x, y"), results.where,
              Selection(("{a0}", "np.logical_not({a0})")), operands=("x", "y"),
              example="np.sum(np.where(a > 0.55, a * a, np.sin(a)))"),
    Primitive("np.clip", S("x, a_min, a_max"), results.like("x"),
              Selection(("({a0} >= {a1}) & ({a0} <= {a2})", "{a0} < {a1}", "{a0} > {a2}")),
              example="np.sum(np.clip(a, 0.33, 0.77) * a)"),
    # creation: constants, except for np.full's fill value
    Primitive("np.zeros", S("shape, dtype=!"), results.created(), constant=True),
    Primitive("np.ones", S("shape, dtype=!"), results.created(), constant=True),
    Primitive("np.empty", S("shape, dtype=!"), results.created(), constant=True),
    Primitive("np.zeros_like", S("a, dtype=!"), results.created_like, constant=True),
    Primitive("np.ones_like", S("a, dtype=!"), results.created_like, constant=True),
    Primitive("np.empty_like", S("a, dtype=!"), results.created_like, constant=True),
    Primitive("np.full", S("shape, fill_value, dtype=!"), results.filled,
              Pullback("np.full({shape}, {t})", "np.sum({g})"), operands=("fill_value",),
              example="np.sum(np.full(3, np.sum(b)) * b)"),
    Primitive("np.full_like", S("a, fill_value, dtype=!"), results.filled_like,
              Pullback("np.full_like({a}, {t})", "np.sum({g})"), operands=("fill_value",),
              example="np.sum(np.full_like(b, np.max(c)) * b)"),
    Primitive("np.arange", S("start, stop=, step=, dtype=!"), results.ranged),  # not differentiable
    Primitive("np.linspace", S("start, stop, num="), results.fixed(array(FLOAT, 1))),  # not differentiable
    # sizes and positions
    Primitive("len", S("a"), results.of_array(INT), constant=True),
    Primitive("size", S("a"), results.of_array(INT), constant=True),  # x.size
    Primitive("ndim", S("a"), results.of_array(INT), constant=True),  # x.ndim
    Primitive("shape", S("a"), results.shape_of, constant=True),  # x.shape
    Primitive("np.argmax", S("a"), results.of_array(INT), constant=True),
    Primitive("np.argmin", S("a"), results.of_array(INT), constant=True),
    Primitive("np.isnan", S("x"), results.booleans, constant=True),
    Primitive("np.isinf", S("x"), results.booleans, constant=True),
    Primitive("np.isfinite", S("x"), results.booleans, constant=True),
    Primitive("np.logical_not", S("x"), results.booleans, constant=True),
    Primitive("np.logical_and", S("x, y"), results.booleans, constant=True),
    Primitive("np.logical_or", S("x, y"), results.booleans, constant=True),
]  # fmt: skip

# x.name(...) as a primitive call with x first
METHODS: list[Method] = [
    Method("sum", "np.sum", S("a, axis=!")),
    Method("mean", "np.mean", S("a, axis=!")),
    Method("max", "np.max", S("a")),
    Method("min", "np.min", S("a")),
    Method("prod", "np.prod", S("a")),
    Method("cumsum", "np.cumsum", S("a")),
    Method("copy", "np.copy", S("a")),
    Method("dot", "np.dot", S("a, b")),
    Method("transpose", "np.transpose", S("a")),
    Method("reshape", "np.reshape", S("a, newshape...")),  # x.reshape(2, 3) or x.reshape((2, 3))
]
# x.name (no call): a primitive of x
ATTRIBUTES: dict[str, str] = {"T": "np.transpose", "size": "size", "ndim": "ndim", "shape": "shape"}

__all__ = ["ARRAYS", "ATTRIBUTES", "BOOL", "METHODS"]
