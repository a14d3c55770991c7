"""Result types of primitives, as functions of their arguments' types (`Args` -> `Type`)."""

from __future__ import annotations

from collections.abc import Callable

from ..ir.types import BOOL, FLOAT, INT, Type, array, promote
from .forms import Args, ResultError

Result = Callable[[Args], Type]


def _values(args: Args, params: tuple[str, ...] | None) -> list[tuple[str, Type]]:
    if params is None:
        return list(args.types.items()) if not args.operands else [(f"#{k}", t) for k, t in enumerate(args.operands)]
    return [(p, args[p]) for p in params if args.has(p)]


def _no_tuples(args: Args, values: list[tuple[str, Type]]) -> None:
    for param, t in values:
        if t.is_tuple:
            raise ResultError(f"{args.name} takes numbers or arrays, not a tuple", param=param)


def _ndim(values: list[tuple[str, Type]]) -> int:
    return max((t.ndim for _, t in values), default=0)


def floats(*params: str) -> Result:
    """A float, or a float array broadcast from the operands (math and NumPy functions)."""

    def result(args: Args) -> Type:
        values = _values(args, params or None)
        _no_tuples(args, values)
        return array(FLOAT, _ndim(values)) if _ndim(values) else FLOAT

    return result


def math_floats(args: Args) -> Type:
    """`math.*` functions take floats only: an array is refused with the NumPy twin to use."""
    for param, t in _values(args, None):
        if not t.is_scalar:
            twin = args.name.replace("math.", "np.")
            raise ResultError(
                f"{args.name} takes a float, not {t.describe()}",
                f"Use {twin} for arrays, or index the array." if twin != args.name else "Index the array.",
                param,
            )
    return FLOAT


def arithmetic(divides: bool = False) -> Result:
    """NumPy's promotion: ints stay ints (bools count as ints), floats win; `/` always gives floats."""

    def result(args: Args) -> Type:
        values = _values(args, None)
        _no_tuples(args, values)
        dtype = "float" if divides else promote(*(t.dtype for _, t in values))
        return array(dtype, _ndim(values)) if _ndim(values) else Type(dtype)

    return result


def like(param: str, dtype: str | None = None) -> Result:
    """The type of argument `param` (with another dtype if given)."""

    def result(args: Args) -> Type:
        t = args[param]
        if t.is_tuple:
            raise ResultError(f"{args.name} takes a number or an array, not a tuple", param=param)
        return Type(dtype or t.dtype, t.ndim)

    return result


def numbers_only(dtype: str | None = None) -> Result:
    """min, max, abs, float, int of numbers (never arrays: NumPy has its own elementwise twins)."""
    twins = {"min": "np.minimum or np.min", "max": "np.maximum or np.max", "abs": "np.abs", "float": "x.astype"}
    why = " (numba has no abs() of an array)"

    def result(args: Args) -> Type:
        values = _values(args, None)
        for param, t in values:
            if not t.is_scalar:
                hint = (
                    f"Use {twins[args.name]} for arrays{why if args.name == 'abs' else ''}."
                    if args.name in twins
                    else "Index the array."
                )
                what = "an array" if t.is_array else t.describe()  # whatever its ndim: the same error
                raise ResultError(f"{args.name}() takes numbers, not {what}", hint, param)
        return Type(dtype or promote(*(t.dtype for _, t in values)))

    return result


def fixed(t: Type) -> Result:
    return lambda args: t


def booleans(args: Args) -> Type:
    """Comparisons and logical operators: a bool, or a bool array."""
    values = _values(args, None)
    _no_tuples(args, values)
    return array(BOOL, _ndim(values)) if _ndim(values) else BOOL


def logical(args: Args) -> Type:
    """`and`, `or`, `not` of bools (Python's `x or y` of numbers returns one of them: not a bool)."""
    for param, t in _values(args, None):
        if t != BOOL:
            raise ResultError(
                f"`{args.name}` is supported on bools (comparisons), not on {t.describe()}",
                "Compare explicitly, e.g. `x != 0.0`; for arrays use np.logical_and / np.logical_or.",
                param,
            )
    return BOOL


