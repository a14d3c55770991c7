"""Whole-array primitives: reductions, products, selections, reshapes, creation, sizes.

Parameters named `a` and `b` must be arrays, and those named `shape`, `newshape` and `num` sizes
(kinds guesses from them which parameters are arrays and which are ints);
`x` and `y` may be numbers or arrays. Templates name the operand `{x}`, its tangent `{t}`, the result
`{z}` and its adjoint `{g}`, and the other arguments by their parameter names (`{axis}`,
`{newshape}`). `example` is a float expression over arrays a (4x3), b (3,), c (4,), d (6,) of
entries in (0.1, 1), for the tests.
"""

from __future__ import annotations

import ast

import libcst as cst

from ..ir.exprs import code, paren, template
from ..ir.types import BOOL, FLOAT, INT, array
from . import results
from .forms import Bilinear, Method, Primitive, Pullback, SecondOrderGap, Selection
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


def _extremum_over_axis(helper: str):
    """np.max(a, axis=k) is max_along(a, k) (numba's np.max takes no axis); np.min min_along."""

    def lower(bound) -> cst.BaseExpression | None:
        axis = bound.get("axis")
        if axis is None:
            return None
        return template(f"{helper}({{a}}, {{k}})", a=bound.get("a"), k=axis)

    return lower


def _over_axis(helper: str):
    """np.cumsum(a, axis=k) is cumsum_along(a, k), np.prod(a, axis=k) prod_along(a, k): numba's
    take no axis."""

    def lower(bound) -> cst.BaseExpression | None:
        axis = bound.get("axis")
        if axis is None:
            return None
        return template(f"{helper}({{a}}, {{k}})", a=bound.get("a"), k=axis)

    return lower


def _along(largest: bool) -> Pullback:
    """The tangent and adjoint of max_along (min_along): at the first extremum of each row or column."""
    flag = "True" if largest else "False"
    return Pullback(
        f"select_along({{t}}, {{x}}, {{axis}}, {flag})", f"select_along_bar({{g}}, {{x}}, {{axis}}, {flag})"
    )


def _variance(std: bool):
    """np.var(a) is np.mean((a - np.mean(a)) ** 2) (over an axis: the mean kept as an axis, then
    the sum over it, divided by n - ddof); np.std its square root."""

    def lower(bound) -> cst.BaseExpression:
        a, axis, ddof = paren(bound.get("a")), bound.get("axis"), bound.get("ddof")
        ddof = ddof if ddof is not None else cst.Integer("0")
        if axis is None:
            text = "np.sum(({a} - np.sum({a}) / {a}.size) ** 2) / ({a}.size - {ddof})"
        else:
            text = (
                "np.sum(({a} - np.expand_dims(np.sum({a}, axis={k}) / {a}.shape[{k}], {k})) ** 2, axis={k})"
                " / ({a}.shape[{k}] - {ddof})"
            )
        operands = {"a": a, "ddof": ddof} | ({"k": axis} if axis is not None else {})
        variance = template(text, **operands)
        return template("np.sqrt({v})", v=variance) if std else variance

    return lower


def _literal_value(node: cst.BaseExpression | None) -> object:
    """The value of an argument the signature makes a literal (`!`): None where it is not given."""
    return None if node is None else ast.literal_eval(code(node))


def _covariance(bound) -> cst.BaseExpression | None:
    """np.cov(m) is c @ c.T / (n - ddof), c the rows of m less their means (n observations in
    each row; with rowvar=False, its columns and c.T @ c); ddof is 1, or 0 with bias=True, unless
    given. rowvar, bias and ddof are literals (the signature's `!`), read as NumPy reads them. None
    with a second array y (`results.covariance` refuses it, with the np.vstack to write).
    `as_matrix` refuses an m that is not 2-D (np.cov of a vector is a 0-d array of its variance)."""
    rowvar, bias, given = (_literal_value(bound.get(k)) for k in ("rowvar", "bias", "ddof"))
    rowvar, bias = bool(True if rowvar is None else rowvar), bool(bias)
    ddof = bound.get("ddof") if given is not None else cst.Integer("0" if bias else "1")
    a = paren(bound.get("a"))
    if bound.get("y") is not None:
        return None
    k = "1" if rowvar else "0"
    centred = template(f"(as_matrix({{a}}) - np.expand_dims(np.sum({{a}}, axis={k}) / {{a}}.shape[{k}], {k}))", a=a)
    product = "{c} @ np.transpose({c})" if rowvar else "np.transpose({c}) @ {c}"
    return template(f"{product} / ({{a}}.shape[{k}] - {{ddof}})", c=centred, a=a, ddof=paren(ddof))


