"""The pass `kinds`: the type of every variable (a dtype, float, int or bool, and a number of dimensions).

Parameters take their types from the call: every array's dtype and ndim, and whether a parameter
the code only does arithmetic with is a float or an array. Before the first call, usage gives a
guess (indexed or reduced -> an array, its elements read as indices -> an integer array, a `range`
bound or an index -> an int). Locals take the type of what is assigned to them, to a fixed point
over loops; every expression's type comes from its primitive's result rule (`rules/`), which
also rejects what does not fit (`math.sin` of an array, a float index), with the position.
Only floats and float arrays carry derivatives; values read from integer arrays are integers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn

import libcst as cst
import numpy as np

from ..errors import SourceADError
from ..frontend.parse import ParsedFunction
from ..ir.core import Assign, CoreFunction, For, If, Permute, While, walk_statements
from ..ir.exprs import names_in, paren, subscript_indices, walk
from ..ir.naming import Namer
from ..ir.types import BOOL, FLOAT, INT, Type, array, join, parse_spec, tuple_of
from ..rules import NOT_LITERAL, Args, BindError, ResultError, classify, literal
from .rebinding import Rebinding, mixed_storage, rename_from, top_rebinding

# re-exported for the passes that only need the names
ARRAY = array(FLOAT, 1)


@dataclass(frozen=True)
class Kinds:
    """The type of every variable; `free` are the parameters whose type the call decides."""

    of: Mapping[str, Type]
    free: frozenset[str] = frozenset()

    def __getitem__(self, var: str) -> Type:
        return self.of.get(var, FLOAT)

    def is_array(self, var: str) -> bool:
        return self[var].is_array

    def carries(self, var: str) -> bool:
        """Can `var` carry a derivative? Floats and float arrays can; ints and bools never."""
        return self[var].carries

    def ndim(self, var: str) -> int:
        return self[var].ndim

    def type_of(self, node: cst.BaseExpression) -> Type:
        """The type of an expression over these variables (checked when the kinds were inferred)."""
        return expression_type(node, self.of.get, _unreachable)


def _unreachable(node: cst.CSTNode, message: str, hint: str = "") -> NoReturn:
    raise AssertionError(f"kinds accepted an expression it cannot type: {message}")


Fail = Callable[..., NoReturn]


def infer_kinds_renaming(
    fn: CoreFunction, parsed: ParsedFunction, given: Mapping[str, str] | None, namer: Namer
) -> tuple[CoreFunction, Kinds]:
    """`infer_kinds`, where a variable bound again as a whole at the function's top level with
    another type first takes a fresh name from there on (`rebinding.py`)."""
    for _ in range(len(fn.body)):
        try:
            return fn, infer_kinds(fn, parsed, given, rebinding=True)
        except Rebinding as found:
            fn = rename_from(fn, found.index, namer)
    return fn, infer_kinds(fn, parsed, given)


def infer_kinds(
    fn: CoreFunction, parsed: ParsedFunction, given: Mapping[str, str] | None = None, rebinding: bool = False
) -> Kinds:
    """Types of every variable; `given` (spec strings from the call's arguments, see `Type.spec`)
    decides the parameters whose type the code leaves to the call. With `rebinding`, a top-level
    binding of another type raises `Rebinding` for `infer_kinds_renaming`."""

    def fail(node: cst.CSTNode | None, message: str, hint: str = "") -> NoReturn:
        raise parsed.error(message, node if node is not None and parsed.locate(node) else origin[0], hint)

    origin: list[cst.CSTNode] = [parsed.node]
    guessed, fixed = _parameter_guesses(fn)
    params: dict[str, Type] = {}
    for name, shown in zip(fn.params, fn.user_params, strict=True):
        spec = (given or {}).get(shown)
        params[name] = parse_spec(spec) if spec is not None and name not in fixed else guessed[name]
        if guessed[name].is_array and not params[name].is_array:
            raise SourceADError(
                f"argument `{shown}` of {fn.name} must be a NumPy array (the code uses it as one), "
                f"got {params[name].describe()}"
            )
    _check_indexing(fn, params, fail, origin)
    env: dict[str, Type] = dict(params)
    for name, value in fn.constants:
        env[name] = _constant_type(value)
    statements = list(walk_statements(fn.body))
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            origin[0] = stmt.origin
            for target, t in _assigned_types(stmt, env, fail):
                new = join(env.get(target), t)
                if new is None:
                    at = top_rebinding(fn, stmt, target) if rebinding else None
                    if at is not None:
                        raise Rebinding(at)
                    old = env[target]
                    fail(
                        stmt.origin,
                        f"`{target}` holds {old.describe()} in one place and {t.describe()} in another",
                        "Use a different name for each.",
                    )
                old_type = env.get(target)
                if old_type is None or new != old_type or new.single != old_type.single:
                    env[target] = new
                    changed = True
    mixed = mixed_storage(fn, statements, lambda node: expression_type(node, env.get, fail))
    if mixed is not None:  # numba gives a variable one dtype (rebinding.py)
        at = top_rebinding(fn, mixed, mixed.var) if rebinding else None
        if at is not None:
            raise Rebinding(at)
        fail(
            mixed.origin,
            f"`{mixed.var}` holds a float32 array in one place and a float64 array in another",
            "numba gives a variable one dtype: use a different name for each, store into the float32 array "
            f"(`{mixed.var}[:] = ...`), or give both the same dtype.",
        )
    for stmt in statements:
        origin[0] = stmt.origin
        _check_statement(stmt, env, fail)
    return Kinds(env, frozenset(p for p in fn.params if p not in fixed))


def _assigned_types(stmt, env: dict[str, Type], fail: Fail) -> list[tuple[str, Type]]:
    """The (variable, type) pairs a statement assigns, where its value's type is known yet."""
    if isinstance(stmt, For):
        return [(stmt.var, INT)]
    if isinstance(stmt, Permute):
        return [(t, env[s]) for t, s in zip(stmt.targets, stmt.sources, strict=True) if s in env]
    if isinstance(stmt, Assign) and not stmt.writes_element:
        value = stmt.value
        if stmt.accumulate is not None:  # `A += 1.0` holds what `A + 1.0` is: an array still
            value = cst.BinaryOperation(stmt.target, cst.Add(), paren(value))
        if names_in(value) - set(env) - {"True", "False", "None", "math", "np"}:
            return []  # reads a variable not typed yet: a later round
        t = expression_type(value, env.get, fail)
        if t.is_tuple:
            fail(stmt.value, "a tuple cannot be stored in a variable here", "Unpack it: `a, b = ...`.")
        return [(stmt.var, t)]
    return []


def _check_statement(stmt, env: dict[str, Type], fail: Fail) -> None:
    """What the types must satisfy beyond each expression: conditions are scalars, range bounds
    ints, element writes fit their arrays, accumulations their targets."""
    if isinstance(stmt, (If, While)):
        t = expression_type(stmt.test, env.get, fail)
        if not t.is_scalar:
            fail(stmt.test, f"a condition must be a number or a bool, not {t.describe()}", "Use np.any or np.all.")
    if isinstance(stmt, For):
        for bound in (stmt.start, stmt.stop, stmt.step):
            t = expression_type(bound, env.get, fail)
            if t not in (INT, BOOL):
                fail(bound, f"a range bound must be an integer, not {t.describe()}", "Convert it: int(x).")
    if isinstance(stmt, Assign):
        value = expression_type(stmt.value, env.get, fail)
        target = expression_type(stmt.target, env.get, fail)
        if target.is_tuple or value.is_tuple:
            fail(stmt.origin, "tuples cannot be assigned here", "Unpack the tuple into names.")
        if stmt.writes_element:
            _refuse_scatter(stmt, env.get, fail)
            _check_store(stmt, target, value, fail)
        elif stmt.accumulate is not None and value.ndim > target.ndim:
            fail(stmt.origin, f"`{stmt.var}` is {target.describe()} but this adds {value.describe()} to it")


def _refuse_scatter(stmt: Assign, env: Callable[[str], Type | None], fail: Fail) -> None:
    """`x[idx] = v` at an integer array of indices: NumPy's buffered writes (a repeated index takes
    one value, and `x[idx] += v` adds once), which sourcead does not follow."""
    target = cst.ensure_type(stmt.target, cst.Subscript)
    for element in target.slice:
        if not isinstance(element.slice, cst.Index):
            continue
        position = element.slice.value
        index = expression_type(position, env, fail)
        if index.is_array and index.dtype == "bool":
            fail(
                position,
                f"`{_shown(target)}` writes through a mask held in a name, which sourcead does not follow",
                f"Write the comparison in the index (`{_shown(target.value)}[{_shown(target.value)} > 0.5] = v`, "
                f"v a number), or `{_shown(target.value)} = np.where(m, v, {_shown(target.value)})`.",
            )
        if index.is_array:
            fail(
                position,
                f"`{_shown(target)}` writes at an array of indices, which sourcead does not follow",
                f"Loop over the indices: `for k in range(len(idx)): {_shown(target.value)}[idx[k]] += v[k]` "
                "(NumPy's `x[idx] += v` adds once at a repeated index; the loop adds each).",
            )


def _check_store(stmt: Assign, target: Type, value: Type, fail: Fail) -> None:
    if value.ndim > target.ndim:
        fail(stmt.value, f"this stores {value.describe()} into {target.describe()} of `{stmt.var}`")
    if target.dtype == "int" and value.dtype == "float":
        fail(
            stmt.value,
            f"this stores a float into the integer array `{stmt.var}` (NumPy would truncate it)",
            "Convert explicitly with int(...), or make the array a float array.",
        )
    if target.dtype == "bool" and value.dtype != "bool":
        fail(stmt.value, f"this stores {value.describe()} into the bool array `{stmt.var}`")


# --- expressions ------------------------------------------------------------------------------


def expression_type(node: cst.BaseExpression, env: Callable[[str], Type | None], fail: Fail) -> Type:
    """The type of an expression in core form, given the variables' types."""
    if isinstance(node, cst.Integer):
        return INT
    if isinstance(node, cst.Float):
        return FLOAT
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return BOOL
        t = env(node.value)
        if t is None:
            fail(node, f"`{node.value}` is read before it is assigned", "Assign it before this line.")
        return t
    if isinstance(node, cst.Subscript):
        return _subscript_type(node, env, fail)
    if isinstance(node, cst.Tuple):
        return tuple_of(*(expression_type(e.value, env, fail) for e in node.elements))
    if isinstance(node, cst.IfExp):  # only in conditions of while loops
        body, orelse = expression_type(node.body, env, fail), expression_type(node.orelse, env, fail)
        return join(body, orelse) or body
    if isinstance(node, cst.Attribute) and node.attr.value in ("inf", "nan") and _is_math(node.value):
        return FLOAT  # math.inf, math.nan (frozen constants)
    found = None
    try:
        found = classify(node)
    except BindError as exc:
        fail(exc.node, str(exc))
    if found is None:
        fail(node, f"unsupported expression: {type(node).__name__}")
    prim, bound = found
    types = {name: expression_type(value, env, fail) for name, value in bound.args.items()}
    operands = tuple(expression_type(v, env, fail) for v in bound.operands)
    literals = {}
    for param in prim.signature.params:
        if param.literal and param.name in bound.args:
            value = literal(bound.args[param.name])
            literals[param.name] = None if value is NOT_LITERAL else value
    try:
        result = prim.result(Args(prim.name, types, operands, literals))
    except ResultError as exc:
        at = bound.args.get(exc.param, node) if exc.param else node
        fail(at, str(exc), exc.hint)
        raise AssertionError("unreachable") from exc
    return _storage(result, [*types.values(), *operands])


def _storage(result: Type, inputs: list[Type]) -> Type:
    """A float result read from maybe-float32 storage (or asked for as `dtype=np.float32`) may be
    float32 itself: marked `single`, so that its derivatives are allocated float64 (`Type.single`)."""
    if result.dtype == "float" and any(t.single or any(e.single for e in t.elements) for t in inputs):
        return result.as_single()
    return result


def _is_math(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "math"


def _subscript_type(node: cst.Subscript, env, fail: Fail) -> Type:
    base = expression_type(node.value, env, fail)
    if base.is_tuple:  # x.shape[k]
        k = literal(node.slice[0].slice.value) if len(node.slice) == 1 else NOT_LITERAL  # type: ignore[attr-defined]
        if not isinstance(k, int) or not -len(base.elements) <= k < len(base.elements):
            fail(
                node,
                f"a shape of {len(base.elements)} dimensions is indexed with a constant 0 to {len(base.elements) - 1}",
            )
        return base.elements[k]
    if not base.is_array:
        fail(node, f"`{_shown(node.value)}` is indexed, but it is {base.describe()}", "Only arrays can be indexed.")
    if len(node.slice) > base.ndim:
        fail(node, f"{len(node.slice)} indices for {base.describe()} `{_shown(node.value)}`")
    kept = 0
    for element in node.slice:
        if isinstance(element.slice, cst.Slice):
            kept += 1
            for part in (element.slice.lower, element.slice.upper, element.slice.step):
                if part is not None and expression_type(part, env, fail) not in (INT, BOOL):
                    fail(part, "slice bounds must be integers")
            continue
        position = cst.ensure_type(element.slice, cst.Index).value
        index = expression_type(position, env, fail)
        if index not in (INT, BOOL):
            if is_gather(base, index, len(node.slice)) or is_selection(base, index, len(node.slice)):
                return array(base.dtype, 1)  # transforms/gathers.py writes it np.take or np.extract
            fail(position, f"an index must be an integer, not {index.describe()}", _index_hint(index))
    return base.with_ndim(kept + base.ndim - len(node.slice))


def is_gather(base: Type, index: Type, count: int) -> bool:
    """`x[idx]`: a 1-D array read at a 1-D integer array of indices (the pass `gathers`)."""
    return (
        count == 1 and base.is_array and base.ndim == 1 and index.is_array and index.ndim == 1 and index.dtype == "int"
    )


def is_selection(base: Type, index: Type, count: int) -> bool:
    """`x[m]`: an array read through a bool mask of its dimensions (the pass `gathers`)."""
    return count == 1 and base.is_array and index.is_array and index.dtype == "bool" and index.ndim == base.ndim


def _index_hint(index: Type) -> str:
    """What to write instead of an index that is not an integer: a mask, a gather, a float."""
    if index.is_array and index.dtype == "bool":  # boolean-mask indexing: a data-dependent length
        return (
            "A mask selects a data-dependent number of elements: for `x[m] = v` write the comparison in the "
            "index (`x[x > 0.5] = v`, v a number) or `x = np.where(m, v, x)`, "
            "for `np.sum(x[m])` write `np.sum(np.where(m, x, 0.0))` (a mean: divide by `np.sum(m)`), "
            "or loop with `if m[i]:`."
        )
    if index.is_array:  # a gather by an integer array, other than a 1-D array's at a 1-D one
        return (
            "sourcead gathers a 1-D array at a 1-D integer array (`x[idx]`); for others, loop over `idx` "
            "and read one element or row at a time: `A[idx[k]]`."
        )
    return "Convert it with int(...), or index with a loop variable."


def _shown(node: cst.BaseExpression) -> str:
    from ..ir.exprs import code

    return code(node)


# --- parameters before the first call -------------------------------------------------------------


def other_guess(fn: CoreFunction) -> dict[str, str]:
    """Another guess at the parameters' types, where the first guess may be wrong: parameters the
    code only does arithmetic with as 1-D arrays, arrays with one more dimension (`points[i]` may
    be a row: `np.sum((points[i] - c) ** 2)`)."""
    guesses, fixed = _parameter_guesses(fn)
    other = {}
    for p in fn.params:
        t = guesses[p]
        if p in fixed or t.ndim >= 3:
            continue
        other[p] = (array(FLOAT, 1) if not t.is_array else array(t.dtype, t.ndim + 1)).spec()
    return other


def _index_counts(fn: CoreFunction) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stmt in walk_statements(fn.body):
        for root in _roots(stmt):
            for node in walk(root):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                    counts[node.value.value] = max(counts.get(node.value.value, 0), len(node.slice))
    return counts


def _parameter_guesses(fn: CoreFunction) -> tuple[dict[str, Type], set[str]]:
    """A type for every parameter from usage, and the parameters usage fixes (ints: bounds and indices
    in arithmetic; a parameter only ever a whole index, `x[k]`, is guessed an int but the call may
    make it the int array of a gather)."""
    params = set(fn.params)
    statements = list(walk_statements(fn.body))
    copies = [(s.var, source.value) for s in statements if isinstance(s, Assign) and not s.writes_element
              and s.accumulate is None and isinstance(source := _copied(s.value), cst.Name)]  # fmt: skip
    copies += [pair for s in statements if isinstance(s, Permute) for pair in zip(s.targets, s.sources, strict=True)]
    # `row = A[k]` (or A[k, :]) and row used as an array: A has that many more dimensions
    parts = [(s.var, s.value.value.value, sum(not isinstance(i, cst.Slice) for i in subscript_indices(s.value)))
             for s in statements if isinstance(s, Assign) and not s.writes_element
             and isinstance(s.value, cst.Subscript) and isinstance(s.value.value, cst.Name)]  # fmt: skip
    ndim: dict[str, int] = {}
    index_arrays: set[str] = set()
    ints: set[str] = set()
    loose: set[str] = set()  # parameters only ever a whole index: an int, or the int array of a gather
    for stmt in statements:
        for root in _roots(stmt):
            for node in walk(root):
                for name, dims in _array_uses(node):
                    ndim[name] = max(ndim.get(name, 0), dims)
                for size in _size_uses(node):
                    _mark_int(size, params, ints)
                if isinstance(node, cst.Subscript):
                    for index in subscript_indices(node):
                        if isinstance(index, cst.Name) and index.value in params:  # `x[k]`, or a gather `x[idx]`
                            loose.add(index.value)
                            continue
                        bounds = (index.lower, index.upper, index.step) if isinstance(index, cst.Slice) else (index,)
                        for bound in (b for b in bounds if b is not None):  # `A_val[A_row[i] : A_row[i + 1]]`
                            _mark_int(bound, params, ints)
                            index_arrays |= _indexed_names(bound)
        if isinstance(stmt, For):
            for bound in (stmt.start, stmt.stop, stmt.step):
                _mark_int(bound, params, ints)
                index_arrays |= _indexed_names(bound)
    index_names = {n.value for s in statements for root in _roots(s) for n in _index_operands(root)}
    index_names |= ints | loose
    changed = True
    while changed:  # `y = x` and y used as an array: x is an array too; `a = e[k]` and a an index: e holds ints
        changed = False
        for target, copied in copies:
            if target in ndim and ndim.get(copied, 0) < ndim[target]:
                ndim[copied] = ndim[target]
                changed = True
        for target, whole, indexed in parts:
            if target in ndim and ndim.get(whole, 0) < ndim[target] + indexed:
                ndim[whole] = ndim[target] + indexed
                changed = True
        for s in statements:
            if isinstance(s, Assign) and not s.writes_element and s.var in index_names:
                read = _indexed_names(s.value) | (names_in(s.value) & params)
                if not read <= index_arrays | index_names:
                    index_arrays |= _indexed_names(s.value)
                    index_names |= names_in(s.value) - _indexed_names(s.value)
                    changed = True
    guesses: dict[str, Type] = {}
    for p in fn.params:
        if p in ndim:
            guesses[p] = array("int" if p in index_arrays else "float", max(ndim[p], 1))
        elif p in ints or p in loose:
            guesses[p] = INT
        else:
            guesses[p] = FLOAT
    return guesses, {p for p in ints if p not in ndim}


def _roots(stmt) -> list[cst.BaseExpression]:
    """The expressions a statement itself holds (not those of its nested blocks)."""
    if isinstance(stmt, For):
        return [stmt.start, stmt.stop, stmt.step]
    if isinstance(stmt, (If, While)):
        return [stmt.test]
    if isinstance(stmt, Assign):
        return [stmt.target, stmt.value]
    return []


def _copied(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for the values `x` and `np.copy(x)` (the same array, or one like it)."""
    if isinstance(value, cst.Name):
        return value
    found = classify(value) if isinstance(value, cst.Call) else None
    return found[1].args.get("a") if found is not None and found[0].copies else None


def _array_uses(node: cst.CSTNode) -> list[tuple[str, int]]:
    """Names this node uses as arrays, with the fewest dimensions the use needs."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return [(node.value.value, len(node.slice))]
    if isinstance(node, cst.Subscript) and _is_shape_of_name(node.value):  # x.shape[k]: k + 1 dimensions at least
        k = literal(node.slice[0].slice.value) if len(node.slice) == 1 else NOT_LITERAL  # type: ignore[attr-defined]
        if isinstance(k, int) and k >= 0:
            return [(node.value.value.value, k + 1)]  # type: ignore[attr-defined]
    try:
        found = classify(node)
    except BindError:
        return []
    if found is None:
        return []
    prim, bound = found
    axis = literal(bound.args["axis"]) if "axis" in bound.args else None
    dims = (axis + 1 if axis >= 0 else -axis) if isinstance(axis, int) else 1  # np.sum(x, axis=1): 2-D at least
    uses = []
    for p, v in bound.args.items():
        if p not in prim.arrays:
            continue
        if isinstance(v, cst.Name):
            uses.append((v.value, dims))
        elif len(read := names_in(v)) == 1:  # np.sum(row * row): an array made from row alone
            uses.append((next(iter(read)), dims))
    return uses


def _index_operands(root: cst.BaseExpression) -> list[cst.Name]:
    """The names used directly (in index arithmetic) as indices anywhere in `root`."""
    found: list[cst.Name] = []
    for node in walk(root):
        if isinstance(node, cst.Subscript):
            for index in subscript_indices(node):
                bounds = (index.lower, index.upper, index.step) if isinstance(index, cst.Slice) else (index,)
                for bound in bounds:
                    found += _arithmetic_names(bound) if bound is not None else []
    return found


def _arithmetic_names(expr: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(expr, cst.Name):
        return [expr]
    if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Divide):
        return _arithmetic_names(expr.left) + _arithmetic_names(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _arithmetic_names(expr.expression)
    return []


def _is_shape_of_name(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "shape" and isinstance(node.value, cst.Name)


def _size_uses(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The expressions this node uses as sizes (the shape given to np.zeros, and its elements)."""
    try:
        found = classify(node)
    except BindError:
        return []
    if found is None:
        return []
    prim, bound = found
    sizes = [bound.args[p] for p in prim.sizes if p in bound.args]
    return [e.value for s in sizes if isinstance(s, cst.Tuple) for e in s.elements] + sizes


def _indexed_names(expr: cst.BaseExpression) -> set[str]:
    """Arrays whose elements this index expression reads as they are (in index arithmetic, not
    through a call such as int(...)): integer arrays."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
        return {expr.value.value}
    if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Divide):
        return _indexed_names(expr.left) | _indexed_names(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _indexed_names(expr.expression)
    return set()


def _mark_int(expr: cst.BaseExpression, params: set[str], ints: set[str]) -> None:
    """Names used directly as an index or a loop bound (in + - * // % arithmetic) are ints."""
    if isinstance(expr, cst.Name) and expr.value in params:
        ints.add(expr.value)
    elif isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Divide):
        _mark_int(expr.left, params, ints)
        _mark_int(expr.right, params, ints)
    elif isinstance(expr, cst.UnaryOperation):
        _mark_int(expr.expression, params, ints)


def _check_indexing(fn: CoreFunction, params: dict[str, Type], fail: Fail, origin: list) -> None:
    """An array parameter indexed with more indices than the call's array has dimensions."""
    for stmt in walk_statements(fn.body):
        origin[0] = stmt.origin
        for root in _roots(stmt):
            for node in walk(root):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                    t = params.get(node.value.value)
                    if t is not None and t.is_array and len(node.slice) > t.ndim:
                        fail(
                            node,
                            f"`{node.value.value}` is indexed with {len(node.slice)} indices here, "
                            f"but it is {t.describe()}",
                            "Pass an array with as many dimensions as the code indexes.",
                        )


__all__ = ["ARRAY", "BOOL", "FLOAT", "INT", "Kinds", "expression_type", "infer_kinds", "infer_kinds_renaming"]


def _constant_type(value: object) -> Type:
    """The type of a frozen global: a number, or an array of float64, int64 or bool."""
    if isinstance(value, np.ndarray):
        return array({"float64": "float", "int64": "int", "bool": "bool"}[value.dtype.name], value.ndim)
    return BOOL if isinstance(value, bool) else INT if isinstance(value, int) else FLOAT


def fixed_ints(fn: CoreFunction) -> Kinds:
    """The parameters the code itself makes ints (loop bounds, indices), whatever the call: what
    wrt may be checked against before any type guess."""
    _, fixed = _parameter_guesses(fn)
    return Kinds({p: INT for p in fixed})
