"""Part of the pass `normalize` (see `normalize.py`): statements.

Decides the core statements of each user statement: `if`/`elif` chains, `while` loops whose test
needs statements (recomputed into a flag at the end of each iteration), `for` loops over `range`
with explicit start and step and their bounds hoisted when the body reassigns them, loops over
arrays, `enumerate` and `zip` as index loops; assignments with tuples scalarized (`p = (a, b)`
gives `p_0`, `p_1`), `a, b = b, a` as a `Permute`, other tuple assignments through fresh
variables where a target is read by a later value; `a += e` as an accumulation or an assignment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from ..ir.core import Assign, Break, Continue, Exit, For, If, Permute, Stmt, While, assigned_names
from ..ir.exprs import code, dotted, is_number, names_in, paren, transformed, unparen
from ..rules import primitive
from .aliases import from_loop
from .masks import mask_index, masked_write
from .normalize_calls import Calls
from .normalize_expressions import _is_shape, _one_line
from .resolve import canonical_call

_AUG_TO_BINARY: dict[type[cst.BaseAugOp], Callable[[], cst.BaseBinaryOp]] = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.PowerAssign: cst.Power,
}


class Statements(Calls):
    """Statements: blocks, branches, loops and assignments in core form."""

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
        body = self.block(stmt.body.body)
        self.current = stmt
        orelse: list[Stmt] = []
        if isinstance(stmt.orelse, cst.If):  # elif: its test runs only when this one is false
            orelse = self.branch(stmt.orelse)
        elif isinstance(stmt.orelse, cst.Else):
            orelse = self.block(stmt.orelse.body.body)
        return pre + [If(test, tuple(body), tuple(orelse), stmt)]

    def while_loop(self, stmt: cst.While) -> list[Stmt]:
        """`while test:`; a test that needs statements first (a call, a conditional expression) is
        computed into a flag before the loop and again at the end of every iteration."""
        pre, test = self.value(stmt.test)
        body = self.block(stmt.body.body)
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
        if isinstance(small, cst.Assign) and len(small.targets) > 1:
            return self.chained([t.target for t in small.targets], small)
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

    def chained(self, targets: list[cst.BaseExpression], origin: cst.Assign) -> list[Stmt]:
        """`a = b = value`, as Python runs it: the value once, then each target from left to right.
        A name or a number is given to each target; anything else to the first target when it is a
        name, which the others then read (`a = b = np.zeros(n)` is one array with two names: `b = a`,
        a view, which the alias passes follow or refuse), else to a temporary first."""
        pre, value = self.value(origin.value)
        if isinstance(value, cst.Tuple):
            raise self.fail(
                "chained assignment of a tuple is not supported", origin, "Assign each name on its own line."
            )
        out = list(pre)
        simple = isinstance(value, cst.Name) or is_number(value)
        if not simple and not isinstance(targets[0], cst.Name) and not names_in(value) & _written(targets):
            # elements or slices only, and the value reads none of them (NPBench's correlation:
            # `corr[i + 1:m, i] = corr[i, i + 1:m] = d[:, i] @ d[:, i + 1:m]`): the value is computed
            # for each target, since a temporary array whose shape changes from one iteration to
            # the next is what reverse mode cannot size yet
            simple = True
        if not simple and not isinstance(targets[0], cst.Name):
            holder = cst.Name(self.namer.fresh("chained"))
            out += self.assign(holder, value, origin)
            value, simple = holder, True
        for target in targets:
            pre_target, place = self.target(target)
            out += pre_target + self.assign(place, value, origin)
            if not simple:  # the first target, a name, holds the value
                value, simple = place, True
        return out

    def target(self, node: cst.BaseExpression) -> tuple[list[Stmt], cst.Name | cst.Subscript]:
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
        assert isinstance(target, (cst.Name, cst.Subscript))  # a place (`target`)
        mask = mask_index(target, self.parsed.globals)
        if mask is not None:  # `x[x > 1.0] = v`: masks.py
            assert isinstance(target, cst.Subscript)
            return [masked_write(target, mask, unparen(value), unparen(value), origin, self.parsed.locate(origin))]
        pre, value = self.kept_apart(unparen(value), origin)
        return [*pre, Assign(target, value, None, origin)]

    def kept_apart(self, value: cst.BaseExpression, origin) -> tuple[list[Stmt], cst.BaseExpression]:
        """`value` with each call of a primitive declared `kept` (a factorisation) inside it bound
        to a temporary first, whose value the reverse sweep reads (reverse/held.py); a call that
        is the whole value is assigned as it is."""
        if not isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Call)):
            return [], value
        pre: list[Stmt] = []
        namer = self.namer

        class Keep(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                prim = primitive(dotted(updated.func))
                if original is value or prim is None or not prim.kept:
                    return updated
                temp = cst.Name(namer.fresh("kept"))
                pre.append(Assign(temp, updated, None, origin))
                return temp

        return pre, transformed(value, Keep())

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
        mask = mask_index(target, self.parsed.globals)
        if mask is not None:  # `x[x > 1.0] *= v`: masks.py
            assert isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
            if assigned_names(tuple(pre)) & {var}:
                raise self.fail(
                    f"a function called on the right writes `{var}`, which this updates through a mask",
                    small,
                    "Call the function on its own line first.",
                )
            new = cst.BinaryOperation(target.value, _AUG_TO_BINARY[type(small.operator)](), paren(value))
            return pre_target + pre + [masked_write(target, mask, new, value, small, self.parsed.locate(small))]
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
        body = self.block(list(stmt.body.body))
        self.current = stmt
        hoisted: list[Stmt] = []
        written_inside = assigned_names(tuple(body))
        for k, (role, bound) in enumerate(zip(("start", "stop", "step"), args, strict=True)):
            if names_in(bound) & written_inside:
                fresh = self.namer.fresh(role)
                hoisted.append(Assign(cst.Name(fresh), bound, None, stmt.iter))
                args[k] = cst.Name(fresh)
        assert isinstance(stmt.target, cst.Name)  # fenced: `for i in range(...)`
        var = stmt.target.value
        return pre + hoisted + [For(var, args[0], args[1], args[2], tuple(body), key == "prange", stmt)]

    def array_loop(self, stmt: cst.For, key: str | None) -> list[Stmt]:
        """`for v in x` is `for i in range(len(x)): v = x[i]` (an element, or a row of a 2-D x), `enumerate(x)`
        names the index, `zip(x, y)` runs to the shorter array, an iterated expression is computed first."""
        target: cst.BaseExpression = stmt.target
        it: cst.BaseExpression = stmt.iter
        index: cst.Name | None = None
        if key == "enumerate":
            assert isinstance(target, cst.Tuple) and isinstance(it, cst.Call)  # fenced: `for i, v in enumerate(x)`
            index = cst.ensure_type(target.elements[0].value, cst.Name)
            target, it = target.elements[1].value, it.args[0].value
            key = canonical_call(it.func, self.parsed.globals) if isinstance(it, cst.Call) else None
        if key == "zip":
            assert isinstance(target, cst.Tuple) and isinstance(it, cst.Call)  # fenced: `for a, b in zip(x, y)`
            arrays = [a.value for a in it.args if a.keyword is None]  # (strict=False)
            pairs = [(e.value, a) for e, a in zip(target.elements, arrays, strict=True)]
        else:
            pairs = [(target, it)]
        before: list[cst.SimpleStatementLine] = []
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
            _statement(
                cst.Assign([cst.AssignTarget(_named(name))], cst.Subscript(s, [cst.SubscriptElement(cst.Index(index))]))
            )
            for (name, _), s in zip(pairs, sequences, strict=True)
        ]
        body = stmt.body.with_changes(body=[*elements, *stmt.body.body])
        loop = stmt.with_changes(target=index, iter=cst.Call(cst.Name("range"), [cst.Arg(stop)]), body=body)
        return from_loop(self.block(before) + self.loop(loop), {s.body[0] for s in (*before, *elements)}, stmt)


def _named(target: cst.BaseExpression) -> cst.Name:
    """A loop's element variable: a single name (fenced)."""
    return cst.ensure_type(target, cst.Name)


def _var(target: cst.BaseExpression) -> str:
    node = target.value if isinstance(target, cst.Subscript) else target
    assert isinstance(node, cst.Name)  # a place: a name, or an element of a named array
    return node.value


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


def _written(targets: list[cst.BaseExpression]) -> set[str]:
    """The variables that assigning to `targets` writes: names, and the arrays of elements."""
    found = set()
    for target in targets:
        while isinstance(target, cst.Subscript):
            target = target.value
        if isinstance(target, cst.Name):
            found.add(target.value)
    return found