# np.linalg.norm's vector norms by ord, each a primitive of its own (sourcead.norms computes them)
_VECTOR_NORMS = {"2": "norm2_along", "1": "norm1_along", "inf": "norm_inf_along"}


def _norm_kind(ord_: cst.BaseExpression | None) -> str | None:
    """The norm ord= asks for: "2" for None (or omitted) and 2, "1", "inf" for np.inf; None for others."""
    if ord_ is None or code(ord_) == "None":
        return "2"
    text = code(ord_)
    return {"2": "2", "2.0": "2", "1": "1", "1.0": "1", "np.inf": "inf", "math.inf": "inf"}.get(text)


def _norm(bound) -> cst.BaseExpression | None:
    """np.linalg.norm(x, ord, axis=k) is norm2_along(x, k) (norm1_along, norm_inf_along by ord), the
    vector norms of the rows or columns; with ord but no axis, the same over axis 0 of a 1-D x
    (`as_vector` refuses a matrix, whose ord=1, 2 and inf norms are other functions). Without ord
    and axis, the declared rule (the 2-norm of all elements)."""
    a, ord_, axis = bound.get("a"), bound.get("ord"), bound.get("axis")
    if axis is None and (ord_ is None or code(ord_) == "None"):
        return None
    kind = _norm_kind(ord_)
    if kind is None:
        return None  # the result rule says which ord values are supported
    x = a if axis is not None else template("as_vector({a})", a=a)
    return template(f"{_VECTOR_NORMS[kind]}({{x}}, {{k}})", x=x, k=axis if axis is not None else cst.Integer("0"))


# Their derivatives, 0 at a zero vector as np.linalg.norm's (a norm's subgradient, as for math.hypot):
# x / |x| (z + (z == 0) is z, or 1 where the norm is 0 and so is x), sign(x) (0 at 0), and sign(x)
# at the first largest magnitude.
_NONZERO = "({z} + ({z} == 0.0))"
_NORM_RULES = {
    "norm2_along": Pullback(f"np.sum({{x}} * {{t}}, axis={{axis}}) / {_NONZERO}",
                            f"{{x}} * expand_axis({{g}} / {_NONZERO}, {{x}}, {{axis}})"),
    "norm1_along": Pullback("np.sum(np.sign({x}) * {t}, axis={axis})",
                            "np.sign({x}) * expand_axis({g}, {x}, {axis})"),
    "norm_inf_along": Pullback("select_along(np.sign({x}) * {t}, np.abs({x}), {axis}, True)",
                               "np.sign({x}) * select_along_bar({g}, np.abs({x}), {axis}, True)"),
}  # fmt: skip
_NORM_HELPERS = {"norm2_along": ("expand_axis",), "norm1_along": ("expand_axis",),
                 "norm_inf_along": ("select_along", "select_along_bar")}  # fmt: skip
_NORM_EXAMPLES = {
    "norm2_along": "np.sum(np.linalg.norm(a, axis=1) * c) + np.linalg.norm(np.sin(b), 2)"
                   " + np.sum(np.linalg.norm(a - 0.5, axis=0, keepdims=True) * a)",
    "norm1_along": "np.sum(np.linalg.norm(np.cos(3.0 * a), 1, axis=0) * b) + np.linalg.norm(d - 0.5, ord=1)"
                   " + np.sum(np.linalg.norm(a, 1, axis=-1) ** 2)",
    "norm_inf_along": "np.sum(np.linalg.norm(np.cos(3.0 * a), np.inf, axis=1) * c) + np.linalg.norm(c, np.inf)"
                      " + np.sum(np.linalg.norm(a * a, ord=np.inf, axis=0))",
}  # fmt: skip


def _vector_norms() -> list[Primitive]:
    return [
        Primitive(name, S("a, axis=!"), results.normed_along, rule, helpers=(name, *_NORM_HELPERS[name]),
                  example=_NORM_EXAMPLES[name])
        for name, rule in _NORM_RULES.items()
    ]  # fmt: skip


