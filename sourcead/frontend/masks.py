"""Part of the pass `normalize`: a write through a boolean mask written in the index.

NumPy's `x[m] = v` sets the elements of x where the bool array m holds, and `x[m] *= v` updates
them; for a number v both are `np.where` over the whole array, the spelling every later pass
already differentiates (the mask carries no derivative):

    s[s <= 0.1] = 1.0          ->  s = np.where(mask_of(s <= 0.1, s, 1.0), 1.0, s)
    s[np.isnan(s)] *= 2.0      ->  s = np.where(mask_of(np.isnan(s), s, 2.0), s * 2.0, s)

The assignment is marked `inplace` (`transforms/inplace.py`): where other code sees the array
(an argument, a second name) the new values are written into its elements, as NumPy writes them.
`mask_of` returns the mask; kinds refuse, at the user's index, a mask of another number of
dimensions, an array v (NumPy assigns its elements in order) and a float into an integer array;
at run time it raises NumPy's IndexError for a mask of another shape. The mask is recognised by its
spelling (a comparison, np.logical_and/or/not/xor, np.isnan, np.isinf, np.isfinite): a
mask held in a name is typed only by kinds, which refuse it with this spelling as the hint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst

from ..ir.core import Assign
from ..ir.exprs import paren
from .resolve import canonical_call, canonical_func_node

_MASK_CALLS = frozenset(
    ("np.logical_and", "np.logical_or", "np.logical_not", "np.logical_xor", "np.isnan", "np.isinf", "np.isfinite")
)


def mask_index(target: cst.BaseExpression, globals_: Mapping[str, Any]) -> cst.BaseExpression | None:
    """The mask of a target `x[m]` whose one index is spelled as a bool array, else None."""
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
        return None
    index = target.slice[0].slice
    if not isinstance(index, cst.Index) or not _is_mask(index.value, globals_):
        return None
    return index.value


def _is_mask(node: cst.BaseExpression, globals_: Mapping[str, Any]) -> bool:
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.Call):
        return canonical_call(node.func, globals_) in _MASK_CALLS
    return False


def masked_write(
    target: cst.Subscript, mask: cst.BaseExpression, new: cst.BaseExpression, value: cst.BaseExpression, origin, where
) -> Assign:
    """`x = np.where(mask_of(mask, x, value), new, x)`, marked inplace: `new` is what the masked
    elements become (`value`, or `x * value` for `x[m] *= value`)."""
    array = target.value
    assert isinstance(array, cst.Name)  # an element's array is named (fence)
    checked = cst.Call(cst.Name("mask_of"), [cst.Arg(mask), cst.Arg(array), cst.Arg(value)])
    chosen = cst.Call(canonical_func_node("np.where"), [cst.Arg(checked), cst.Arg(paren(new)), cst.Arg(array)])
    return Assign(cst.Name(array.value), chosen, None, origin, inplace=True, where=where)