def reduced(dtype: str | None = None, float_result: bool = False, ndim: int = 2, last: bool = False) -> Result:
    """A reduction of `a`: a scalar, or one dimension fewer with `axis=k` (over an axis of arrays of
    up to `ndim` dimensions; with `last`, above 2-D over the last axis only)."""

    def result(args: Args) -> Type:
        t = args["a"]
        if not t.is_array:
            raise ResultError(f"{args.name} reduces an array, got {t.describe()}", param="a")
        out = "float" if float_result else (dtype or ("int" if t.dtype == "bool" else t.dtype))
        axis = args.literal("axis")
        if axis is None:
            return Type(out)
        if not -t.ndim <= axis < t.ndim:
            raise ResultError(f"axis {axis} is out of range for {t.describe()}", param="axis")
        if t.ndim > ndim:  # the helpers and adjoints over an axis are written for these
            sizes = "a 1-D or 2-D" if ndim == 2 else f"a 1-D to {ndim}-D"
            raise ResultError(
                f"{args.name} over an axis takes {sizes} array here, got {t.describe()}",
                "Loop over the other axes and reduce each 1-D slice (np.max(x[i, j, :])).",
                "a",
            )
        if last and t.ndim > 2 and axis % t.ndim != t.ndim - 1:
            raise ResultError(
                f"{args.name} over an axis of a {t.ndim}-D array takes the last axis (axis=-1) here, got axis {axis}",
                "Loop over the other axes and reduce each 1-D slice (np.max(x[i, :, k])).",
                "axis",
            )
        return array(out, t.ndim - 1) if t.ndim > 1 else Type(out)

    return result


def array_operand(param: str, ndims: tuple[int, ...] = (1, 2, 3), dtype: str | None = None) -> Result:
    """Shape-preserving operations on arrays (transpose, cumsum, sort): the operand's type (with
    `dtype`, that dtype: np.argsort gives ints)."""

    def result(args: Args) -> Type:
        t = args[param]
        if t.ndim not in ndims:
            allowed = " or ".join(f"{n}-D" for n in ndims)
            raise ResultError(f"{args.name} takes a {allowed} array here, got {t.describe()}", param=param)
        return array(dtype, t.ndim) if dtype is not None else t

    return result


def matmul_ndim(left: int, right: int) -> int:
    """ndim of `a @ b` for 1-D and 2-D operands: (1,1) -> 0, (2,1) and (1,2) -> 1, (2,2) -> 2."""
    return max(left + right - 2, 0)


def matmul(args: Args) -> Type:
    a, b = args["a"], args["b"]
    for param, t in (("a", a), ("b", b)):
        if t.ndim not in (1, 2):
            raise ResultError(f"{args.name} takes 1-D or 2-D arrays here, got {t.describe()}", param=param)
    dtype = promote(a.dtype, b.dtype)
    return array(dtype, matmul_ndim(a.ndim, b.ndim)) if matmul_ndim(a.ndim, b.ndim) else Type(dtype)


def outer(args: Args) -> Type:
    for param in ("a", "b"):
        if args[param].ndim != 1:
            raise ResultError(f"np.outer takes 1-D arrays here, got {args[param].describe()}", param=param)
    return array(promote(args["a"].dtype, args["b"].dtype), 2)


def _shape_ndim(t: Type, name: str, param: str) -> int:
    if t == INT:
        return 1
    if t.is_tuple and all(e == INT for e in t.elements):
        return len(t.elements)
    raise ResultError(f"the shape given to {name} must be an int or a tuple of ints, got {t.describe()}", param=param)


def dtype_of(args: Args) -> Type:
    """`x.dtype` (as `dtype=` takes it): typed as a number of x's dtype."""
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"`.dtype` of {t.describe()}: dtype=x.dtype takes the dtype of an array", param="a")
    return Type(t.dtype)


def dtype_given(args: Args, default: str) -> str:
    """The dtype a creation call asks for (np.float64, float, x.dtype...; `dtype_of`), or `default`."""
    return args["dtype"].dtype if args.has("dtype") else default


def created(dtype_param: str = "dtype", default: str = "float") -> Result:
    """np.zeros(shape, dtype=...) and friends: an array of the shape's length."""

    def result(args: Args) -> Type:
        ndim = _shape_ndim(args["shape"], args.name, "shape")
        return array(dtype_given(args, default), ndim)

    return result


def created_like(args: Args) -> Type:
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"{args.name} takes an array, got {t.describe()}", param="a")
    return array(dtype_given(args, t.dtype), t.ndim)


