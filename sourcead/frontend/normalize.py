"""The pass `normalize`: the fenced libcst function becomes the core form (`sourcead.core`).

- Every call is written the one way its primitive declares (`rules/`): methods become calls
  (`x.sum(axis=1)` -> `np.sum(x, axis=1)`), optional arguments become keywords, spellings become
  canonical names (`sin(x)` with `from math import sin` -> `math.sin(x)`), and some calls are
  lowered into others (`max(a, b, c)` -> `max(max(a, b), c)`, `np.mean(a, axis=k)` -> a sum).
- Expressions keep Python's evaluation order: a call to a user function is inlined where Python
  would run it, and a value read before it (left of it) that it may change is saved first.
- Tuples are scalarized: `p = (a, b)` gives the variables `p_0`, `p_1`; `p[0]` reads `p_0`; a
  function returning a tuple fills them; `n, m = A.shape` reads each size.
- `a += e` stays an explicit accumulation when `e` does not read `a`, else becomes `a = a + (e)`;
  `*=`, `/=` and `**=` become plain assignments.
- `range(n)` gets explicit start and step; loop bounds that the loop body reassigns are hoisted
  into fresh variables, so the reversed loop can re-read them.
- A conditional expression becomes an if statement that sets a fresh variable, so only the
  chosen branch runs (and is differentiated); so does `a and f(x)` when `f(x)` has effects.
- `a, b = b, a` on names is a `Permute`; other tuple assignments go through fresh variables
  where a target is read by a later value.
- `break`, `continue` and `return` anywhere become flags (`exits.py`), leaving one exit.
- The caller's arrays the function writes are followed through rebindings and swaps (`outputs.py`).
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst
import numpy as np

from ..ir.core import (
    Assign,
    Break,
    Continue,
    CoreFunction,
    Exit,
    For,
    If,
    Permute,
    Return,
    Stmt,
    While,
    assigned_names,
    walk_statements,
)
from ..ir.exprs import Rename, code, constant_node, is_cheap, names_in, paren, unparen
from ..ir.naming import Namer, reserved_names
from ..rules import ATTRIBUTES, METHOD_TABLE, Bound, bind, is_literal, primitive
from .aliases import from_loop
from .exits import eliminate_exits
from .fence import assigned_in, fence, local_names
from .loopvars import carry_loop_variables
from .outputs import written_outputs
from .parameters import base_name, is_place, is_shared, updated_in_place, writes_elements
from .parse import ParsedFunction, carried_positions, parse_function, unwrap
from .resolve import canonical_call, canonical_func_node, dtype_name, is_frozen_constant, lookup, user_function
from .rings import modulo_rings

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.PowerAssign: cst.Power,
}
Flat = tuple[list[Stmt], cst.BaseExpression]  # statements to run first, and the value reading their results


def normalize(parsed: ParsedFunction, namer: Namer) -> CoreFunction:
    """The core form of a fenced function. User names that generated code needs for itself (a
    local called `np`, a parameter called `reserve`) are renamed first."""
    clashes = sorted(local_names(parsed.node) & reserved_names())
    if clashes:
        mapping = {name: namer.fresh(name) for name in clashes}
        renamed = parsed.node.visit(Rename({k: cst.Name(v) for k, v in mapping.items()}, params=True))
        core = Normalizer(replace(parsed, node=renamed), namer).function()  # type: ignore[arg-type]
        by_new = {v: k for k, v in mapping.items()}
        return replace(core, arg_names=tuple(by_new.get(p, p) for p in core.params))
    return Normalizer(parsed, namer).function()


class Normalizer:
    def __init__(self, parsed: ParsedFunction, namer: Namer, callers: tuple = ()):
        self.parsed = parsed
        self.namer = namer
        self.callers = callers  # the functions being inlined into, to reject recursion
        self.current: cst.CSTNode = parsed.node  # the user statement being normalized, for errors
        self.params = tuple(p.name.value for p in parsed.node.params.params)
        self.constants: dict[str, object] = {}
        self.custom: set[str] = set()  # custom rules called (keys)
        self.locals = local_names(parsed.node)
        self.tuples: dict[str, tuple[str, ...]] = {}  # a tuple variable -> its element variables

    def function(self) -> CoreFunction:
        statements = list(self.parsed.node.body.body)  # type: ignore[union-attr]
        body, ret = eliminate_exits(self.block(statements), self.namer, self.parsed)
        body = carry_loop_variables(body, ret, self.namer, self.fail)
        body = modulo_rings(body, self.namer, self.parsed)
        self.refuse_global_writes(body)
        body, mutated, finals = written_outputs(body, self.params, self.namer, self.fail)
        return CoreFunction(
            name=self.parsed.name,
            params=self.params,
            body=body,
            ret=ret,
            constants=tuple(sorted(self.constants.items())),
            mutated=mutated,
            finals=finals if finals != mutated else (),
            custom=tuple(sorted(self.custom)),
        )

    def fail(self, message: str, node: cst.CSTNode | None = None, hint: str = "") -> Exception:
        return self.parsed.error(message, self.where(node) if node is not None else self.current, hint)

    def where(self, node: cst.CSTNode) -> cst.CSTNode:
        """`node` if it has a file position (rewritten nodes do not), else the statement at hand."""
        return node if self.parsed.locate(node) else self.current

    # --- statements ---------------------------------------------------------------------------

    def refuse_global_writes(self, body: tuple[Stmt, ...]) -> None:
        """A frozen global array is a constant of the generated module (as numba makes it one):
        writing it would change a copy the user never sees."""
        for s in walk_statements(body):
            if isinstance(s, Assign) and s.writes_element and s.var in self.constants:
                raise self.fail(
                    f"`{s.var}` is a global array: numba freezes it as a constant, so it cannot be written",
                    s.origin,
                    f"Pass `{s.var}` as an argument, or write into a copy: `{s.var.lower()}_work = {s.var}.copy()`.",
                )

    def block(self, statements) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in statements:
            self.current = stmt
            if isinstance(stmt, cst.For):
                out += self.loop(stmt)
            elif isinstance(stmt, cst.While):
                out += self.while_loop(stmt)
            elif isinstance(stmt, cst.If):
                out += self.branch(stmt)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.current = small
                    out += self.small(small)
        return out

    def branch(self, stmt: cst.If) -> list[Stmt]:
        self.current = stmt
        pre, test = self.value(stmt.test)
        body = self.block(stmt.body.body)  # type: ignore[attr-defined]
        self.current = stmt
        orelse: list[Stmt] = []
        if isinstance(stmt.orelse, cst.If):  # elif: its test runs only when this one is false
            orelse = self.branch(stmt.orelse)
        elif isinstance(stmt.orelse, cst.Else):
            orelse = self.block(stmt.orelse.body.body)  # type: ignore[attr-defined]
        return pre + [If(test, tuple(body), tuple(orelse), stmt)]

    def while_loop(self, stmt: cst.While) -> list[Stmt]:
        """`while test:`; a test that needs statements first (a call, a conditional expression) is
        computed into a flag before the loop and again at the end of every iteration."""
        pre, test = self.value(stmt.test)
        body = self.block(stmt.body.body)  # type: ignore[attr-defined]
        if not pre:
            return [While(test, tuple(body), stmt)]
        if any(isinstance(s, Continue) for s in _same_loop(body)):
            raise self.fail(
                "`continue` in a while loop whose condition needs statements (a call, a conditional "
                "expression or `and`/`or` with one)",
                stmt,
                "Compute the condition into a variable at the end of the body instead.",
            )
        flag = cst.Name(self.namer.fresh("going"))
        again = pre + [Assign(flag, test, None, stmt)]
        return again + [While(flag, tuple(body + _copies(again)), stmt)]

    def small(self, small: cst.BaseSmallStatement) -> list[Stmt]:
        if isinstance(small, cst.Assign):
            target = small.targets[0].target
            if isinstance(target, cst.Tuple):
                pre, value = self.value(small.value)
                return pre + self.unpack([e.value for e in target.elements], value, small)
            pre_target, place = self.target(target)
            if isinstance(small.value, cst.IfExp):  # a = b if c else d: each branch assigns a itself
                return pre_target + self.conditional(place, _one_line(small.value))  # type: ignore[arg-type]
            pre, value = self.value(small.value)
            return pre + pre_target + self.assign(place, value, small)
        if isinstance(small, cst.AugAssign):
            return self.augmented(small)
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):  # a call for its writes
            pre, _ = self.value(small.value, result_used=False)
            return pre
        if isinstance(small, cst.Break):
            return [Break(small)]
        if isinstance(small, cst.Continue):
            return [Continue(small)]
        if isinstance(small, cst.Return):
            pre, value = self.value(small.value)  # type: ignore[arg-type]
            if isinstance(value, cst.Tuple):
                items = [e.value for e in value.elements]
                for item in items:
                    if isinstance(item, cst.Tuple):
                        raise self.fail("a returned tuple cannot hold a tuple", small, "Return a flat tuple.")
                return pre + [Exit(tuple(items), True, small)]
            return pre + [Exit((value,), False, small)]
        return []  # pass, docstrings

    def target(self, node: cst.BaseExpression) -> Flat:
        """An assignment target: a name, or an element or slice of a named array (indices normalized)."""
        if isinstance(node, cst.Name):
            return [], node
        pre, place = self.value(node)
        if not (isinstance(place, cst.Subscript) and isinstance(place.value, cst.Name)):
            raise self.fail("you can assign to a name or to an element of an array", node)
        return pre, place

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression, origin) -> list[Stmt]:
        """`target = value`, with tuples scalarized and conditional expressions already hoisted."""
        if isinstance(target, cst.Name) and isinstance(value, cst.Tuple):
            names = self.tuple_variable(target.value, len(value.elements), origin)
            return self.unpack([cst.Name(n) for n in names], value, origin)
        if isinstance(target, cst.Name) and target.value in self.tuples:
            raise self.fail(
                f"`{target.value}` holds a tuple elsewhere; here it is given a single value",
                origin,
                "Use another name for the single value.",
            )
        return [Assign(target, unparen(value), None, origin)]

    def tuple_variable(self, name: str, length: int, origin) -> tuple[str, ...]:
        """The element variables of tuple variable `name`, made on its first assignment."""
        names = self.tuples.get(name)
        if names is None:
            names = self.tuples[name] = tuple(self.namer.fresh(f"{name}_{k}") for k in range(length))
        if len(names) != length:
            raise self.fail(
                f"`{name}` holds a tuple of {len(names)} elsewhere and of {length} here",
                origin,
                "Use another name for a tuple of another length.",
            )
        return names

    def unpack(self, targets: list[cst.BaseExpression], value: cst.BaseExpression, origin) -> list[Stmt]:
        """`a, b = value`: a tuple of values, a shape (`n, m = A.shape`), or a tuple a function returned."""
        if _is_shape(value):
            items = [cst.parse_expression(f"{code(value)}[{k}]") for k in range(len(targets))]
            value = cst.Tuple([cst.Element(i) for i in items])
        if not isinstance(value, cst.Tuple):
            raise self.fail(
                f"this unpacks {len(targets)} names from a value that is not a tuple",
                origin,
                "Unpack a tuple, a shape (`n, m = A.shape`) or the tuple a function returns.",
            )
        values = [e.value for e in value.elements]
        if len(values) != len(targets):
            raise self.fail(f"{len(targets)} names on the left but {len(values)} values on the right", origin)
        pre: list[Stmt] = []
        places: list[cst.BaseExpression] = []
        for target in targets:
            before, place = self.target(target)
            pre += before
            places.append(place)
        return pre + self.parallel(places, values, origin)

    def parallel(self, targets: list[cst.BaseExpression], values: list[cst.BaseExpression], origin) -> list[Stmt]:
        """Assign `values` to `targets` as one tuple assignment does: every value is read before any
        target is written, then the targets are written left to right. A permutation of names is a
        `Permute` (its inverse is known, so reverse mode records nothing for it)."""
        names = [t.value for t in targets if isinstance(t, cst.Name)]
        sources = [v.value for v in values if isinstance(v, cst.Name)]
        if len(names) == len(targets) == len(sources) == len(set(names)) and set(names) == set(sources):
            pairs = [(t, s) for t, s in zip(names, sources, strict=True) if t != s]
            if not pairs:
                return []
            return [Permute(tuple(t for t, _ in pairs), tuple(s for _, s in pairs), origin)]
        saved: list[Stmt] = []
        final: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        for k, (target, value) in enumerate(zip(targets, values, strict=True)):
            if names_in(value) & {_var(t) for t in targets[:k]}:  # an earlier target would change it
                temp = cst.Name(self.namer.fresh("new"))
                saved += self.assign(temp, value, origin)
                value = self.name(temp) if temp.value in self.tuples else temp
            final.append((target, value))
        out = saved
        for target, value in final:
            out += self.assign(target, value, origin)
        return out

    def augmented(self, small: cst.AugAssign) -> list[Stmt]:
        """`a += e` as an accumulation or an assignment; on a whole name it is marked `inplace`
        (an array is updated in its memory: `inplace.py`, once kinds say which names hold arrays)."""
        pre_target, target = self.target(small.target)
        pre, value = self.value(small.value)
        var = _var(target)
        inplace = isinstance(target, cst.Name)
        where = self.parsed.locate(small) if inplace else None
        if var in self.tuples:
            raise self.fail(f"`{var}` holds a tuple; augmented assignment needs a number or an array", small)
        if assigned_names(tuple(pre)) & names_in(target):
            # a function called on the right writes the array being updated: Python read the old
            # element first, so save it before the call
            old = cst.Name(self.namer.fresh("before"))
            operator = _AUG_TO_BINARY[type(small.operator)]()
            saved = Assign(old, target, None, small)
            return (
                pre_target
                + [saved]
                + pre
                + [Assign(target, cst.BinaryOperation(old, operator, paren(value)), None, small, inplace, where=where)]
            )
        if isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)) and var not in names_in(value):
            sign = "+" if isinstance(small.operator, cst.AddAssign) else "-"
            return pre_target + pre + [Assign(target, value, sign, small, inplace, where=where)]
        operator = _AUG_TO_BINARY[type(small.operator)]()
        updated = cst.BinaryOperation(target, operator, paren(value))
        return pre_target + pre + [Assign(target, updated, None, small, inplace, where=where)]

    def loop(self, stmt: cst.For) -> list[Stmt]:
        call = stmt.iter
        key = canonical_call(call.func, self.parsed.globals) if isinstance(call, cst.Call) else None
        if key not in ("range", "prange"):
            return self.array_loop(stmt, key)
        pre, args = self.sequence([a.value for a in call.args])  # type: ignore[attr-defined]
        if len(args) == 1:
            args = [cst.Integer("0"), args[0]]
        if len(args) == 2:
            args.append(cst.Integer("1"))
        body = self.block(list(stmt.body.body))  # type: ignore[attr-defined]
        self.current = stmt
        hoisted: list[Stmt] = []
        written_inside = assigned_names(tuple(body))
        for k, (role, bound) in enumerate(zip(("start", "stop", "step"), args, strict=True)):
            if names_in(bound) & written_inside:
                fresh = self.namer.fresh(role)
                hoisted.append(Assign(cst.Name(fresh), bound, None, stmt.iter))
                args[k] = cst.Name(fresh)
        var = stmt.target.value  # type: ignore[union-attr]
        return pre + hoisted + [For(var, args[0], args[1], args[2], tuple(body), key == "prange", stmt)]

    def array_loop(self, stmt: cst.For, key: str | None) -> list[Stmt]:
        """`for v in x` is `for i in range(len(x)): v = x[i]` (an element, or a row of a 2-D x), `enumerate(x)`
        names the index, `zip(x, y)` runs to the shorter array, an iterated expression is computed first."""
        target, it = stmt.target, stmt.iter
        index: cst.Name | None = None
        if key == "enumerate":
            index = target.elements[0].value  # type: ignore[union-attr, assignment]
            target, it = target.elements[1].value, it.args[0].value  # type: ignore[union-attr, attr-defined]
            key = canonical_call(it.func, self.parsed.globals) if isinstance(it, cst.Call) else None
        if key == "zip":
            arrays = [a.value for a in it.args if a.keyword is None]  # type: ignore[attr-defined]  (strict=False)
            pairs = [(e.value, a) for e, a in zip(target.elements, arrays, strict=True)]  # type: ignore[union-attr]
        else:
            pairs = [(target, it)]
        before: list[cst.BaseStatement] = []
        sequences = []
        for _, sequence in pairs:
            if not isinstance(sequence, cst.Name):
                name = cst.Name(self.namer.fresh("seq"))
                before.append(_statement(cst.Assign([cst.AssignTarget(name)], sequence)))
                sequence = name
            sequences.append(sequence)
        index = index or cst.Name(self.namer.fresh("k"))
        lengths = [cst.Call(cst.Name("len"), [cst.Arg(s)]) for s in sequences]
        stop = lengths[0] if len(lengths) == 1 else cst.Call(cst.Name("min"), [cst.Arg(n) for n in lengths])
        elements = [
            _statement(cst.Assign([cst.AssignTarget(name)], cst.Subscript(s, [cst.SubscriptElement(cst.Index(index))])))
            for (name, _), s in zip(pairs, sequences, strict=True)
        ]
        body = stmt.body.with_changes(body=[*elements, *stmt.body.body])  # type: ignore[attr-defined]
        loop = stmt.with_changes(target=index, iter=cst.Call(cst.Name("range"), [cst.Arg(stop)]), body=body)
        return from_loop(self.block(before) + self.loop(loop), {s.body[0] for s in (*before, *elements)}, stmt)

    # --- expressions, in Python's evaluation order ----------------------------------------------

    def value(self, node: cst.BaseExpression, result_used: bool = True) -> Flat:
        """The statements that must run before `node` (inlined calls, hoisted conditional
        expressions) and `node` in core form, reading their results."""
        return self.flat(_one_line(node), result_used)

    def sequence(self, nodes: list[cst.BaseExpression]) -> tuple[list[Stmt], list[cst.BaseExpression]]:
        """Several values evaluated left to right: a value that a later one's statements may
        change (an array a later call writes) is saved before those statements run."""
        flats = [self.flat(n) for n in nodes]
        pre: list[Stmt] = []
        values: list[cst.BaseExpression] = []
        for k, (before, value) in enumerate(flats):
            pre += before
            later = assigned_names(tuple(s for b, _ in flats[k + 1 :] for s in b))
            if names_in(value) & later and not isinstance(value, cst.Name):
                # Python holds a name's array by reference (a later write is seen through it), an
                # element by value and a row or slice as a view: a plain assignment does the same;
                # a computed value is computed now (snapshot copies an array result)
                saved = cst.Name(self.namer.fresh("before"))
                now = value if isinstance(value, cst.Subscript) else cst.Call(cst.Name("snapshot"), [cst.Arg(value)])
                pre.append(Assign(saved, now, None, self.current))
                value = saved
            values.append(value)
        return pre, values

    def flat(self, node: cst.BaseExpression, result_used: bool = True) -> Flat:
        if isinstance(node, (cst.Integer, cst.Float)):
            return [], node
        if isinstance(node, cst.Name):
            return [], self.name(node)
        if isinstance(node, cst.IfExp):
            name = cst.Name(self.namer.fresh("choice"))
            return self.conditional(name, node), name
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.Call):
            return self.call(node, result_used)
        if isinstance(node, cst.Tuple):
            pre, values = self.sequence([e.value for e in node.elements])
            return pre, cst.Tuple([cst.Element(v) for v in values])
        if isinstance(node, cst.BinaryOperation):
            pre, (left, right) = self.sequence([node.left, node.right])
            return pre, node.with_changes(left=left, right=right)
        if isinstance(node, cst.UnaryOperation):
            pre, operand = self.flat(node.expression)
            return pre, node.with_changes(expression=operand)
        if isinstance(node, cst.Comparison):
            pre, values = self.sequence([node.left, *(c.comparator for c in node.comparisons)])
            comparisons = [c.with_changes(comparator=v) for c, v in zip(node.comparisons, values[1:], strict=True)]
            return pre, node.with_changes(left=values[0], comparisons=comparisons)
        if isinstance(node, cst.BooleanOperation):
            return self.boolean(node)
        raise self.fail(f"unsupported expression: {type(node).__name__}", node)

    def conditional(self, target: cst.BaseExpression, node: cst.IfExp) -> list[Stmt]:
        """`target = a if c else b` as an if statement: only the chosen branch runs."""
        pre, test = self.flat(node.test)
        then_pre, then = self.flat(node.body)
        else_pre, orelse = self.flat(node.orelse)
        then_stmts = then_pre + self.assign(target, then, node)
        else_stmts = else_pre + self.assign(target, orelse, node)
        return pre + [If(test, tuple(then_stmts), tuple(else_stmts), node)]

    def boolean(self, node: cst.BooleanOperation) -> Flat:
        """`a and b` / `a or b`; when `b` needs statements first, they run only when Python would
        evaluate `b` (an if statement setting a flag)."""
        pre, left = self.flat(node.left)
        right_pre, right = self.flat(node.right)
        if not right_pre:
            return pre, node.with_changes(left=left, right=right)
        flag = cst.Name(self.namer.fresh("both" if isinstance(node.operator, cst.And) else "either"))
        test = flag if isinstance(node.operator, cst.And) else cst.UnaryOperation(cst.Not(), flag)
        run_right = If(test, tuple(right_pre + [Assign(flag, right, None, node)]), (), node)
        return pre + [Assign(flag, left, None, node), run_right], flag

    def name(self, node: cst.Name) -> cst.BaseExpression:
        elements = self.tuples.get(node.value)
        if elements is not None:
            return cst.Tuple([cst.Element(cst.Name(n)) for n in elements])
        if node.value in self.locals or node.value in ("True", "False"):
            return node
        value = lookup(node, self.parsed.globals)
        if is_frozen_constant(value):
            self.constants[node.value] = value
        return node

    def attribute(self, node: cst.Attribute) -> Flat:
        value = lookup(node, self.parsed.globals) if not _rooted_at(node, self.locals) else None
        if is_frozen_constant(value):
            return [], constant_node(value)  # math.pi, np.inf, cfg.N: frozen, as numba freezes them
        pre, owner = self.flat(node.value)
        kind = ATTRIBUTES[node.attr.value]
        if kind == "np.transpose":  # x.T is np.transpose(x): one primitive for both spellings
            return pre, cst.Call(canonical_func_node(kind), [cst.Arg(owner)])
        return pre, node.with_changes(value=owner)

    def subscript(self, node: cst.Subscript) -> Flat:
        pre, base = self.flat(node.value)
        if not isinstance(base, (cst.Name, cst.Tuple, cst.Subscript)) and not _is_shape(base):
            temp = cst.Name(self.namer.fresh("part"))  # (A @ x)[0]: the value first, then its element
            pre.append(Assign(temp, unparen(base), None, self.current))
            base = temp
        if any(not isinstance(e.slice, cst.Slice) and _is_new_axis(e.slice.value, self.parsed) for e in node.slice):
            before, reshaped = self.new_axes(base, node)
            return pre + before, reshaped
        parts: list[cst.BaseExpression] = []
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                parts += [p for p in (element.slice.lower, element.slice.upper, element.slice.step) if p is not None]
            else:
                parts.append(element.slice.value)
        before, values = self.sequence(parts)
        pre += before
        it = iter(values)
        elements = []
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                s = element.slice
                s = s.with_changes(
                    lower=next(it) if s.lower is not None else None,
                    upper=next(it) if s.upper is not None else None,
                    step=next(it) if s.step is not None else None,
                )
                elements.append(element.with_changes(slice=s))
            else:
                elements.append(element.with_changes(slice=element.slice.with_changes(value=next(it))))
        if isinstance(base, cst.Tuple):  # p[0] of a tuple: that element
            return pre, self.tuple_element(base, elements, node)
        if isinstance(base, cst.Subscript) and not _has_slices(base) and isinstance(base.value, cst.Name):
            # A[i][j] is A[i, j] (a row indexed again), so a row passed to a function stays an element of A
            merged = [*base.slice[:-1], base.slice[-1].with_changes(comma=_COMMA), *elements]
            return pre, base.with_changes(slice=merged)
        if not isinstance(base, cst.Name) and not _is_shape(base):
            raise self.fail(
                "only a named array can be indexed here",
                node,
                "Assign the value to a variable first, then index it: `y = A @ x; y[0]`.",
            )
        return pre, node.with_changes(value=base, slice=elements)

    def new_axes(self, base: cst.BaseExpression, node: cst.Subscript) -> Flat:
        """`x[:, None]` is `np.reshape(x, (x.shape[0], 1))`: a 1 for each new axis, the sizes of x
        for the full slices (the fence allows nothing else beside new axes)."""
        pre = []
        if not isinstance(base, cst.Name):  # A[i][:, None]: the row first
            temp = cst.Name(self.namer.fresh("part"))
            pre.append(Assign(temp, base, None, self.current))
            base = temp
        sizes, axis = [], 0
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                sizes.append(cst.parse_expression(f"{base.value}.shape[{axis}]"))
                axis += 1
            else:
                sizes.append(cst.Integer("1"))
        shape = cst.Tuple([cst.Element(size) for size in sizes])
        return pre, cst.Call(canonical_func_node("np.reshape"), [cst.Arg(base), cst.Arg(shape)])

    def tuple_element(self, base: cst.Tuple, elements, node) -> cst.BaseExpression:
        if len(elements) != 1 or isinstance(elements[0].slice, cst.Slice):
            raise self.fail("a tuple is indexed with one integer", node, "Write p[0], p[1], ...")
        index = elements[0].slice.value
        from ..rules import literal

        k = literal(index)
        if not isinstance(k, int) or isinstance(k, bool) or not -len(base.elements) <= k < len(base.elements):
            raise self.fail(
                f"a tuple of {len(base.elements)} is indexed with a constant here",
                node,
                f"Index it with 0 to {len(base.elements) - 1}; unpack it with `a, b = p`.",
            )
        return base.elements[k].value

    def call(self, node: cst.Call, result_used: bool = True) -> Flat:
        func = user_function(node.func, self.parsed.globals)
        if func is not None:
            body, ret = self.inline(func, node)
            if not ret.values:
                if result_used:
                    raise self.fail(f"{func.__name__} returns nothing; its result is used here", node)
                return body, cst.Name("None")
            if ret.is_tuple:
                return body, cst.Tuple([cst.Element(v) for v in ret.values])
            return body, ret.values[0]
        key = canonical_call(node.func, self.parsed.globals)
        if key is None:  # a method: x.sum(axis=1) is np.sum(x, axis=1)
            method = METHOD_TABLE[node.func.attr.value]  # type: ignore[attr-defined]
            receiver = node.func.value  # type: ignore[attr-defined]
            args = [cst.Arg(receiver), *node.args]
            bound = bind(method.signature, args, method.name, node, lambda e: True)
            key = method.primitive
            if bound.collected:  # x.reshape(2, 3) -> np.reshape(x, (2, 3))
                shape = cst.Tuple([cst.Element(e) for e in bound.collected])
                bound = Bound({**bound.args, "newshape": shape})
        else:
            prim = primitive(key)
            bound = bind(prim.signature, list(node.args), key, node, lambda e: True)  # type: ignore[union-attr]
        if key.startswith("custom."):
            self.custom.add(key)
        return self.primitive_call(key, bound, node)

    def primitive_call(self, key: str, bound: Bound, node: cst.Call) -> Flat:
        """The canonical call: required arguments by position, optional ones by keyword, in the
        order of the signature, each in Python's evaluation order."""
        prim = primitive(key)
        assert prim is not None
        if prim.variadic:
            pre, operands = self.sequence(list(bound.operands))
            folded = operands[0]
            for operand in operands[1:]:  # max(a, b, c) is max(max(a, b), c): the first maximum wins
                folded = cst.Call(canonical_func_node(key), [cst.Arg(folded), cst.Arg(operand)])
            return pre, folded
        if "keepdims" in bound.args:
            return self.keep_dims(key, bound, node)
        params = [p for p in prim.signature.params if p.name in bound.args]
        pre, values = self.sequence([bound.args[p.name] for p in params])
        if key == "len" and isinstance(values[0], cst.Tuple):
            return pre, cst.Integer(str(len(values[0].elements)))
        args = []
        for p, value in zip(params, values, strict=True):
            if p.name == "dtype":
                value = self.dtype(value, node)
            if p.required:
                args.append(cst.Arg(value))
            else:
                args.append(cst.Arg(value, keyword=cst.Name(p.name), equal=_EQUAL))
        call = cst.Call(canonical_func_node(key), args)
        lowers = prim.lower is not None and prim.lower(Bound(dict(zip((p.name for p in params), values, strict=True))))
        if lowers is not None and lowers is not False:  # then again, with operands read twice bound first
            values = [self.lowered_operand(v, pre) if p.required else v for p, v in zip(params, values, strict=True)]
            lowered = prim.lower(Bound({p.name: v for p, v in zip(params, values, strict=True)}))
            if lowered is not None:  # parenthesized: it stands where a call stood (`np.mean(a, axis=0) ** 2`)
                return pre, paren(lowered)
        return pre, call

    def lowered_operand(self, value: cst.BaseExpression, pre: list[Stmt]) -> cst.BaseExpression:
        """An operand of a call that normalize rewrites (np.var(a) reads a twice): a temporary unless
        it is cheap to read again."""
        if is_cheap(value):
            return value
        temp = cst.Name(self.namer.fresh("operand"))
        pre.append(Assign(temp, unparen(value), None, self.current))
        return temp

    def keep_dims(self, key: str, bound: Bound, node: cst.Call) -> Flat:
        """`np.sum(a, axis=k, keepdims=True)` is `np.expand_dims(np.sum(a, axis=k), k)`."""
        from ..rules import literal

        keep = literal(bound.args["keepdims"])
        inner = Bound({k: v for k, v in bound.args.items() if k != "keepdims"})
        if keep is False:
            return self.primitive_call(key, inner, node)
        axis = inner.args.get("axis")
        if keep is not True or axis is None or not isinstance(literal(axis), int):
            raise self.fail(
                "keepdims=True is supported with an integer axis=... here",
                node,
                "Without an axis the result is a number: use it as it is.",
            )
        pre, value = self.primitive_call(key, inner, node)
        return pre, cst.Call(canonical_func_node("np.expand_dims"), [cst.Arg(value), cst.Arg(axis)])

    def dtype(self, value: cst.BaseExpression, node) -> cst.BaseExpression:
        canonical = dtype_name(value, self.parsed.globals)
        if canonical is None and not is_literal(value):
            raise self.fail("dtype= must be np.float64, np.int64 or np.bool_ here", node)
        return cst.parse_expression(canonical) if canonical else value

    # --- calls to user functions ---------------------------------------------------------------

    def inline(self, func, call: cst.Call) -> tuple[list[Stmt], Return]:
        """The body of a user function, its names made fresh, its parameters bound to the arguments.

        We inline rather than emit the callee beside the caller: activity and the tape then see
        through the call, and numba compiles one function with no tape passed between functions.
        The arguments are evaluated first, left to right, as Python does.
        """
        if func in self.callers or func is _function_of(self.parsed):
            raise self.fail(
                f"recursive call to {func.__name__}", call, "sourcead inlines calls; write the recursion as a loop."
            )
        callee = parse_function(func)
        fence(callee, callee=True)
        params = list(callee.node.params.params)
        names = [p.name.value for p in params]
        try:
            bound = bind(_signature_of(callee.node), list(call.args), func.__name__, call, lambda e: True)
        except Exception as exc:  # BindError: say it at the call
            raise self.fail(str(exc), call, f"{func.__name__} takes ({', '.join(names)}).") from None
        given = [p for p in params if p.name.value in bound.args]
        pre, values = self.sequence([bound.args[p.name.value] for p in given])
        supplied = dict(zip((p.name.value for p in given), values, strict=True))
        reassigned = assigned_in(callee.node.body)
        writes_arrays = writes_elements(callee.node.body)
        updated = updated_in_place(callee.node.body, names, supplied)
        mapping: dict[str, cst.BaseExpression] = {}
        for param in params:
            name = param.name.value
            arg = supplied.get(name, param.default)
            if arg is None:  # fenced: a parameter without default that the call did not pass
                raise self.fail(f"{func.__name__} needs its argument `{name}`", call)
            writes = writes_arrays or isinstance(arg, cst.Subscript) and base_name(arg) in updated  # `h(A[0], A)`
            if name not in reassigned and is_place(arg, reassigned, writes):
                mapping[name] = arg  # the caller's variable, element or tuple itself (arrays by reference)
            elif is_shared(arg):  # the caller's value, array or row: `inplace.py` decides which
                mapping[name] = fresh = cst.Name(self.namer.fresh(f"{func.__name__}_{name}"))
                pre.append(Assign(fresh, arg, None, call, shares=name, where=self.parsed.locate(call)))
            else:
                fresh = self.namer.fresh(f"{func.__name__}_{name}")
                pre += self.assign(cst.Name(fresh), arg, call)
                mapping[name] = self.name(cst.Name(fresh))  # a tuple parameter: the tuple of its elements
        for local in sorted(local_names(callee.node) - set(names)):
            mapping[local] = cst.Name(self.namer.fresh(f"{func.__name__}_{local}"))
        renamed = callee.node.visit(Rename(mapping))
        positions = {**callee.positions, **carried_positions(callee.node, renamed, callee.positions)}
        inner = self.parsed.adopt(replace(callee, node=renamed, positions=positions))  # later errors locate its nodes
        core = Normalizer(inner, self.namer, (*self.callers, _function_of(self.parsed))).function()
        for name, value in core.constants:
            if not _same_constant(self.constants.get(name, value), value):
                raise self.fail(f"global `{name}` has different values in the caller and in {func.__name__}", call)
            self.constants[name] = value
        self.custom.update(core.custom)
        return pre + list(core.body), core.ret


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _one_line(node: cst.BaseExpression) -> cst.BaseExpression:
    """An expression the user wrapped over several lines (inside brackets), on one line: generated
    statements are one line each. Comments inside it are dropped."""
    text = code(node)
    if "\n" not in text:
        return node
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    joined = re.sub(r"([(\[])\s+", r"\1", " ".join(part for part in lines if part))
    return cst.parse_expression(re.sub(r"\s+([)\]])", r"\1", joined).replace(",)", ")"))


