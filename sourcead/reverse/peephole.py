"""Peephole simplification of one statement's adjoint lines (used by `adjoint.py`).

Two rewrites, each exact (the simplified lines leave every variable as the original ones do):

1. A self-update's cancelling triple. For `U[i, j] = U[i, j] - f * U[k, j]` the adjoint takes the
   target's adjoint first, zeroes it, and then adds the coefficient 1 of `U[i, j]` back:

       t3 = U_bar[i, j]                      t3 = U_bar[i, j]
       U_bar[i, j] = 0.0             ->      f_bar += U[k, j] * -t3
       U_bar[i, j] += t3                     U_bar[k, j] += f * -t3
       f_bar += U[k, j] * -t3
       U_bar[k, j] += f * -t3

   `X = 0.0` followed by `X += t`, where `t = X` was read just before the zero, leaves `X` as it
   was. So does an array slice's triple, `t = x_bar[:k].copy(); x_bar[:k] = 0.0;
   x_bar[:k] += unbroadcast(t, x[:k])` (durbin's `y[:k] += alpha * np.flip(y[:k])`): the operand
   `x[:k]` has the shape of its adjoint `x_bar[:k]`, so of the copy t, and `unbroadcast` gives t
   back. The copy stays: the later lines read it. Lines between the zero and the add must be
   accumulations (`+=`, `-=`) or bindings of fresh temporaries, and must not read `X`: an
   accumulation into an element that is `X` at run time (`U_bar[k, j]` when k == i) then adds
   the same amount either way, since addition commutes.

2. Repeated contributions. `total += d * d` gives `d_bar += d * total_bar` twice in a row; two
   adjacent, exactly equal accumulations whose value does not read their target become one:

       d_bar += d * total_bar        ->      d_bar += 2.0 * (d * total_bar)
       d_bar += d * total_bar

   (equal up to rounding: one multiplication by 2.0, which is exact, instead of a second add).

3. A zero and the first contribution. After the cancelling triple is gone, an adjoint that is
   zeroed and then receives its first contribution is assigned it:

       t0 = v_bar                            t0 = v_bar
       v_bar = 0.0                   ->      x_bar += 2.0 * t0
       x_bar += 2.0 * t0                     v_bar = math.cos(v) * (1.1 * t0)
       v_bar += math.cos(v) * (1.1 * t0)

   (0.0 + e is e, but for the sign of a zero). The lines between must leave `X` alone as in 1, and
   none may accumulate into the same variable (`U_bar[k, j]` may be `U_bar[i, j]` at run time,
   and would then be added before the assignment instead of after the zero).
"""

from __future__ import annotations

import libcst as cst

from ..ir.emit import Line
from ..ir.exprs import code, names_in, number_value, unparen

ACCUMULATE = ("+=", "-=")


def simplify(lines: list[Line]) -> list[Line]:
    """The adjoint lines of one statement, with the three rewrites applied."""
    return assign_first_contribution(merge_repeated(drop_cancelling_self_update(lines)))


def drop_cancelling_self_update(lines: list[Line]) -> list[Line]:
    for z in range(1, len(lines)):
        taken, zero = lines[z - 1], lines[z]
        if not (_is_zero(zero) and taken.op == "=" and isinstance(taken.target, cst.Name)):
            continue
        target = code(zero.target)
        if code(taken.value) not in (target, f"{target}.copy()"):
            continue
        name = taken.target.value
        added_back = {name, *(f"unbroadcast({name}, {like})" for like in _same_shape(target, _base(zero.target)))}
        for a in range(z + 1, len(lines)):
            line = lines[a]
            if line.op == "+=" and code(line.target) == target and code(line.value) in added_back:
                return lines[:z] + lines[z + 1 : a] + lines[a + 1 :]
            if not _leaves_alone(line, target, _base(zero.target)):
                break
    return lines


def assign_first_contribution(lines: list[Line]) -> list[Line]:
    for z, zero in enumerate(lines):
        if not _is_zero(zero):
            continue
        target, base = code(zero.target), _base(zero.target)
        for a in range(z + 1, len(lines)):
            line = lines[a]
            if line.op in ACCUMULATE and code(line.target) == target:
                if base in names_in(line.value):
                    break
                value = line.value if line.op == "+=" else cst.UnaryOperation(cst.Minus(), _atom(line.value))
                assigned = Line(zero.target, "=", value, line.comment)
                return lines[:z] + lines[z + 1 : a] + [assigned] + assign_first_contribution(lines[a + 1 :])
            if not _leaves_alone(line, target, base) or _base(line.target) == base:
                break
    return lines


def merge_repeated(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    for line in lines:
        last = out[-1] if out else None
        if (
            last is not None
            and line.op in ACCUMULATE
            and line.op == last.op
            and line.text() == last.text()
            and _base(line.target) not in names_in(line.value)
        ):
            out[-1] = Line(line.target, line.op, _twice(line.value), line.comment)
        else:
            out.append(line)
    return out


def _is_zero(line: Line) -> bool:
    if line.op != "=":
        return False
    try:
        return number_value(line.value) == 0.0
    except (AttributeError, TypeError, ValueError):  # not a number literal (np.zeros_like(...))
        return False


def _base(target: cst.BaseExpression) -> str:
    """The variable a target writes: `x` for `x` and for `x[i, j]`."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return target.value if isinstance(target, cst.Name) else code(target)


def _same_shape(target: str, base: str) -> tuple[str, ...]:
    """Expressions of the shape of the adjoint `target` (`x_bar[:k]`): itself, and the same
    element or slice of its variable (`x[:k]`), the operand a broadcasting rule sums back to."""
    if base.endswith("_bar") and target.startswith(base):
        return (target, base[: -len("_bar")] + target[len(base) :])
    return (target,)


def _leaves_alone(line: Line, target: str, base: str) -> bool:
    """Can `line` sit between `X = 0.0` and `X += t` without changing what the pair does?"""
    if base in names_in(line.value):
        return False
    if line.op in ACCUMULATE:
        return True
    return line.op == "=" and isinstance(line.target, cst.Name) and line.target.value != base


def _atom(value: cst.BaseExpression) -> cst.BaseExpression:
    """`value` as the operand of a unary minus."""
    value = unparen(value)
    if isinstance(value, (cst.Name, cst.Subscript, cst.Call, cst.Float, cst.Integer)):
        return value
    return cst.parse_expression(f"({code(value)})")


def _twice(value: cst.BaseExpression) -> cst.BaseExpression:
    value = unparen(value)
    if isinstance(value, (cst.Name, cst.Subscript, cst.Call, cst.Float, cst.Integer)):
        return cst.parse_expression(f"2.0 * {code(value)}")
    return cst.parse_expression(f"2.0 * ({code(value)})")
