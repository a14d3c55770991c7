"""Probes: indices the shapes cannot bound, checked at the call by a pass over their values.

An index the contract's terms cannot bound (`w[i * i]`, `x[idx[k] - 1]`, `x[idx[k] % n]`) may
still be computable before the call: from the loop variables of the loops around it, int
arguments, sizes, elements of int arguments the function never writes, and int locals bound once
from those (inlined). Its *probe* is that computation as code over the arguments: the loops the
index depends on (their ranges as written, each loop whose variable a range or the index reads),
and the index, compared with the size of the indexed axis:

    for i in prange(n):                 for _i in range(0, a0.shape[0], 1):
        out[i] = x[i] * w[i * i]            _v = _i * _i
                                            if _v < -(a1.shape[0]) or _v >= a1.shape[0]: return False

The call runs the probes (one compiled pass, `build/probes.py`) before the variant without bounds
checks, which it runs, parallel, only where every value is in range (negative ones count from the
end, as in NumPy and numba); else the bounds-checked variant runs and fails where the user's code
does. A probe visits every iteration of its loops, also where the access is under an `if` or past
a `break`: it may ask more than the code indexes, never less (a *sufficient* fact).
"""

from __future__ import annotations

import json

import libcst as cst

from ..ir.core import For, While, assigned_names
from ..ir.exprs import dotted, unparen
from .affine import ONE, Affine
from .contract_facts import Facts
from .contract_terms import Scope, affine_of, load, static

_OPERATORS = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.FloorDivide: "//", cst.Modulo: "%"}
_DEPTH = 12  # int locals inlined into one another, at most


class Translation:
    """An int expression of the core form as probe code: argument K is `aK`, a loop variable `i`
    is `_i`; `loops` collects the variables it reads. None where a node is not allowed."""

    def __init__(self, facts: Facts, scope: Scope, around: dict[str, For]):
        self.scope, self.around = scope, around
        self.params = {p: k for k, p in enumerate(facts.fn.params) if not facts.assigned[p]}
        self.kinds, self.written = facts.kinds, facts.written | set(facts.swapped)  # a swap moves its arrays
        self.loops: set[str] = set()

    def text(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        node = unparen(node)
        if depth > _DEPTH:
            return None
        static_form = affine_of(node, self.scope)
        if static_form is not None and static(static_form):
            return affine_text(static_form)
        if isinstance(node, cst.Integer):
            return str(int(node.evaluated_value))
        if isinstance(node, cst.Name):
            return self.name(node.value, depth)
        if isinstance(node, cst.BinaryOperation) and type(node.operator) in _OPERATORS:
            left, right = self.text(node.left, depth + 1), self.text(node.right, depth + 1)
            if left is None or right is None:
                return None
            return f"({left} {_OPERATORS[type(node.operator)]} {right})"
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            inner = self.text(node.expression, depth + 1)
            return None if inner is None else f"({'-' if isinstance(node.operator, cst.Minus) else '+'}{inner})"
        if isinstance(node, cst.Subscript):
            return self.element(node, depth)
        if isinstance(node, cst.Call) and dotted(node.func) in ("min", "max", "abs") and node.args:
            args = [self.text(a.value, depth + 1) if a.keyword is None and not a.star else None for a in node.args]
            if any(a is None for a in args) or (dotted(node.func) == "abs" and len(args) != 1):
                return None
            return f"{dotted(node.func)}({', '.join(args)})"  # type: ignore[arg-type]
        return None

    def name(self, name: str, depth: int) -> str | None:
        if name in self.around:
            self.loops.add(name)
            return f"_{name}"
        if name in self.params and self.kinds[name].is_scalar and self.kinds[name].dtype == "int":
            return f"a{self.params[name]}"
        value = self.scope.exprs.get(name)
        if value is not None:  # an int local bound once, before the access, in a block around it
            return self.text(value, depth + 1)
        return None

    def element(self, node: cst.Subscript, depth: int) -> str | None:
        """An element of an int argument the function never writes or rebinds."""
        holder = unparen(node.value)
        if not isinstance(holder, cst.Name) or holder.value not in self.params or holder.value in self.written:
            return None
        t = self.kinds[holder.value]
        if not t.is_array or t.dtype != "int" or len(node.slice) != t.ndim:
            return None
        parts = []
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                return None
            part = self.text(element.slice.value, depth + 1)
            if part is None:
                return None
            parts.append(part)
        return f"a{self.params[holder.value]}[{', '.join(parts)}]"


def probe(facts: Facts, open_loops: list, index: cst.BaseExpression, dim: Affine, scope: Scope) -> dict | None:
    """The probe of an index along an axis of static size `dim` (see the module docstring), inside
    the loops `open_loops` (the `for` and `while` statements around it, outermost first), or None
    where the index is not computable before the call."""
    around = {lp.var: lp for lp in open_loops if isinstance(lp, For)}
    translation = Translation(facts, scope, around)
    value = translation.text(index)
    if value is None or not static(dim):
        return None
    loops = []
    for loop in reversed(open_loops):  # innermost first: a range reads only outer variables
        if isinstance(loop, While) or loop.var not in translation.loops:
            continue
        if loop.var in assigned_names(loop.body):
            return None  # the body moves its variable: the range does not tell its values
        bounds = [translation.text(e) for e in (loop.start, loop.stop, loop.step)]
        if any(b is None for b in bounds):
            return None
        loops.append([f"_{loop.var}", *bounds])
    return {"loops": loops[::-1], "index": value, "size": affine_text(dim)}


def take_probe(facts: Facts, indices: cst.BaseExpression, dim: Affine, scope: Scope) -> dict | None:
    """The probe of a gather np.take(x, indices) (`x[idx]`) along x's axis of static size `dim`:
    every element of the int argument the indices are (`idx`) or a slice of (spmv's `cols =
    A_col[A_row[i] : A_row[i + 1]]`, through int-array names bound once), all of it: sufficient."""
    translation = Translation(facts, scope, {})
    node = unparen(indices)
    for _ in range(_DEPTH):
        if isinstance(node, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in node.slice):
            node = unparen(node.value)  # a slice of it: its elements are some of the array's
        elif isinstance(node, cst.Name) and node.value not in translation.params:
            bound = scope.exprs.get(node.value)
            if bound is None:
                return None
            node = unparen(bound)
        else:
            break
    if not isinstance(node, cst.Name) or node.value not in translation.params or node.value in translation.written:
        return None
    t = facts.kinds[node.value]
    if not static(dim) or not t.is_array or t.dtype != "int" or t.ndim != 1:
        return None
    array = f"a{translation.params[node.value]}"
    return {"loops": [["_g", "0", f"{array}.shape[0]", "1"]], "index": f"{array}[_g]", "size": affine_text(dim)}


def affine_text(form: Affine) -> str:
    """A static form as probe code (`a0.shape[1] - 1`), arguments by position."""
    terms = []
    for atom, coef in sorted(form.items(), key=lambda item: str(item[0])):
        if atom == ONE:
            terms.append(str(coef))
            continue
        kind, *rest = str(atom).split(":", 2)
        if kind == "q":
            value = f"(({affine_text(load(json.loads(rest[1])))}) // {rest[0]})"
        else:
            value = f"a{rest[0]}.shape[{rest[1]}]" if kind == "s" else f"a{rest[0]}"
        terms.append(value if coef == 1 else f"{coef} * {value}")
    return "(" + " + ".join(terms) + ")" if terms else "0"