def filled(args: Args) -> Type:
    ndim = _shape_ndim(args["shape"], args.name, "shape")
    fill = args["fill_value"]
    if not fill.is_scalar:
        raise ResultError("the fill value of np.full must be a number", param="fill_value")
    return array(dtype_given(args, "float" if fill.dtype == "float" else fill.dtype), ndim)


def filled_like(args: Args) -> Type:
    t, fill = args["a"], args["fill_value"]
    if not t.is_array or not fill.is_scalar:
        raise ResultError("np.full_like takes an array and a number")
    return array(dtype_given(args, t.dtype), t.ndim)


def ranged(args: Args) -> Type:
    """np.arange: integers when every bound is an int, else floats."""
    values = [t for p, t in args.types.items() if p != "dtype"]
    for t in values:
        if not t.is_scalar:
            raise ResultError(f"np.arange takes numbers, got {t.describe()}")
    return array(dtype_given(args, promote(*(t.dtype for t in values))), 1)


def reshaped(args: Args) -> Type:
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"np.reshape takes an array, got {t.describe()}", param="a")
    return array(t.dtype, _shape_ndim(args["newshape"], "np.reshape", "newshape"))


def shape_of(args: Args) -> Type:
    from ..ir.types import tuple_of

    t = args["a"]
    if not t.is_array:
        raise ResultError(f"`.shape` of {t.describe()}: only arrays have a shape", param="a")
    return tuple_of(*([INT] * t.ndim))


def where(args: Args) -> Type:
    values = [("condition", args["condition"]), ("x", args["x"]), ("y", args["y"])]
    _no_tuples(args, values)
    if args["condition"].dtype != "bool":
        raise ResultError("the condition of np.where must be a bool array (a comparison)", param="condition")
    dtype = promote(args["x"].dtype, args["y"].dtype)
    return array(dtype, _ndim(values)) if _ndim(values) else Type(dtype)


def of_array(dtype: Type) -> Result:
    """Sizes and positions of an array: len(x), x.size, x.ndim, np.argmax(x)."""

    def result(args: Args) -> Type:
        t = next(iter(args.types.values()))
        if not t.is_array:
            raise ResultError(f"{args.name} takes an array, got {t.describe()}")
        return dtype

    return result


__all__ = ["BOOL", "FLOAT", "INT"]


def expanded(args: Args) -> Type:
    """np.expand_dims(a, axis): one more dimension (numba takes the axis as a literal)."""
    t, axis = args["a"], args.literal("axis")
    if not t.is_array or t.ndim > 3:
        raise ResultError(
            f"np.expand_dims (and keepdims=True) takes a 1-D to 3-D array here, got {t.describe()}",
            "A reduction of a 1-D array is a float: use it without keepdims=True." if not t.is_array else "",
            "a",
        )
    if not isinstance(axis, int) or not -t.ndim - 1 <= axis <= t.ndim:
        raise ResultError("np.expand_dims needs an axis (an int in range) here", param="axis")
    return array(t.dtype, t.ndim + 1)


def normed(args: Args) -> Type:
    """np.linalg.norm(a): a float; with ord (None, 1, 2, inf) of a vector, and with axis=k along it."""
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"np.linalg.norm takes an array, got {t.describe()}", param="a")
    if args.literal("ord") is not None:
        raise ResultError(
            "np.linalg.norm supports ord=None, 1, 2 and np.inf (vector norms) here",
            "For a matrix norm, write it out, e.g. np.max(np.sum(np.abs(A), axis=0)) for ord=1.",
            "ord",
        )
    return Type("float")


def normed_along(args: Args) -> Type:
    """norm2_along(a, axis) (norm1_along, norm_inf_along): np.linalg.norm over one axis (or of a
    1-D array with ord), a float or one dimension fewer; its messages name np.linalg.norm."""
    if not isinstance(args.literal("axis"), int):
        raise ResultError(
            "np.linalg.norm takes one integer axis here (the vector norms of rows or columns)",
            "For a matrix norm, write it out, e.g. np.sqrt(np.sum(A * A)) for the Frobenius norm.",
            "axis",
        )
    return reduced(float_result=True)(Args("np.linalg.norm", args.types, args.operands, args.literals))


