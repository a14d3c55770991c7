"""Calls that only forward mode writes (its tangent templates and `linearize.py`), declared as
primitives so that second order (reverse mode over the generated tangent code, `second.py`) can
differentiate them too; every name a tangent can call is declared here or elsewhere in `rules/`,
or listed in `NO_SECOND_ORDER` (tests/test_second_order.py checks both).
"""

from __future__ import annotations

from ..types import FLOAT, array
from . import results
from .forms import Args, Primitive, Pullback, ResultError
from .signature import Signature

S = Signature.parse


def _raveled(args: Args) -> object:
    t = args["a"]
    if not t.is_array:
        raise ResultError(f"np.ravel takes an array, got {t.describe()}", param="a")
    return array(t.dtype, 1)


TANGENT_HELPERS: list[Primitive] = [
    # the tangent of `x op A` (x a float, A constant) stands for every element of the result:
    # linear in the tangent, whose adjoint sums back over the broadcast axes
    Primitive("broadcast_tangent", S("x, like"), results.floats(), Pullback("broadcast_tangent({t}, {like})",
              "unbroadcast({g}, {x})"), operands=("x",), helpers=("broadcast_tangent", "unbroadcast")),
    # the tangents of np.max, np.min and np.linalg.norm read a flat view; reshape is its transpose
    Primitive("np.ravel", S("a"), _raveled, Pullback("np.ravel({t})", "np.reshape(np.ascontiguousarray({g}), "
              "{x}.shape)"), example="np.sum(np.ravel(a) * np.ravel(a))"),
    Primitive("np.ascontiguousarray", S("a"), results.like("a"), Pullback("np.ascontiguousarray({t})", "{g}"),
              example="np.sum(np.ascontiguousarray(np.transpose(a)) * np.transpose(a))"),
    # the tangent of np.prod: differentiable, but not declared yet (a positioned error in hvp)
    Primitive("prod_others", S("a"), results.like("a")),
]  # fmt: skip

# primitives whose tangent calls a helper without a derivative: second order refuses them on a
# value that carries a derivative, at the user's statement (`second.py`)
NO_SECOND_ORDER: dict[str, str] = {"np.prod": "prod_others"}

__all__ = ["FLOAT", "NO_SECOND_ORDER", "TANGENT_HELPERS"]
