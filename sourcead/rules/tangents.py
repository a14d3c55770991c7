"""Calls that only forward mode writes (its tangent templates and `linearize.py`), declared as
primitives so that second order (reverse mode over the generated tangent code, `second.py`) can
differentiate them too; every name a tangent can call is declared here or elsewhere in `rules/`,
or its primitive declares the gap (`Primitive.second_order`; tests/test_second_order.py checks both).
"""

from __future__ import annotations

from ..ir.types import FLOAT, Type, array
from . import results
from .forms import Args, Primitive, Pullback, ResultError, Selection
from .signature import Signature

S = Signature.parse


def _raveled(args: Args) -> Type:
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"np.ravel takes an array, got {t.describe()}", param="a")
    return array(t.dtype, 1)


def _selected(args: Args) -> Type:
    """select_along(t, x, axis, largest): t at the extremum of each row or column of x, so the
    type of a reduction of x over that axis."""
    return results.reduced(ndim=4, last=True)(
        Args(args.name, {"a": args["like"]}, literals={"axis": args.literal("axis")})
    )


TANGENT_HELPERS: list[Primitive] = [
    # the tangent of `x op A` (x a float, A constant) stands for every element of the result:
    # linear in the tangent, whose adjoint sums back over the broadcast axes
    Primitive("broadcast_tangent", S("x, like"), results.floats(), Pullback("broadcast_tangent({t}, {like})",
              "unbroadcast({g}, {x})"), operands=("x",), helpers=("broadcast_tangent", "unbroadcast")),
    # the tangents of np.max, np.min and np.linalg.norm read a flat view; reshape is its transpose.
    # Both may return their argument's memory (a user's `y = np.ravel(x)` is a second name of x)
    Primitive("np.ravel", S("a"), _raveled, Pullback("np.ravel({t})", "np.reshape(np.ascontiguousarray({g}), "
              "{x}.shape)"), view=True, example="np.sum(np.ravel(a) * np.ravel(a))"),
    Primitive("np.ascontiguousarray", S("a"), results.like("a"), Pullback("np.ascontiguousarray({t})", "{g}"),
              view=True, example="np.sum(np.ascontiguousarray(np.transpose(a)) * np.transpose(a))"),
    # the tangent of np.max / np.min over an axis: linear in the tangent; where the extremum sits
    # (`like`) is piecewise constant, so it passes no derivative
    Primitive("select_along", S("a, like, axis=!, largest=!"), _selected,
              Pullback("select_along({t}, {like}, {axis}, {largest})",
                       "select_along_bar({g}, {like}, {axis}, {largest})"),
              operands=("a",), helpers=("select_along", "select_along_bar")),
    # second order's strong zero through a singular partial (`linearize._strong`): `chosen(t != 0.0 or
    # math.isfinite(p), p * t)` is g where m holds, else 0.0; a selection, so the contribution below
    # an unselected g is exactly zero (never 0 * inf through p), and branch-free, where a conditional
    # expression became a branch recorded on the tape in every iteration of a loop
    Primitive("chosen", S("m, g"), results.like("g"), Selection(("{a0}",)), operands=("g",), helpers=("chosen",)),
    # tangents that are differentiable, but whose derivatives are not declared yet (second order
    # refuses their primitives on values that carry derivatives, with a position: `second_order=`)
    Primitive("prod_others", S("a"), results.like("a")),  # of np.prod
    Primitive("prod_others_along", S("a, axis=!"), results.like("a")),  # of np.prod over an axis
    Primitive("cholesky_tangent", S("a, b"), results.like("a")),  # of np.linalg.cholesky
    Primitive("digamma", S("x"), results.math_floats),  # of math.gamma and math.lgamma
]  # fmt: skip

__all__ = ["FLOAT", "TANGENT_HELPERS"]