def vector(args: Args) -> Type:
    """as_vector(a): a 1-D array, as the vector norms need (np.linalg.norm(a, 1) of a matrix is
    another function)."""
    t = args["a"]
    if not t.is_array or t.ndim != 1:
        raise ResultError(
            f"np.linalg.norm with ord= computes a vector norm here, of a 1-D array; got {t.describe()}",
            "Give axis= for the norms of rows or columns, or write a matrix norm out, e.g. "
            "np.max(np.sum(np.abs(A), axis=0)) for ord=1.",
            "a",
        )
    return t


def matrix(args: Args) -> Type:
    """as_matrix(a): a 2-D array, as np.cov's lowering needs (variables in rows, observations in
    columns)."""
    t = args["a"]
    if not t.is_array or t.ndim != 2:
        raise ResultError(
            f"np.cov takes a 2-D array here (a variable in each row), got {t.describe()}",
            "For one variable write np.var(x, ddof=1); for several, stack them as rows of a 2-D array.",
            "a",
        )
    return t


def covariance(args: Args) -> Type:
    """np.cov(a, y): typed only where its lowering (`arrays._covariance`) left it, with a second
    array."""
    raise ResultError(
        "np.cov takes one array here, not a second array y",
        "Stack the variables as rows: np.cov(np.vstack((x, y))) (with rowvar=False, np.vstack((x.T, y.T))).",
        "y",
    )


def factor(args: Args) -> Type:
    """np.linalg.cholesky(a): the lower-triangular factor of a square float matrix."""
    t = args["a"]
    if not t.is_array or t.ndim != 2 or t.dtype != "float":
        raise ResultError(
            f"np.linalg.cholesky takes a 2-D float array here (a square matrix), got {t.describe()}",
            "Factor each matrix of a stack in a loop: np.linalg.cholesky(A[k]).",
            "a",
        )
    return t


def masked(args: Args) -> Type:
    """mask_of(m, x, v), written for `x[m] = v` (frontend/masks.py): the mask m, a bool array of
    x's dimensions (or a bool), where v is a number of x's dtype."""
    mask, a, value = args["condition"], args["a"], args["value"]
    if mask.dtype != "bool" or (mask.is_array and mask.ndim != a.ndim):
        raise ResultError(
            f"a boolean mask index takes a bool array of the array's {a.ndim} dimensions here, got {mask.describe()}",
            "Write the mask with the array's shape (x[m[:, None] & (x > 0.0)] = v), or loop with `if m[i]:`.",
            "condition",
        )
    if not value.is_scalar:
        raise ResultError(
            f"`x[m] = v` through a boolean mask takes a number v here, got {value.describe()}",
            "NumPy assigns an array's elements in order; for elementwise values write x = np.where(m, v, x).",
            "value",
        )
    if a.dtype == "int" and value.dtype == "float":
        raise ResultError(
            "this stores a float into an integer array through a mask (NumPy would truncate it)",
            "Convert explicitly with int(...), or make the array a float array.",
            "value",
        )
    return mask


def extracted(args: Args) -> Type:
    """np.extract(condition, arr), and `x[m]` through a bool mask m of x's dimensions (the pass
    `gathers`): the elements of arr where condition holds, in C order, as a 1-D array."""
    condition, a = args["condition"], args["arr"]
    if not a.is_array:
        raise ResultError(f"np.extract takes an array here, got {a.describe()}", "", "arr")
    if not condition.is_array or condition.dtype != "bool" or condition.ndim != a.ndim:
        raise ResultError(
            f"np.extract takes a bool array of the array's {a.ndim} dimensions here, got {condition.describe()}",
            "Write the condition as a comparison of arrays of that shape (x > 0.0), or `c != 0` for numbers.",
            "condition",
        )
    return array(a.dtype, 1)


def taken(args: Args) -> Type:
    """np.take(a, indices): a 1-D array a at a 1-D integer array of indices (`x[idx]` too)."""
    a, indices = args["a"], args["indices"]
    if not a.is_array or a.ndim != 1:
        raise ResultError(f"np.take takes a 1-D array here, got {a.describe()}", "Loop over the rows: A[idx[k]].", "a")
    if not indices.is_array or indices.ndim != 1 or indices.dtype != "int":
        raise ResultError(
            f"np.take takes a 1-D integer array of indices here, got {indices.describe()}",
            "For one element, index the array: x[k].",
            "indices",
        )
    return array(a.dtype, 1)