def _signature_of(node: cst.FunctionDef):
    from ..rules import Signature

    parts = [p.name.value if p.default is None else f"{p.name.value}=" for p in node.params.params]
    return Signature.parse(", ".join(parts))


def _function_of(parsed: ParsedFunction):
    """The function object of a parsed function, found by name in its globals (for recursion checks)."""
    obj = parsed.globals.get(parsed.name)
    return unwrap(obj) if obj is not None else None


def _var(target: cst.BaseExpression) -> str:
    node = target.value if isinstance(target, cst.Subscript) else target
    return node.value  # type: ignore[union-attr]


def _has_slices(node: cst.Subscript) -> bool:
    return any(isinstance(e.slice, cst.Slice) for e in node.slice)


def _is_shape(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "shape"


def _rooted_at(node: cst.Attribute, names: set[str]) -> bool:
    root: cst.BaseExpression = node
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in names


def _copies(statements: list[Stmt]) -> list[Stmt]:
    """The same statements as new objects (passes key their tables by statement)."""
    out: list[Stmt] = []
    for s in statements:
        if isinstance(s, If):
            out.append(replace(s, body=tuple(_copies(list(s.body))), orelse=tuple(_copies(list(s.orelse)))))
        elif isinstance(s, (For, While)):
            out.append(replace(s, body=tuple(_copies(list(s.body)))))
        else:
            out.append(replace(s))
    return out


def _same_loop(body):
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from _same_loop(stmt.body)
            yield from _same_loop(stmt.orelse)


def _statement(small: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([small])


def _is_new_axis(node: cst.BaseExpression, parsed: ParsedFunction) -> bool:
    from .fence import is_numpy

    if isinstance(node, cst.Name):
        return node.value == "None"
    return isinstance(node, cst.Attribute) and node.attr.value == "newaxis" and is_numpy(node.value, parsed)


def _same_constant(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b
