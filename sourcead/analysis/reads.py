"""What a statement of the core form reads: one function for each meaning of "read" the passes need.

- `names_read(stmt)`: every name the statement needs bound when it runs (definite assignment,
  the state a checkpointed step carries);
- `values_read(stmt)`: the names whose values the statement's expressions read (races in a
  prange loop, parallel adjoints, in-place updates read again);
- `reads_array(stmt, array)`: whether the statement, or one nested in it, uses `array` other than
  by writing its elements or reading its size (scratch arrays of a checkpointed step);
- `value_reads(node)`: the names an expression reads for their values, not those it reads only for
  their shape and dtype (`zeros_like(y)`, `y.shape`, `unbroadcast(g, y)`): the one declaration of
  a shape-only read (`SHAPE_ATTRIBUTES`, `SHAPE_ARGUMENTS`, `SHAPE_OF_OPERANDS`), which dead-code
  removal consults (`postpass/unread.py`: element writes into a fresh array nothing reads but for
  its shape are dead).

Each looks at one statement's own expressions (a test, a loop's bounds: not its body), except
`reads_array`, which walks into nested blocks. Reads in generated lines (`reverse/gather.py`) are
another matter: those are not core statements.
"""

from __future__ import annotations

import libcst as cst

from ..ir.core import Assign, Exit, For, If, Permute, Stmt, While, walk_statements
from ..ir.exprs import children, dotted, names_in, subscript_indices
from .affine import size_of

# Read only for its shape (and dtype). An attribute of an array that is its shape, size, number of
# dimensions or dtype; the arguments of a call that it reads only so (by position); and the calls
# and operators whose result's shape is their operands' shapes alone, so that a result read only
# for its shape reads its operands only for theirs (`unbroadcast(t, broadcast_like(x, g))`,
# `zeros_like(a + b)`). Everything else reads values.
SHAPE_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})
SHAPE_ARGUMENTS: dict[str, tuple[int, ...]] = {
    "len": (0,),
    "np.shape": (0,),
    "np.size": (0,),
    "np.ndim": (0,),
    "zeros_like": (0,),  # an adjoint's zero (runtime/lowered.py)
    "np.zeros_like": (0,),
    "np.empty_like": (0,),
    "np.ones_like": (0,),
    "np.full_like": (0,),
    "unbroadcast": (1,),  # unbroadcast(g, like): like's shape (runtime/broadcasting.py)
    "matmul_like": (0, 1),  # an empty array of the product's shape (runtime/matmul.py)
}
# `broadcast_like(a, b)` may return `a` itself (runtime/broadcasting.py): its operands are read only
# for their shapes where its result is.
SHAPE_OF_OPERANDS = frozenset({"broadcast_like"})
_SHAPED_OPERATORS = (cst.BinaryOperation, cst.UnaryOperation)  # elementwise: the broadcast shape


def names_read(stmt: Stmt) -> set[str]:
    """The names `stmt` needs bound: those in its value, in a test or a loop's bounds, a swap's
    sources, and the array an element write writes into (with its indices) or the name an
    accumulation `v += e` adds to. Not the values an early exit returns (`Exit`)."""
    if isinstance(stmt, Assign):
        names = names_in(stmt.value)
        if isinstance(stmt.target, cst.Subscript):
            names |= {stmt.var}.union(*(names_in(i) for i in subscript_indices(stmt.target)))
        elif stmt.accumulate is not None:
            names.add(stmt.var)
        return names
    if isinstance(stmt, (If, While)):
        return names_in(stmt.test)
    if isinstance(stmt, For):
        return set().union(*(names_in(b) for b in (stmt.start, stmt.stop, stmt.step)))
    if isinstance(stmt, Permute):
        return set(stmt.sources)
    return set()