_MATMUL_HELPERS = ("matmul_bar_left", "matmul_bar_right", "matmul_like")
_MATMUL_LIKE = "matmul_like({a}, {b})"  # the product's shape, not its values: what unbroadcast reads
_DOT = Bilinear(
    ("np.dot({t}, {b})", "np.dot({a}, {t})"),
    ("matmul_bar_left({g}, {a}, {b})", "matmul_bar_right({g}, {a}, {b})"),
)

ARRAYS: list[Primitive] = [
    # reductions
    Primitive("np.sum", S("a, axis=!, keepdims=!"), results.reduced(ndim=5),
              Pullback("np.sum({t})", "{g}", spread=True),
              special=_sum_over_axis, helpers=("expand_axis",),
              example="np.sum(np.sin(a) * a) + np.sum(np.sum(a, axis=0) ** 2) + np.sum(np.sum(a * a, axis=1) * c)"),
    Primitive("np.mean", S("a, axis=!, keepdims=!"), results.reduced(float_result=True, ndim=4),
              Pullback("np.mean({t})", "{g} / {x}.size", spread=True), lower=_mean_over_axis,
              example="np.mean(np.exp(0.3 * a)) * np.mean(b) + np.sum(np.mean(a, axis=1) * c)"
                      " + np.sum(np.mean(a, axis=0) ** 2)"),
    Primitive("np.max", S("a, axis=!, keepdims=!"), results.reduced(ndim=4, last=True),
              Pullback("np.ravel({t})[np.argmax({x})]", "at_argmax({g}, {x})"), lower=_extremum_over_axis("max_along"),
              helpers=("at_argmax",),
              example="np.max(a * a) + np.max(np.tanh(b)) + np.sum(np.max(a * c[:, None], axis=0) ** 2)"
                      " + np.sum(np.max(np.sin(a), axis=-1) * c)"),
    Primitive("np.min", S("a, axis=!, keepdims=!"), results.reduced(ndim=4, last=True),
              Pullback("np.ravel({t})[np.argmin({x})]", "at_argmin({g}, {x})"), lower=_extremum_over_axis("min_along"),
              helpers=("at_argmin",),
              example="np.min(np.cos(a)) + np.min(b * b) + np.sum(np.min(a, axis=1) * c) + np.sum(np.min(a, axis=0))"),
    # what np.max / np.min over an axis are written as (examples: through those spellings)
    Primitive("max_along", S("a, axis=!"), results.reduced(ndim=4, last=True), _along(True),
              helpers=("max_along", "select_along", "select_along_bar"), example="np.sum(np.max(a, axis=1) * c)"),
    Primitive("min_along", S("a, axis=!"), results.reduced(ndim=4, last=True), _along(False),
              helpers=("min_along", "select_along", "select_along_bar"), example="np.sum(np.min(a, axis=0) * b)"),
    Primitive("np.var", S("a, axis=!, ddof=!"), results.reduced(float_result=True, ndim=4), lower=_variance(False),
              example="np.var(a * b) + np.sum(np.var(a, axis=0) * b) + np.var(c, ddof=1)"),
    Primitive("np.std", S("a, axis=!, ddof=!"), results.reduced(float_result=True, ndim=4), lower=_variance(True),
              example="np.std(np.sin(a)) + np.sum(np.std(a, axis=1) * c)"),
    Primitive("np.expand_dims", S("a, axis=!"), results.expanded,
              Pullback("np.expand_dims({t}, {axis})", "np.sum({g}, axis={axis})"),
              view=True, example="np.sum(np.expand_dims(c, 1) * a) + np.sum(np.sum(a, axis=0, keepdims=True) * a)"),
    # a 1-D array as it is: the vector norms refuse a matrix through it
    Primitive("as_vector", S("a"), results.vector, Pullback("{t}", "{g}"), helpers=("as_vector",),
              example="np.linalg.norm(b, 1) * np.linalg.norm(c, np.inf)"),
    Primitive("np.cov", S("a, y=, rowvar=!, bias=!, ddof=!"), results.covariance, lower=_covariance,
              example="np.sum(np.cov(a) * np.cov(a, bias=True)) + np.sum(np.cov(np.vstack((b, d[:3]))) ** 2)"
                      " + np.sum(np.cov(a, rowvar=False) * np.cov(a, ddof=0, rowvar=False))"),
    # a 2-D array as it is: np.cov refuses a vector through it
    Primitive("as_matrix", S("a"), results.matrix, Pullback("{t}", "{g}"), helpers=("as_matrix",),
              example="np.sum(np.cov(np.transpose(a)))"),
    # the lower triangle of A is read (NumPy's and numba's potrf): an entry above has no derivative
    Primitive("np.linalg.cholesky", S("a"), results.factor, Pullback("cholesky_tangent({z}, {t})",
              "cholesky_bar({g}, {z})"), helpers=("cholesky_tangent", "cholesky_bar"), shape_like="{a}", kept=True,
              example="np.sum(np.linalg.cholesky(np.transpose(a) @ a + np.eye(3)) * np.cos(a[:3, :]))",
              second_order=SecondOrderGap(
                  "its tangent calls `cholesky_tangent`, which has no derivative rule",
                  "Write the factorisation as loops (NPBench's cholesky kernel), which second order differentiates.")),
    Primitive("np.prod", S("a, axis=!, keepdims=!"), results.reduced(),
              Pullback("np.sum({t} * prod_others({x}))", "prod_others({x}) * {g}"), helpers=("prod_others",),
              lower=_over_axis("prod_along"),
              example="np.prod(b + 1.0) + np.sum(np.prod(a, axis=0) * b) + np.sum(np.prod(a * a, axis=-1) * c)",
              second_order=SecondOrderGap(
                  "its tangent calls `prod_others`, which has no derivative rule",
                  "Write the product as a loop (p *= x[i]), which second order differentiates.")),
    Primitive("prod_along", S("a, axis=!"), results.reduced(),
              Pullback("np.sum({t} * prod_others_along({x}, {axis}), axis={axis})",
                       "prod_others_along({x}, {axis}) * expand_axis({g}, {x}, {axis})"),
              helpers=("prod_along", "prod_others_along", "expand_axis"), example="np.sum(np.prod(a, axis=1) * c)",
              second_order=SecondOrderGap("its tangent calls `prod_others_along`, which has no derivative rule")),
    Primitive("np.linalg.norm", S("a, ord=!, axis=!, keepdims=!"), results.normed,
              # at 0 (no derivative), 0: a norm's subgradient, as for math.hypot
              Pullback("(np.dot(np.ravel({x}), np.ravel({t})) / {z} if {z} != 0.0 else 0.0)",
                       "{x} * ({g} / {z} if {z} != 0.0 else 0.0)"), lower=_norm,
              example="np.linalg.norm(a) + np.linalg.norm(np.sin(b)) + np.linalg.norm(b, 1) + np.linalg.norm(c, np.inf)"
                      " + np.sum(np.linalg.norm(a, axis=1) * c) + np.linalg.norm(d, ord=2)"),
    *_vector_norms(),
    # shape-preserving and linear
    Primitive("np.transpose", S("a"), results.array_operand("a", (1, 2)), Pullback("np.transpose({t})",
              "np.transpose({g})"), view=True, example="np.sum(np.transpose(a) @ c)"),
    Primitive("np.cumsum", S("a, axis=!"), results.array_operand("a", (1,)),
              Pullback("np.cumsum({t})", "np.cumsum({g}[::-1])[::-1]"), lower=_over_axis("cumsum_along"),
              example="np.sum(np.cumsum(b) ** 2) + np.sum(np.cumsum(a, axis=0) * a)"
                      " + np.sum(np.cumsum(a, axis=-1) ** 2)"),
    Primitive("cumsum_along", S("a, axis=!"), results.array_operand("a", (1, 2)),
              Pullback("cumsum_along({t}, {axis})", "cumsum_along_bar({g}, {axis})"),
              helpers=("cumsum_along", "cumsum_along_bar"), example="np.sum(np.cumsum(a, axis=1) * a)"),
    Primitive("np.reshape", S("a, newshape"), results.reshaped,
              Pullback("np.reshape(np.ascontiguousarray({t}), {newshape})",
                       "np.reshape(np.ascontiguousarray({g}), {x}.shape)"),
              operands=("a",), view=True, example="np.sum(np.reshape(d, (2, 3)) @ b)"),
    # a permutation: the tangent is permuted as the values are, the adjoint sent back (1-D)
    Primitive("np.sort", S("a"), results.array_operand("a", (1,)),
              Pullback("{t}[np.argsort({x})]", "unsort({g}, {x})"), helpers=("unsort",),
              example="np.sum(np.sort(np.sin(d * 3.0)) * d) + np.sort(c)[0]",
              second_order=SecondOrderGap(
                  "its tangent gathers by `np.argsort`, an indexing by an array that the subset does not have",
                  "Sort values that carry no derivative, or index by an order computed from them.")),
    Primitive("np.copy", S("a"), results.like("a"), Pullback("np.copy({t})", "{g}"), copies=True, shaped_as="a",
              example="np.sum(np.copy(a) * a)"),
    # a value saved before a call that may change it (normalize: evaluation order): a copy of an array
    Primitive("snapshot", S("x"), results.like("x"), Pullback("snapshot({t})", "{g}"), helpers=("snapshot",)),
    # products
    Primitive("np.dot", S("a, b"), results.matmul, _DOT, helpers=_MATMUL_HELPERS, shape_like=_MATMUL_LIKE,
              example="np.dot(c, a @ b) + np.sum(np.dot(a, b) ** 2) + np.sum(np.dot(a, b) + c)"),
    Primitive("MatrixMultiply", S("a, b"), results.matmul, _DOT, helpers=_MATMUL_HELPERS, shape_like=_MATMUL_LIKE,
              example="np.sum((a @ b) * c) + b @ b + np.sum(np.tanh(a @ b + c)) + np.sum(c @ a + b)"),
    Primitive("np.outer", S("a, b"), results.outer,
              Bilinear(("np.outer({t}, {b})", "np.outer({a}, {t})"), ("np.dot({g}, {b})", "np.dot({a}, {g})")),
              example="np.sum(np.outer(c, b) * a)"),
    # selections; the seeded example inputs stay away from the kinks, where the selection switches
    Primitive("np.where", S("condition, x, y"), results.where,
              Selection(("{a0}", "np.logical_not({a0})")), operands=("x", "y"),
              example="np.sum(np.where(a > 0.55, a * a, np.sin(a)))"),
    # `x[m] = v` through a bool mask is np.where(mask_of(m, x, v), v, x) (frontend/masks.py): m, checked
    Primitive("mask_of", S("condition, a, value"), results.masked, constant=True, helpers=("mask_of",),
              recomputed=True),
    # a gather `x[idx]` is np.take(x, idx) (transforms/gathers.py); its adjoint adds at repeated indices
    Primitive("np.take", S("a, indices"), results.taken, Pullback("np.take({t}, {indices})",
              "take_bar({g}, {x}, {indices})"), operands=("a",), helpers=("take_bar",),
              example="np.sum(np.take(d, np.arange(4) % 3) * c) + np.sum(d[np.arange(3) * 2] ** 2)"),
    # a selection `x[m]` through a bool mask is np.extract(mask_of(m, x, False), x) (transforms/gathers.py)
    Primitive("np.extract", S("condition, arr"), results.extracted, Pullback("np.extract({condition}, {t})",
              "extract_bar({g}, {condition}, {x})"), operands=("arr",), helpers=("extract_bar",), recomputed=True,
              example="np.sum(np.extract(a > 0.5, a) ** 2) + np.mean(c[c < 0.6]) + np.sum(np.extract(c > 0.3, c))"),
    Primitive("np.clip", S("x, a_min, a_max"), results.like("x"),
              Selection(("({a0} >= {a1}) & ({a0} <= {a2})", "{a0} < {a1}", "{a0} > {a2}")),
              example="np.sum(np.clip(a, 0.33, 0.77) * a)"),
    # creation: constants, except for np.full's fill value
    Primitive("np.zeros", S("shape, dtype=!"), results.created(), constant=True, shaped_as="shape"),
    Primitive("np.ones", S("shape, dtype=!"), results.created(), constant=True, shaped_as="shape"),
    Primitive("np.empty", S("shape, dtype=!"), results.created(), constant=True, shaped_as="shape"),
    Primitive("np.zeros_like", S("a, dtype=!"), results.created_like, constant=True, shaped_as="a"),
    # the runtime's np.zeros_like without numba's overload compile, which reverse sweeps start
    # their whole-array adjoints with (`sourcead.lowered`): declared so that passes over generated
    # code know it (dead-code elimination drops an unread one)
    Primitive("zeros_like", S("a"), results.created_like, constant=True, shaped_as="a"),
    Primitive("np.ones_like", S("a, dtype=!"), results.created_like, constant=True, shaped_as="a"),
    Primitive("np.empty_like", S("a, dtype=!"), results.created_like, constant=True, shaped_as="a"),
    Primitive("np.full", S("shape, fill_value, dtype=!"), results.filled,
              Pullback("np.full({shape}, {t})", "np.sum({g})"), operands=("fill_value",), shaped_as="shape",
              example="np.sum(np.full(3, np.sum(b)) * b)"),
    Primitive("np.full_like", S("a, fill_value, dtype=!"), results.filled_like,
              Pullback("np.full_like({a}, {t})", "np.sum({g})"), operands=("fill_value",), shaped_as="a",
              example="np.sum(np.full_like(b, np.max(c)) * b)"),
    Primitive("np.arange", S("start, stop=, step=, dtype=!"), results.ranged),  # not differentiable
    Primitive("np.linspace", S("start, stop, num="), results.fixed(array(FLOAT, 1))),  # not differentiable
    # sizes and positions
    Primitive("len", S("a"), results.of_array(INT), constant=True),
    Primitive("size", S("a"), results.of_array(INT), constant=True),  # x.size
    Primitive("ndim", S("a"), results.of_array(INT), constant=True),  # x.ndim
    Primitive("shape", S("a"), results.shape_of, constant=True),  # x.shape
    # dtypes, as `dtype=` takes them (`x.dtype`, np.float64...): typed as a number of that dtype,
    # which is what the creation rules read (results.dtype_given)
    Primitive("dtype", S("a"), results.dtype_of, constant=True),  # x.dtype
    *(Primitive(f"dtype.{t.dtype}", S(""), results.fixed(t), constant=True) for t in (FLOAT, INT, BOOL)),
    Primitive("dtype.float32", S(""), results.fixed(FLOAT.as_single()), constant=True),  # float storage
    Primitive("np.argmax", S("a"), results.of_array(INT), constant=True),
    Primitive("np.argsort", S("a"), results.array_operand("a", (1,), dtype="int"), constant=True),
    Primitive("np.argmin", S("a"), results.of_array(INT), constant=True),
    Primitive("np.isnan", S("x"), results.booleans, constant=True, recomputed=True),
    Primitive("np.isinf", S("x"), results.booleans, constant=True, recomputed=True),
    Primitive("np.isfinite", S("x"), results.booleans, constant=True, recomputed=True),
    Primitive("np.logical_not", S("x"), results.booleans, constant=True, recomputed=True),
    Primitive("np.logical_and", S("x, y"), results.booleans, constant=True, recomputed=True),
    Primitive("np.logical_or", S("x, y"), results.booleans, constant=True, recomputed=True),
]  # fmt: skip

# x.name(...) as a primitive call with x first
METHODS: list[Method] = [
    Method("sum", "np.sum", S("a, axis=!, keepdims=!")),
    Method("mean", "np.mean", S("a, axis=!, keepdims=!")),
    Method("max", "np.max", S("a, axis=!, keepdims=!")),
    Method("min", "np.min", S("a, axis=!, keepdims=!")),
    Method("var", "np.var", S("a, axis=!, ddof=!")),
    Method("std", "np.std", S("a, axis=!, ddof=!")),
    Method("prod", "np.prod", S("a, axis=!, keepdims=!")),
    Method("cumsum", "np.cumsum", S("a, axis=!")),
    Method("copy", "np.copy", S("a")),
    Method("dot", "np.dot", S("a, b")),
    Method("transpose", "np.transpose", S("a")),
    Method("reshape", "np.reshape", S("a, newshape...")),  # x.reshape(2, 3) or x.reshape((2, 3))
]
# x.name (no call): a primitive of x
ATTRIBUTES: dict[str, str] = {"T": "np.transpose", "size": "size", "ndim": "ndim", "shape": "shape"}

__all__ = ["ARRAYS", "ATTRIBUTES", "BOOL", "METHODS"]
