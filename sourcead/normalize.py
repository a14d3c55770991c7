"""Pass 3, normalize: the fenced libcst function becomes the core form (`sourcead.core`).

- calls are rewritten to canonical names (`sin(x)` with `from math import sin` -> `math.sin(x)`);
- `a += e` stays an explicit accumulation when `e` does not read `a`, else becomes `a = a + (e)`;
  `*=`, `/=` and `**=` become plain assignments;
- `range(n)` gets explicit start and step; loop bounds that the loop body reassigns are hoisted
  into fresh variables, so the reversed loop can re-read them;
- the returned expressions are bound to variables (`result`, `result0`, ...) unless they are
  names or numbers already.
"""

from __future__ import annotations

import libcst as cst

from .core import Assign, CoreFunction, For, Return, Stmt
from .exprs import is_number, names_in, number, paren
from .fence import local_names
from .naming import Namer
from .parse import ParsedFunction
from .resolve import canonical_call, canonical_func_node, is_frozen_constant, lookup

_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.PowerAssign: cst.Power,
}


def normalize(parsed: ParsedFunction, namer: Namer) -> CoreFunction:
    return Normalizer(parsed, namer).function()


class Normalizer:
    def __init__(self, parsed: ParsedFunction, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.params = tuple(p.name.value for p in parsed.node.params.params)
        self.constants: dict[str, object] = {}
        self.locals = local_names(parsed.node)

    def function(self) -> CoreFunction:
        statements = list(self.parsed.node.body.body)  # type: ignore[union-attr]
        *body, last = statements
        returned = last.body[-1]  # type: ignore[union-attr]
        core_body = self.block(body) + self.block_line(last.body[:-1])  # type: ignore[union-attr]
        bindings, ret = self.ret(returned)
        return CoreFunction(
            name=self.parsed.name,
            params=self.params,
            body=tuple(core_body + bindings),
            ret=ret,
            constants=tuple(sorted(self.constants.items())),
        )

    def block(self, statements: list[cst.BaseStatement]) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in statements:
            if isinstance(stmt, cst.For):
                out += self.loop(stmt)
            else:
                out += self.block_line(stmt.body)  # type: ignore[attr-defined]
        return out

    def block_line(self, smalls) -> list[Stmt]:
        out: list[Stmt] = []
        for small in smalls:
            if isinstance(small, cst.Assign):
                out.append(Assign(self.expr(small.targets[0].target), self.expr(small.value), None, small))
            elif isinstance(small, cst.AugAssign):
                out.append(self.augmented(small))
        return out

    def augmented(self, small: cst.AugAssign) -> Assign:
        target = self.expr(small.target)
        value = self.expr(small.value)
        var = target.value.value if isinstance(target, cst.Subscript) else target.value  # type: ignore[union-attr]
        if isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)) and var not in names_in(value):
            sign = "+" if isinstance(small.operator, cst.AddAssign) else "-"
            return Assign(target, value, sign, small)
        operator = _AUG_TO_BINARY[type(small.operator)]()
        return Assign(target, cst.BinaryOperation(target, operator, paren(value)), None, small)

    def loop(self, stmt: cst.For) -> list[Stmt]:
        call = stmt.iter
        key = canonical_call(call.func, self.parsed.globals)  # type: ignore[attr-defined]
        args = [self.expr(a.value) for a in call.args]  # type: ignore[attr-defined]
        if len(args) == 1:
            args = [cst.Integer("0"), args[0]]
        if len(args) == 2:
            args.append(cst.Integer("1"))
        body = self.block(list(stmt.body.body))  # type: ignore[attr-defined]
        hoisted: list[Stmt] = []
        written = {s.var for s in body} | _loop_writes(body)
        for k, (role, bound) in enumerate(zip(("start", "stop", "step"), args, strict=True)):
            if names_in(bound) & written:
                fresh = self.namer.fresh(role)
                hoisted.append(Assign(cst.Name(fresh), bound, None, stmt.iter))
                args[k] = cst.Name(fresh)
        var = stmt.target.value  # type: ignore[union-attr]
        return hoisted + [For(var, args[0], args[1], args[2], tuple(body), key == "prange", stmt)]

    def ret(self, node: cst.Return) -> tuple[list[Stmt], Return]:
        value = node.value
        is_tuple = isinstance(value, cst.Tuple)
        items = [e.value for e in value.elements] if is_tuple else [value]  # type: ignore[union-attr]
        bindings: list[Stmt] = []
        values: list[cst.BaseExpression] = []
        for k, item in enumerate(items):
            item = self.expr(item)
            if isinstance(item, cst.Name) or is_number(item):
                values.append(item)
                continue
            fresh = self.namer.fresh(f"result{k}" if is_tuple else "result")
            bindings.append(Assign(cst.Name(fresh), item, None, node))
            values.append(cst.Name(fresh))
        return bindings, Return(tuple(values), is_tuple, node)

    def expr(self, node: cst.BaseExpression) -> cst.BaseExpression:
        return node.visit(_Canonicalize(self))  # type: ignore[return-value]


class _Canonicalize(cst.CSTTransformer):
    """Rewrite calls to canonical names, inline module constants such as `math.pi`, and note
    the frozen globals an expression reads."""

    def __init__(self, owner: Normalizer):
        self.owner = owner

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        key = canonical_call(original.func, self.owner.parsed.globals)
        if key is None:  # a method such as x.copy()
            return updated
        return updated.with_changes(func=canonical_func_node(key))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(original.value, cst.Name) and original.value.value in self.owner.locals:
            return updated
        value = lookup(original, self.owner.parsed.globals)
        return number(value) if isinstance(value, float) else updated

    def visit_Name(self, node: cst.Name) -> None:
        owner = self.owner
        if node.value in owner.locals:
            return
        value = lookup(node, owner.parsed.globals)
        if is_frozen_constant(value):
            owner.constants[node.value] = value


def _loop_writes(body: list[Stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, For):
            names.add(stmt.var)
            names |= {s.var for s in stmt.body} | _loop_writes(list(stmt.body))
    return names
