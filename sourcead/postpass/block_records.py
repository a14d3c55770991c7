"""Block records: a loop that records one element per iteration records them all with one copy.

The sweeps record an element just before a loop's statement overwrites it, one tape slot per
iteration, and restore it one at a time in the reversed loop (`reverse/emit/`):

    for i in range(1, n - 1):                 for i in range(1, n - 1):   # reversed
        tape[np.uint64(top)] = u[i]               top_at = top + i - 1 + 1
        top += 1                                  top_at -= 1
        u[i] = v[i]                               u[i] = tape[np.uint64(top_at)]
                                                  v_bar[i] += u_bar[i]; u_bar[i] = 0.0

The store to the tape beside the primal's store keeps LLVM from vectorising the primal loop (the
two may alias, and the tape's counter is carried from one iteration to the next), and the restore
does the same to the adjoint loop. Where the shape makes it exact, both become slice copies of one
contiguous block and the loops keep only their own statements:

    for q in range(max(n - 1 - 1, 0)):
        tape[np.uint64(top + q)] = u[np.uint64(1 + q)]
    top += max(n - 1 - 1, 0)
    for i in range(1, n - 1):
        u[i] = v[i]

The copy is a loop over unsigned indices, which LLVM turns into a vectorised copy; numba's slice
assignment (`tape[top:top + k] = u[1:1 + k]`) is a generic strided loop, and measured slower than
the records it replaced (heat_swap 13.1x -> 15.3x its primal, ode 5.1x -> 6.2x).

The forward rewrite applies to a loop `for i in range(a, b)` (step 1) whose body is exactly the
record of `X[..., i + c]`, the counter's `+= 1` and the store (or `+=`) to that same element: each iteration
then writes an element no other iteration writes, so the value it records is the one the element
had when the loop started, and the records are the block `X[..., a + c : a + c + trips]` in order.
The reversed loop is rewritten where its iterations restore those slots from the same block
(ascending, from a mark computed from the loop index, or descending, popping the counter) and the
rest of its body reads and writes only adjoints (names the sweeps call adjoints, which never alias
a primal array), scalars and index arithmetic, and never leaves the loop: the order of the restores
against the rest then does not matter, so the block is restored before the loop. Both need
`a + c` a number at least 0 (the copy's indices are unsigned; an element index below zero wraps), and
the indices other than the last to be names the loop does not assign, or numbers. Anything else is
left as the sweeps wrote it.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import libcst as cst

from ..ir.exprs import all_names, unparen

_CALLS = frozenset({"strong_zero", "add_unordered", "min", "max", "abs"})


def block_records(module: cst.Module, adjoints: frozenset[str]) -> tuple[cst.Module, bool]:
    """`module` (holding one generated function) with its per-element records and restores in loops
    of the shape above written as block copies; and whether any was."""
    rewriter = _Rewriter(adjoints, module)
    (definition,) = module.body
    assert isinstance(definition, cst.FunctionDef)
    new = module.with_changes(body=[rewriter.compound(definition)])
    return (new, True) if rewriter.count else (module, False)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _int(node: cst.BaseExpression) -> int | None:
    node = unparen(node)
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int(node.expression)
        return None if inner is None else -inner
    return None


def _atom(text: str, node: cst.BaseExpression) -> str:
    """`text` of `node`, in parentheses unless it is safe as the left operand of `-`."""
    node = unparen(node)
    if isinstance(node, (cst.Name, cst.Integer, cst.Call, cst.Subscript, cst.Attribute)):
        return text
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
    ):
        return text
    return f"({text})"


def _range(loop: cst.For) -> tuple[cst.BaseExpression, cst.BaseExpression, int] | None:
    """(start, stop, step) of `for v in range(...)` (also prange) with a number step, else None."""
    it = unparen(loop.iter)
    if not (isinstance(loop.target, cst.Name) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name)):
        return None
    if it.func.value != "range" or loop.orelse is not None or any(a.keyword or a.star for a in it.args):
        return None
    args = [a.value for a in it.args]
    if len(args) == 1:
        return cst.Integer("0"), args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    step = _int(args[2]) if len(args) == 3 else None
    return (args[0], args[1], step) if step is not None else None


def _simple(line: cst.BaseStatement) -> cst.BaseSmallStatement | None:
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return line.body[0]
    return None


def _tape_slot(node: cst.BaseExpression) -> tuple[str, str] | None:
    """(tape, counter) of `tape[np.uint64(counter)]`."""
    node = unparen(node)
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    call = unparen(index.value)
    if not (isinstance(call, cst.Call) and _code(call.func) == "np.uint64" and len(call.args) == 1):
        return None
    counter = unparen(call.args[0].value)
    return (node.value.value, counter.value) if isinstance(counter, cst.Name) else None


def _element(node: cst.BaseExpression, var: str) -> tuple[str, list[str], int] | None:
    """(array, leading indices, c) of `X[j, ..., var + c]` whose leading indices are names other
    than `var` or numbers; c an integer (0 for `X[..., var]`)."""
    node = unparen(node)
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)):
        return None
    indices = []
    for element in node.slice:
        if not isinstance(element.slice, cst.Index):
            return None
        indices.append(unparen(element.slice.value))
    *lead, last = indices
    if not all(isinstance(k, cst.Integer) or (isinstance(k, cst.Name) and k.value != var) for k in lead):
        return None
    if isinstance(last, cst.Name) and last.value == var:
        c = 0
    elif (
        isinstance(last, cst.BinaryOperation)
        and isinstance(unparen(last.left), cst.Name)
        and unparen(last.left).value == var  # type: ignore[attr-defined]
        and isinstance(last.operator, (cst.Add, cst.Subtract))
        and _int(last.right) is not None
    ):
        c = _int(last.right) * (1 if isinstance(last.operator, cst.Add) else -1)  # type: ignore[operator]
    else:
        return None
    return node.value.value, [_code(k) for k in lead], c


def _assigned(lines: list[Any]) -> set[str]:
    """Names some statement among `lines` binds (targets that are names, loop variables)."""
    found: set[str] = set()

    class _Collect(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            found.update(_bound(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.update(_bound(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            found.update(_bound(node.target))

        def visit_For(self, node: cst.For) -> None:
            found.update(_bound(node.target))

    for line in lines:
        line.visit(_Collect())
    return found


def _bound(target: cst.BaseExpression) -> set[str]:
    target = unparen(target)
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_bound(e.value) for e in target.elements))
    return set()


class _AdjointsOnly(cst.CSTVisitor):
    """Whether statements touch arrays only through adjoints: every subscript is of an adjoint,
    every call one of _CALLS (or `np.uint64`, `math.*`), no attribute else, no exit from the loop."""

    def __init__(self, adjoints: frozenset[str]):
        self.adjoints, self.ok = adjoints, True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        value = unparen(node.value)
        if not (isinstance(value, cst.Name) and value.value in self.adjoints):
            self.ok = False

    def visit_Call(self, node: cst.Call) -> bool:
        func = _code(node.func)
        if func not in _CALLS and func != "np.uint64" and not func.startswith("math."):
            self.ok = False
        if any(a.star for a in node.args):
            self.ok = False
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _code(node) != "np.uint64" and not _code(node).startswith("math."):
            self.ok = False
        return False

    def visit_Break(self, node: cst.Break) -> None:
        self.ok = False

    def visit_Continue(self, node: cst.Continue) -> None:
        self.ok = False

    def visit_Return(self, node: cst.Return) -> None:
        self.ok = False

    def visit_Yield(self, node: cst.Yield) -> None:
        self.ok = False


def _line(text: str, leading: Any = ()) -> cst.SimpleStatementLine:
    line = cst.parse_statement(text)
    assert isinstance(line, cst.SimpleStatementLine)
    return line.with_changes(leading_lines=leading) if leading else line


class _Rewriter:
    """Rewrites each block, innermost first, walking statements only (no expression is visited)."""

    def __init__(self, adjoints: frozenset[str], module: cst.Module):
        self.adjoints, self.module, self.count = adjoints, module, 0

    @cached_property
    def q(self) -> str:
        """The block copies' loop variable: a name the function does not use (asked only when a
        loop is rewritten: collecting every name costs as much as the rest of the pass)."""
        taken = all_names(self.module)
        return next(name for name in ("q", *(f"q_{k}" for k in range(1, len(taken) + 2))) if name not in taken)

    def compound(self, node: Any) -> Any:
        """`node` with the blocks it holds (bodies, `else`s, `elif`s, handlers) rewritten."""
        changes: dict[str, Any] = {}
        for field in ("body", "orelse", "handlers", "finalbody"):
            part = getattr(node, field, None)
            if isinstance(part, cst.IndentedBlock):
                changes[field] = part.with_changes(body=self._block(list(part.body)))
            elif isinstance(part, (tuple, list)):
                changes[field] = [self.compound(p) for p in part]
            elif isinstance(part, cst.CSTNode) and not isinstance(part, cst.SimpleStatementSuite):
                changes[field] = self.compound(part)
        return node.with_changes(**changes) if changes else node

    def _block(self, lines: list[Any]) -> list[Any]:
        out: list[Any] = []
        for line in lines:
            line = self.compound(line) if isinstance(line, cst.BaseCompoundStatement) else line
            if isinstance(line, cst.For):
                new = self._forward(line) or self._reverse(line)
                if new is not None:
                    self.count += 1
                    out.extend(new)
                    continue
            out.append(line)
        return out

    def _trips(self, start: cst.BaseExpression, stop: cst.BaseExpression) -> str:
        a = _int(start)
        stop_text = _code(unparen(stop))
        if a == 0:
            return f"max({stop_text}, 0)"
        return f"max({_atom(stop_text, stop)} - {a}, 0)"

    def _at(self, array: str, lead: list[str], first: int | str) -> str:
        """`array[..., np.uint64(first + q)]`: the block's element q (unsigned: never below zero)."""
        offset = self.q if first in (0, "0") else f"{first} + {self.q}"
        return f"{array}[{', '.join([*lead, f'np.uint64({offset})'])}]"

    def _copy(self, target: str, source: str, trips: str, comment: str, leading: Any) -> cst.BaseStatement:
        """`for q in range(trips): target = source`: a loop LLVM turns into a vectorised copy
        (numba's slice assignment is a generic strided loop, slower than the records it replaces)."""
        loop = cst.parse_statement(f"for {self.q} in range({trips}):\n    {target} = {source}\n")
        note = cst.EmptyLine(comment=cst.Comment(comment))
        return loop.with_changes(leading_lines=[*leading, note])

    def _forward(self, loop: cst.For) -> list[Any] | None:
        """`tape[np.uint64(top)] = X[..., i + c]; top += 1; X[..., i + c] = e` per iteration."""
        bounds = _range(loop)
        if bounds is None or bounds[2] != 1 or _int(bounds[0]) is None:
            return None
        start, stop, _ = bounds
        var = loop.target.value  # type: ignore[attr-defined]
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        if len(body) != 3:
            return None
        record, step, store = (_simple(s) for s in body)
        if not (isinstance(record, cst.Assign) and isinstance(step, cst.AugAssign)):
            return None
        if isinstance(store, cst.Assign) and len(store.targets) == 1:
            written = store.targets[0].target
        elif isinstance(store, cst.AugAssign):  # `X[i] += e` reads the element, then writes it
            written = store.target
        else:
            return None
        if len(record.targets) != 1:
            return None
        slot = _tape_slot(record.targets[0].target)
        element = _element(record.value, var)
        if slot is None or element is None or _code(unparen(record.value)) != _code(unparen(written)):
            return None
        tape, counter = slot
        array, lead, c = element
        if not (isinstance(step.operator, cst.AddAssign) and _code(step.target) == counter and _int(step.value) == 1):
            return None
        first = _int(start) + c  # type: ignore[operator]
        if first < 0 or array == tape or {tape, counter, var} & set(lead) or {tape, counter} & all_names(store.value):
            return None
        if counter == array or counter == var:
            return None
        trips = self._trips(start, stop)
        comment = f"# record {_code(unparen(record.value))} of every iteration, one block of the elements it overwrites"
        lines = [
            self._copy(self._at(tape, [], counter), self._at(array, lead, first), trips, comment, loop.leading_lines),
            _line(f"{counter} += {trips}"),
            loop.with_changes(leading_lines=[], body=loop.body.with_changes(body=[body[2]])),
        ]
        return lines

    def _reverse(self, loop: cst.For) -> list[Any] | None:
        """An ascending loop restoring from a mark `m = top + (i - a) + 1; m -= 1`, or a descending
        one popping its counter `top -= 1`, then `X[..., i + c] = tape[np.uint64(m)]`."""
        bounds = _range(loop)
        if bounds is None or bounds[2] not in (1, -1):
            return None
        start, stop, step = bounds
        var = loop.target.value  # type: ignore[attr-defined]
        body = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        if step == 1:
            a = _int(start)
            if a is None or len(body) < 3:
                return None
            mark_line = _simple(body[0])
            if not (isinstance(mark_line, cst.Assign) and len(mark_line.targets) == 1):
                return None
            mark = _code(mark_line.targets[0].target)
            position = var if a == 0 else f"{var} - {a}"
            base = _code(unparen(mark_line.value))
            if not base.endswith(f" + {position} + 1"):
                return None
            top = base[: -len(f" + {position} + 1")]
            if not top.isidentifier():
                return None
            rest_from, pop_at = 1, 1
        else:
            # range(last, first, -1): the elements first + 1 .. last, popped last first
            first_before = _int(stop)
            if first_before is None or len(body) < 2:
                return None
            a, mark, top, pop_at, rest_from = first_before + 1, None, None, 0, 0
        pop, restore = _simple(body[pop_at]), _simple(body[pop_at + 1]) if len(body) > pop_at + 1 else None
        if not (
            isinstance(pop, cst.AugAssign) and isinstance(pop.operator, cst.SubtractAssign) and _int(pop.value) == 1
        ):
            return None
        counter = _code(pop.target)
        if mark is not None and counter != mark:
            return None
        if not (isinstance(restore, cst.Assign) and len(restore.targets) == 1):
            return None
        slot = _tape_slot(restore.value)
        element = _element(restore.targets[0].target, var)
        if slot is None or element is None or slot[1] != counter:
            return None
        tape, _ = slot
        array, lead, c = element
        first = a + c
        rest = [s for k, s in enumerate(body) if k >= rest_from and k not in (pop_at, pop_at + 1)]
        if first < 0 or array == tape or {tape, counter, var, top} & set(lead):
            return None
        check = _AdjointsOnly(self.adjoints)
        for s in rest:
            s.visit(check)
        touched = set().union(*(all_names(s) for s in rest)) if rest else set()
        if not check.ok or {array, tape, counter, top} & touched or (set(lead) | {var}) & _assigned(rest):
            return None
        lines: list[Any] = []
        kept, independent = _without_restoring(loop.leading_lines)
        if step == 1:
            trips, base = self._trips(start, stop), str(top)
        else:  # the block ends at the counter: pop it first, then copy from its new value
            last = _code(unparen(start))
            trips = f"max({_atom(last, start)} - {first_before}, 0)" if first_before else f"max({last}, 0)"
            base = counter
            lines.append(_line(f"{counter} -= {trips}", kept))
        comment = f"# restore {array}'s elements the loop overwrote: one block"
        leading = kept if step == 1 else ()
        lines.append(self._copy(self._at(array, lead, first), self._at(tape, [], base), trips, comment, leading))
        if rest:
            lines.append(loop.with_changes(leading_lines=independent, body=loop.body.with_changes(body=rest)))
        return lines


# the reverse sweep's comment on a loop whose iterations restore their own records
# (`reverse/emit/reverse_sweep.py`): no longer true once the block is restored before the loop
_RESTORING = ("# its iterations' adjoints are independent: run in the loop's order, each restoring",
              "# its own records from the end of its part of the tape")  # fmt: skip
_INDEPENDENT = "# its iterations' adjoints are independent: run in the loop's order"


def _without_restoring(leading: Any) -> tuple[list[Any], list[Any]]:
    """`leading` (a loop's leading lines) without the comment that its iterations restore their own
    records, and what of it stays true, for the loop left after the block's restore."""
    kept, independent = [], []
    for line in leading:
        text = line.comment.value if isinstance(line, cst.EmptyLine) and line.comment is not None else None
        if text == _RESTORING[0]:
            independent.append(line.with_changes(comment=cst.Comment(_INDEPENDENT)))
        elif text != _RESTORING[1]:
            kept.append(line)
    return kept, independent