def values_read(stmt: Stmt, swaps: bool = False) -> set[str]:
    """The names whose values `stmt`'s expressions read: its value and the indices of the element
    it writes, a test, a loop's bounds. Not the array an element write writes into (unless its own
    indices read it), nor the name an accumulation adds to, nor an early exit's values. A swap
    reads no value (its names change bindings) unless `swaps`: then it reads its sources."""
    if isinstance(stmt, Assign):
        names = names_in(stmt.value)
        if isinstance(stmt.target, cst.Subscript):
            for index in subscript_indices(stmt.target):
                names |= names_in(index)
        return names
    if isinstance(stmt, (If, While)):
        return names_in(stmt.test)
    if isinstance(stmt, For):
        return set().union(*(names_in(b) for b in (stmt.start, stmt.stop, stmt.step)))
    if isinstance(stmt, Permute) and swaps:
        return set(stmt.sources)
    return set()


def reads_array(stmt: Stmt, array: str) -> bool:
    """Does `stmt` (or a statement inside it) read `array`'s values, or do anything with it but
    write its elements and read its size? An accumulation into an element (`a[i] += v`) reads it,
    a swap naming it does, an early exit returning it does."""
    for inner in walk_statements((stmt,)):
        if isinstance(inner, Assign):
            parts: list[cst.CSTNode] = [inner.value]
            if inner.writes_element:
                parts += subscript_indices(inner.target)  # type: ignore[arg-type]
                if inner.var == array and inner.accumulate is not None:
                    return True  # a[i] += v reads a[i]
            if any(_reads_values(p, array) for p in parts):
                return True
        elif isinstance(inner, For):
            if any(_reads_values(b, array) for b in (inner.start, inner.stop, inner.step)):
                return True
        elif isinstance(inner, (If, While)):
            if _reads_values(inner.test, array):
                return True
        elif isinstance(inner, Permute):
            if array in (*inner.targets, *inner.sources):
                return True
        elif isinstance(inner, Exit):
            if any(array in names_in(v) for v in inner.values):
                return True
    return False


def _reads_values(node: cst.CSTNode, array: str) -> bool:
    """Does `node` read `array` other than for its size (`array.shape[k]`, `len(array)`)?"""
    if array not in names_in(node):
        return False
    size = size_of(node) if isinstance(node, cst.BaseExpression) else None
    if size is not None:
        return False
    if isinstance(node, cst.Name):
        return node.value == array
    return any(_reads_values(child, array) for child in children(node))


def value_reads(node: cst.CSTNode) -> set[str]:
    """The names `node` reads for their values: every name in it (`names_in`) but those it reads
    only for their shape or dtype, as declared above (`zeros_like(y)`, `y.shape[0]`, `len(y)`, the
    `like` of `unbroadcast(g, like)`, the operands of a sum read only for its shape)."""
    found: set[str] = set()
    _values(node, False, found)
    return found


def _values(node: cst.CSTNode, shaped: bool, found: set[str]) -> None:
    """Add to `found` the names `node` reads for values; `shaped`: only `node`'s shape is read."""
    if isinstance(node, cst.Name):
        if not shaped:
            found.add(node.value)
    elif isinstance(node, cst.Attribute):
        if node.attr.value in SHAPE_ATTRIBUTES and dotted(node.value) not in ("np", "math"):
            _values(node.value, True, found)
        else:
            found |= names_in(node)
    elif isinstance(node, cst.Call):
        _call_values(node, shaped, found)
    elif isinstance(node, cst.Subscript):
        _values(node.value, shaped, found)  # an element or a view: its array's shape, and the indices
        for index in subscript_indices(node):
            _values(index, False, found)
    elif shaped and isinstance(node, _SHAPED_OPERATORS):
        for child in children(node):
            _values(child, True, found)
    else:
        for child in children(node):
            _values(child, False, found)


def _call_values(call: cst.Call, shaped: bool, found: set[str]) -> None:
    func = dotted(call.func)
    positions = SHAPE_ARGUMENTS.get(func, ())
    transparent = shaped and func in SHAPE_OF_OPERANDS
    if not isinstance(call.func, cst.Name):
        found |= names_in(call.func)
    for k, arg in enumerate(call.args):
        shape_only = arg.keyword is None and arg.star == "" and (k in positions or transparent)
        _values(arg.value, shape_only, found)
