"""Variables bound again at the function's top level with another type (a part of the pass
`kinds`): NPBench's lenet rebinds `x = np.reshape(x, (N, C))` after a 4-D `x`. kinds gives each
variable one type, so such a variable takes a fresh name from that statement on, as the pass
`rebound` names rebound arrays (frontend/rebound.py): a top-level statement runs once and every
later statement sees its value, so the function computes the same. A binding in a loop or a branch,
or of a variable whose array the caller sees, stays refused with both types named.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..frontend.loopvars import renamed
from ..ir.core import Assign, CoreFunction, Return
from ..ir.exprs import Rename, transformed
from ..ir.naming import Namer
from ..rules import Partials, Selection, classify


class Rebinding(Exception):
    """A variable bound again at the function's top level with another type: statement `index`."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


def top_rebinding(fn: CoreFunction, stmt: object, target: str) -> int | None:
    """The top-level statement from which `target`, bound there again as a whole with a type that
    does not join its earlier one, can take a fresh name (None: a binding in a loop or a branch, or
    a variable the caller sees)."""
    if target in fn.mutated or target in fn.finals:
        return None
    bindings = [
        j
        for j, s in enumerate(fn.body)
        if isinstance(s, Assign)
        and isinstance(s.target, cst.Name)
        and s.var == target
        and s.accumulate is None
        and not s.inplace
        and s.shares is None
    ]
    at = next((j for j, s in enumerate(fn.body) if s is stmt), None)
    if at is None or at not in bindings:
        return None
    if at != bindings[0] or target in fn.params:
        return at
    later = [j for j in bindings if j > at]
    return later[0] if later else None


def rename_from(fn: CoreFunction, index: int, namer: Namer) -> CoreFunction:
    """`fn` with the variable bound by top-level statement `index` named afresh from there on."""
    s = fn.body[index]
    assert isinstance(s, Assign)
    new = namer.fresh(s.var)
    rename = Rename({s.var: cst.Name(new)})
    body = (*fn.body[:index], replace(s, target=cst.Name(new)), *renamed(fn.body[index + 1 :], s.var, new))
    ret = Return(tuple(transformed(v, rename) for v in fn.ret.values), fn.ret.is_tuple, fn.ret.origin)
    return replace(fn, body=body, ret=ret)


# --- float32 and float64 arrays under one name ---------------------------------------------------
#
# kinds marks what may be float32 storage (`Type.single`), an over-approximation left out of type
# equality. numba gives a variable one type: an array variable bound to a float32 array in one
# place and to a float64 array in another fails in numba's typing, unless both bindings are at the
# top level (renamed above). `storage` says which one a value is where numba's rules decide it: a
# float32 array stays float32 through views, copies and arithmetic with float32 arrays and
# integers; a float64 array or a float scalar (`y * 2.0`, `y / 2.0`) makes the result float64.

F32, F64 = "float32", "float64"
_FLOAT32 = ("np.float32",)
_FLOAT64 = ("np.float64", "np.double", "float")


def mixed_storage(fn: CoreFunction, statements: list, type_of) -> Assign | None:
    """The first whole binding of an array variable to float32 storage where its first binding (or
    the parameter) is float64, or the other way round; None where every binding agrees or numba's
    dtype is not known here."""
    first: dict[str, str] = {p: F64 for p in fn.params if _float_array(type_of(cst.Name(p)))}
    binds = [s for s in statements if isinstance(s, Assign) and not s.writes_element and s.accumulate is None]
    for _ in range(3):  # a loop reads names bound later in the text
        for s in binds:
            found = storage(s.value, first, type_of)
            if found is not None:
                first.setdefault(s.var, found)
    for s in binds:
        found = storage(s.value, first, type_of)
        if found is not None and first.get(s.var, found) != found:
            return s
    return None


def storage(node: cst.BaseExpression, known: dict[str, str], type_of) -> str | None:
    """F32 or F64: the dtype numba gives the float array `node`; None for other values, or unknown."""
    if not _float_array(type_of(node)):
        return None
    if isinstance(node, cst.Name):
        return known.get(node.value)
    if isinstance(node, cst.Subscript):  # a slice or a row: its array's dtype
        return storage(node.value, known, type_of) if isinstance(node.value, cst.Name) else None
    if isinstance(node, cst.Attribute):  # x.T
        return storage(node.value, known, type_of)
    found = classify(node)
    if found is None:
        return None
    prim, bound = found
    if "dtype" in bound.args:
        return _dtype(bound.args["dtype"], known, type_of)
    if prim.shaped_as == "shape":  # np.zeros(n) and its kin: float64
        return F64
    if prim.shaped_as == "a" or prim.view or prim.copies or prim.name in _LIKE_FIRST:
        first = next(iter(bound.args.values()))
        return storage(first, known, type_of)
    if prim.name == "np.where":
        operands = [bound.args[p] for p in ("x", "y") if p in bound.args]
    elif isinstance(prim.derivative, (Partials, Selection)) or prim.name == "MatrixMultiply":
        operands = [*bound.args.values(), *bound.operands]
    else:
        return None
    return _combined(operands, known, type_of)


_LIKE_FIRST = ("np.reshape", "np.transpose", "np.ravel", "np.copy", "np.ascontiguousarray", "np.flip")


def _combined(operands: list, known: dict[str, str], type_of) -> str | None:
    """Arithmetic: float64 if any float operand is (a float scalar is, unless read from float32
    storage), float32 if every float operand is a float32 array, else unknown."""
    found = []
    for operand in operands:
        t = type_of(operand)
        if t.dtype != "float":
            continue  # integers and bools keep float32
        found.append(storage(operand, known, type_of) if t.is_array else (None if t.single else F64))
    if F64 in found:
        return F64
    return F32 if found and all(f == F32 for f in found) else None


def _dtype(node: cst.BaseExpression, known: dict[str, str], type_of) -> str | None:
    text = cst.Module([]).code_for_node(node)
    if text in _FLOAT32:
        return F32
    if text in _FLOAT64:
        return F64
    if isinstance(node, cst.Attribute) and node.attr.value == "dtype":  # x.dtype
        return storage(node.value, known, type_of)
    return None


def _float_array(t) -> bool:
    return t.is_array and t.dtype == "float"
