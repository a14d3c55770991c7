"""A scalar factor of a matrix product's operand, moved onto the adjoint seed (used by `adjoint.py`).

`alpha * A @ x` is `(alpha * A) @ x`: its adjoints are `matmul_bar_right(g, alpha * A, x)` for x,
which makes a scaled copy of the whole matrix to multiply a vector by it, and `alpha *
matmul_bar_left(g, A, x)` for A, an outer product made and then scaled (gesummv). For a scalar s
and an array M:

    matmul_bar_right(g, s * M, b)   ->   matmul_bar_right(s * g, M, b)     (M.T @ (s g))
    matmul_bar_left(g, a, s * M)    ->   matmul_bar_left(s * g, a, M)      ((s g) @ M.T)
    s * matmul_bar_left(g, a, b)    ->   matmul_bar_left(s * g, a, b)      (and matmul_bar_right)

and the operand a product's adjoint reads only for its number of dimensions (`a` of
`matmul_bar_left`, `b` of `matmul_bar_right`) loses its factor: `matmul_bar_left(g, s * M, b)` is
`matmul_bar_left(g, M, b)`. The seed g is the size of the product, never more than the matrix; the
same value up to rounding (s multiplies g's elements rather than M's or the product's). The
scaled contribution is then an in-place `add_outer` where it goes into a matrix
(`adjoint.in_place`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..ir.emit import Line
from ..ir.exprs import dotted, paren, unparen

_PRODUCTS = {"matmul_bar_left": (2, 1), "matmul_bar_right": (1, 2)}  # (values read, ndim only)

IsScalar = Callable[[cst.BaseExpression], bool]


def scalars_onto_seeds(lines: list[Line], is_scalar: IsScalar) -> list[Line]:
    """The lines with each product adjoint's scalar factor moved onto its seed."""
    rewriter = _Rewriter(is_scalar)
    out = []
    for line in lines:
        value = line.value.visit(rewriter)
        out.append(line if value is line.value else type(line)(line.target, line.op, value, line.comment))  # type: ignore[arg-type]
    return out


class _Rewriter(cst.CSTTransformer):
    def __init__(self, is_scalar: IsScalar):
        self.is_scalar = is_scalar

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        parts = _product(updated)
        if parts is None:
            return updated
        values, shape_only = _PRODUCTS[dotted(updated.func)]
        args = list(updated.args)
        split = self.split(args[shape_only].value)
        if split is not None:
            args[shape_only] = args[shape_only].with_changes(value=split[1])
        split = self.split(args[values].value)
        if split is not None:
            scalar, array = split
            args[values] = args[values].with_changes(value=array)
            args[0] = args[0].with_changes(value=_times(scalar, args[0].value))
        return updated.with_changes(args=args)

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(updated.operator, cst.Multiply):
            return updated
        for scalar, other in ((updated.left, updated.right), (updated.right, updated.left)):
            call = unparen(other)
            if isinstance(call, cst.Call) and _product(call) is not None and self.is_scalar(scalar):
                args = list(call.args)
                args[0] = args[0].with_changes(value=_times(scalar, args[0].value))
                return call.with_changes(args=args, lpar=updated.lpar, rpar=updated.rpar)
        return updated

    def split(self, e: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(s, M) of `s * M` or `M * s` with s a scalar and M not, else None."""
        e = unparen(e)
        if not isinstance(e, cst.BinaryOperation) or not isinstance(e.operator, cst.Multiply):
            return None
        for scalar, array in ((e.left, e.right), (e.right, e.left)):
            if self.is_scalar(scalar) and not self.is_scalar(array):
                return scalar, unparen(array)
        return None


def _product(call: cst.Call) -> bool | None:
    """True for `matmul_bar_left(g, a, b)` / `matmul_bar_right(...)` with three positional arguments."""
    if dotted(call.func) not in _PRODUCTS or len(call.args) != 3:
        return None
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    return True


def _times(scalar: cst.BaseExpression, g: cst.BaseExpression) -> cst.BaseExpression:
    return cst.BinaryOperation(paren(unparen(scalar)), cst.Multiply(), paren(unparen(g)))
