"""Which operands an elementwise operation reads through a singular partial (`Partials.singular`:
infinite or nan where the value is finite, as sqrt's at 0), where the code may reach that point.

Forward mode guards those edges on the tangent being zero, and a tangent that crossed one on the
partials above it being zero (`linearize.py`, `forward/singular.py`); reverse mode, dually, on
the adjoint reaching them and on the partials below them being zero (`adjoints.py`,
`reverse/singular.py`). A partial visibly never zero (`nonzero_partial`) needs no such guard.
A partial declared `regular_above_zero` (sqrt, cbrt, powers) is not singular where the first
operand is visibly positive: `math.sqrt(d * d + 0.1)`, `np.exp(x) ** 0.5`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import libcst as cst

from ..ir.core import Assign, Permute, Stmt
from ..ir.exprs import code, is_number, names_in, number_value, unparen, walk
from ..rules import Partials, classify

# positive wherever they are defined, whatever their operand
_POSITIVE_CALLS = ("math.exp", "np.exp", "math.cosh", "np.cosh")
# never negative
_NONNEGATIVE_CALLS = ("math.sqrt", "np.sqrt", "math.fabs", "np.fabs", "np.abs", "abs", "np.square", "math.hypot")


def singular(form: Partials, operands: list[cst.BaseExpression]) -> tuple[int, ...]:
    """The positions of the operands (`operands`, in the primitive's order) whose partial is
    singular somewhere the code may reach."""
    if form.regular_above_zero and operands and positive(operands[0]):
        return ()
    return form.singular


def singular_operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `expr` (at any depth) read through a singular partial (`singular`): their
    adjoints may be non-finite where the values are finite, as `linearize` marks the edges."""
    found: list[cst.BaseExpression] = []
    for node in walk(expr):
        hit = classify(node)
        if hit is None:
            continue
        prim, bound = hit
        form = (prim.special(bound) if prim.special is not None else None) or prim.derivative
        if isinstance(form, Partials) and form.singular:
            args = [bound.args[p] for p in prim.differentiable if p in bound.args]
            names = [p for p in prim.differentiable if p in bound.args]
            found += [bound.args[names[k]] for k in singular(form, args) if k < len(names)]
    return found


def singular_values(statements: Iterable[Stmt], is_active: Callable[[str], bool]) -> frozenset[str]:
    """The variables whose tangents may be non-finite where their values are finite (they move
    infinitely fast there): those assigned through a singular partial (`s = math.sqrt(v)` at
    v = 0), and every variable computed from one (`r = c * s`), in any order (loops). Forward
    mode's guards (`forward/singular.py`) and reverse mode's suspect adjoints
    (`reverse/singular.py`) read them."""
    sources: list[tuple[str, set[str]]] = []  # (target, the active variables it reads)
    tainted: set[str] = set()
    for s in statements:
        if isinstance(s, Assign) and is_active(s.var):
            reads = {n for n in names_in(s.value) if is_active(n)}
            sources.append((s.var, reads))
            if any(names_in(e) & reads for e in singular_operands(s.value)):
                tainted.add(s.var)
        elif isinstance(s, Permute):  # a swap exchanges the tangents too
            names = set(s.targets) | set(s.sources)
            sources += [(name, names) for name in names]
    while True:
        before = len(tainted)
        tainted |= {target for target, reads in sources if reads & tainted}
        if len(tainted) == before:
            return frozenset(tainted)


def vanishing(partial: cst.BaseExpression, names: dict[str, set[str]]) -> set[str]:
    """What a partial's zero may come from: the operands (`names`: a placeholder's name -> the
    operands it stands for) read by a factor of `partial` that may be zero (`zero_factors`)."""
    return {key for f in zero_factors(partial) for n in names_in(f) for key in names.get(n, ())}


def zero_factors(e: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The factors of `e` that may make it exactly zero: `y` for `x * y`, a quotient's numerator,
    a power's base (not for a negative exponent), the value a strong zero selects (`np.where(m, p
    * t, 0.0)`, `chosen`, `strong_zero_each`: zero where the guarded product is 0 * inf, which its
    zero factor stands for); none of a number, a reciprocal, a visibly positive sum or exp.
    Anything else is a factor whole."""
    e = unparen(e)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
        return zero_factors(e.expression)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Multiply):
        return zero_factors(e.left) + zero_factors(e.right)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Divide):
        return zero_factors(e.left)  # a finite denominator never makes a quotient zero
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Power):
        exponent = _constant(e.right)
        return [] if exponent is not None and exponent <= 0.0 else zero_factors(e.left)
    if isinstance(e, cst.IfExp) and is_number(e.orelse, 0.0):
        return zero_factors(e.body)
    selected = _selected_value(e)
    if selected is not None:
        return zero_factors(selected)
    if is_number(e) or positive(e):
        return []
    return [e]


def _selected_value(e: cst.BaseExpression) -> cst.BaseExpression | None:
    """The value a guard selects (else zero): `np.where(m, v, 0.0)`, `chosen(m, v)`, `strong_zero_each(v, m)`."""
    if not isinstance(e, cst.Call):
        return None
    func, args = _call(e), [a.value for a in e.args]
    if func == "np.where" and len(args) == 3 and is_number(args[2], 0.0):
        return args[1]
    if func == "chosen" and len(args) == 2:
        return args[1]
    if func in ("strong_zero_each", "strong_zero") and len(args) == 2:
        return args[0]
    return None


def _constant(e: cst.BaseExpression) -> float | None:
    """The value of a number written as literal arithmetic (`0.5 - 1.0`), else None."""
    e = unparen(e)
    if is_number(e):
        return number_value(e)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract)):
        left, right = _constant(e.left), _constant(e.right)
        if left is not None and right is not None:
            return left + right if isinstance(e.operator, cst.Add) else left - right
    return None


def moving_zeros(statements: Iterable[Stmt], is_active: Callable[[str], bool]) -> frozenset[str]:
    """The variables whose value may be zero because of a singular point, where it moves
    infinitely fast: `s = math.sqrt(v)` at v = 0, and from there every variable with such a zero
    factor (`r = c * s`; not `q = d / s`, nor `e = math.exp(s)`). A partial zero through one of
    them (the `s` of `s * s`) times sqrt's infinite partial stands for a finite limit, not for 0
    (`derive/adjoints.py`). In any order (loops); swaps exchange them."""
    sources: list[tuple[str, list[cst.BaseExpression]]] = []  # (target, its zero factors)
    found: set[str] = set()
    permutes: list[set[str]] = []
    for s in statements:
        if isinstance(s, Assign) and is_active(s.var):
            factors = zero_factors(s.value)
            sources.append((s.var, factors))
            singular_zero = any(
                not isinstance(unparen(f), cst.Name)
                and any(names_in(o) & {n for n in names_in(f) if is_active(n)} for o in singular_operands(f))
                for f in factors
            )
            if singular_zero:
                found.add(s.var)
        elif isinstance(s, Permute):
            permutes.append(set(s.targets) | set(s.sources))
    while True:
        before = len(found)
        found |= {target for target, factors in sources if any(names_in(f) & found for f in factors)}
        for names in permutes:
            if names & found:
                found |= names
        if len(found) == before:
            return frozenset(found)


def positive(e: cst.BaseExpression) -> bool:
    """Is `e` visibly > 0 wherever it is a number: a positive literal, a sum of a positive and a
    nonnegative term, a product or quotient of positives, exp or cosh of anything."""
    e = unparen(e)
    if is_number(e):
        return number_value(e) > 0.0
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Add):
            return positive(e.left) and nonnegative(e.right) or nonnegative(e.left) and positive(e.right)
        if isinstance(e.operator, (cst.Multiply, cst.Divide)):
            return positive(e.left) and positive(e.right)
    return _call(e) in _POSITIVE_CALLS


def nonnegative(e: cst.BaseExpression) -> bool:
    """Is `e` visibly >= 0: positive, a square (`d * d`, `d ** 2`), an absolute value, a square
    root, or a sum or product of such."""
    e = unparen(e)
    if positive(e) or is_number(e, 0.0):
        return True
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Multiply) and code(e.left) == code(e.right):
            return True
        if isinstance(e.operator, cst.Power) and is_number(e.right) and number_value(e.right) in (2.0, 4.0):
            return True
        if isinstance(e.operator, (cst.Add, cst.Multiply)):
            return nonnegative(e.left) and nonnegative(e.right)
    return _call(e) in _NONNEGATIVE_CALLS


def _call(e: cst.BaseExpression) -> str:
    return code(e.func) if isinstance(e, cst.Call) else ""


def nonzero_partial(p: cst.BaseExpression) -> bool:
    """Is the partial `p` visibly never zero where it is finite: a nonzero number, or one divided by
    a value (`0.5 / t0`, sqrt's own partial)? A non-finite derivative crossing it needs no guard."""
    p = unparen(p)
    if isinstance(p, cst.UnaryOperation) and isinstance(p.operator, cst.Minus):
        return nonzero_partial(p.expression)
    if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Divide):
        return finite_number(p.left)
    return finite_number(p)


def finite_number(node: cst.BaseExpression) -> bool:
    """A finite, nonzero number written in the code."""
    node = unparen(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = unparen(node.expression)
    if isinstance(node, (cst.Integer, cst.Float)):
        value = float(node.value)
        return math.isfinite(value) and value != 0.0
    return False
