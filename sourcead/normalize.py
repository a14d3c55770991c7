"""Pass 3, normalize: the fenced libcst function becomes the core form (`sourcead.core`).

- calls are rewritten to canonical names (`sin(x)` with `from math import sin` -> `math.sin(x)`);
- `a += e` stays an explicit accumulation when `e` does not read `a`, else becomes `a = a + (e)`;
  `*=`, `/=` and `**=` become plain assignments;
- `range(n)` gets explicit start and step; loop bounds that the loop body reassigns are hoisted
  into fresh variables, so the reversed loop can re-read them;
- `if`/`elif`/`else` and `while` keep their shape; a conditional expression becomes an if
  statement that sets a fresh variable, so only the chosen branch runs;
- `a, b = b, a` on names is a `Permute`; other tuple assignments go through fresh variables;
- `break`, `continue` and `return` anywhere become flags (`exits.py`), leaving one exit.
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst

from .core import (
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
    written,
)
from .exits import eliminate_exits
from .exprs import code, names_in, number, paren
from .fence import assigned_in, fence, local_names
from .naming import Namer
from .parse import ParsedFunction, parse_function
from .resolve import canonical_call, canonical_func_node, is_frozen_constant, lookup, user_function

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
    def __init__(self, parsed: ParsedFunction, namer: Namer, callers: tuple = ()):
        self.parsed = parsed
        self.namer = namer
        self.callers = callers  # the functions being inlined into, to reject recursion
        self.current: cst.CSTNode = parsed.node  # the user statement being normalized, for errors
        self.params = tuple(p.name.value for p in parsed.node.params.params)
        self.constants: dict[str, object] = {}
        self.custom: set[str] = set()  # custom rules called (keys)
        self.locals = local_names(parsed.node)

    def function(self) -> CoreFunction:
        statements = list(self.parsed.node.body.body)  # type: ignore[union-attr]
        body, ret = eliminate_exits(self.block(statements), self.namer, self.parsed.node)
        params = set(self.params)
        mutated = [p for p in self.params if p in _element_writes(body) and p not in assigned_whole(body)]
        return CoreFunction(
            name=self.parsed.name,
            params=self.params,
            body=body,
            ret=ret,
            constants=tuple(sorted(self.constants.items())),
            mutated=tuple(m for m in mutated if m in params),
            custom=tuple(sorted(self.custom)),
        )

    def block(self, statements) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in statements:
            self.current = stmt
            if isinstance(stmt, cst.For):
                out += self.loop(stmt)
            elif isinstance(stmt, cst.While):
                out.append(While(self.expr(stmt.test), tuple(self.block(stmt.body.body)), stmt))
            elif isinstance(stmt, cst.If):
                out += self.branch(stmt)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    out += self.small(small)
        return out

    def branch(self, stmt: cst.If) -> list[Stmt]:
        self.current = stmt
        orelse: list[Stmt] = []
        if isinstance(stmt.orelse, cst.If):  # elif: its test runs only when this one is false
            orelse = self.branch(stmt.orelse)
        elif isinstance(stmt.orelse, cst.Else):
            orelse = self.block(stmt.orelse.body.body)
        pre, test = self.choices(self.expr(stmt.test))
        return pre + [If(test, tuple(self.block(stmt.body.body)), tuple(orelse), stmt)]

    def where(self, node: cst.CSTNode) -> cst.CSTNode:
        """`node` if it has a file position (rewritten nodes do not), else the statement at hand."""
        return node if self.parsed.locate(node) else self.current

    def small(self, small: cst.BaseSmallStatement) -> list[Stmt]:
        self.current = small
        if isinstance(small, cst.Assign):
            target = small.targets[0].target
            if isinstance(target, cst.Tuple):
                return self.unpack(target, small.value, small)  # type: ignore[arg-type]
            return self.assign(self.expr(target), self.expr(small.value), None, small)
        if isinstance(small, cst.AugAssign):
            return self.augmented(small)
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):  # a call for its writes
            call = self.expr(small.value)
            pre: list[Stmt] = []
            args = []
            for arg in call.args:  # type: ignore[attr-defined]
                before, value = self.choices(arg.value)
                pre += before
                args.append(arg.with_changes(value=value))
            func = user_function(small.value.func, self.parsed.globals)
            body, _ = self.inline(func, call.with_changes(args=args), small.value)  # type: ignore[attr-defined]
            return pre + body
        if isinstance(small, cst.Break):
            return [Break(small)]
        if isinstance(small, cst.Continue):
            return [Continue(small)]
        if isinstance(small, cst.Return):
            value = small.value
            is_tuple = isinstance(value, cst.Tuple)
            items = [e.value for e in value.elements] if is_tuple else [value]  # type: ignore[union-attr]
            pre: list[Stmt] = []
            values = []
            for item in items:
                before, item = self.choices(self.expr(item))
                pre += before
                values.append(item)
            return pre + [Exit(tuple(values), is_tuple, small)]
        return []  # pass, docstrings

    def assign(self, target, value, accumulate: str | None, origin) -> list[Stmt]:
        """`target = value`, with conditional expressions in `value` turned into if statements."""
        if isinstance(value, cst.IfExp) and accumulate is None:
            pre, test = self.choices(value.test)
            then = self.assign(target, value.body, None, origin)
            orelse = self.assign(target, value.orelse, None, origin)
            return pre + [If(test, tuple(then), tuple(orelse), origin)]
        pre, value = self.choices(value)
        return pre + [Assign(target, value, accumulate, origin)]

    def choices(self, value: cst.BaseExpression) -> tuple[list[Stmt], cst.BaseExpression]:
        """Statements that must run before `value`, and `value` reading their results:
        a conditional expression becomes an if statement setting a fresh variable (so only the
        chosen branch runs, and is differentiated); a call to a user function is inlined."""
        pre: list[Stmt] = []
        owner = self

        class Hoist(cst.CSTTransformer):
            def visit_IfExp(self, node: cst.IfExp) -> bool:
                return False  # its branches are normalized inside the if statement it becomes

            def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
                name = owner.namer.fresh("choice")
                pre.extend(owner.assign(cst.Name(name), original, None, original))
                return cst.Name(name)

            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                func = user_function(original.func, owner.parsed.globals)
                if func is None:
                    return updated
                body, ret = owner.inline(func, updated, original)
                pre.extend(body)
                if not ret.values:
                    raise owner.parsed.error(f"{func.__name__} returns nothing", owner.where(original))
                if ret.is_tuple:
                    raise owner.parsed.error(
                        f"{func.__name__} returns a tuple; unpack it: `a, b = {func.__name__}(...)`",
                        owner.where(original),
                    )
                return ret.values[0]

        if isinstance(value, cst.IfExp):
            name = self.namer.fresh("choice")
            return self.assign(cst.Name(name), value, None, value), cst.Name(name)
        value = value.visit(Hoist())  # type: ignore[assignment]
        return pre, value

    def inline(self, func, call: cst.Call, origin: cst.CSTNode) -> tuple[list[Stmt], Return]:
        """The body of a user function, its names made fresh, its parameters bound to the arguments.

        We inline rather than emit the callee beside the caller: activity and the tape then see
        through the call, and numba compiles one function with no tape passed between functions.
        """
        if func in self.callers or func is _unwrap_parsed(self.parsed):
            raise self.parsed.error(
                f"recursive call to {func.__name__}",
                self.where(origin),
                "sourcead inlines calls; write the recursion as a loop.",
            )
        callee = parse_function(func)
        fence(callee, callee=True)
        params = [p.name.value for p in callee.node.params.params]
        if len(call.args) != len(params):
            raise self.parsed.error(
                f"{func.__name__} takes {len(params)} arguments, got {len(call.args)}", self.where(origin)
            )
        reassigned = assigned_in(callee.node.body)
        mapping: dict[str, str] = {}
        pre: list[Stmt] = []
        for param, arg in zip(params, call.args, strict=True):
            if isinstance(arg.value, cst.Name) and param not in reassigned:
                mapping[param] = arg.value.value  # the caller's variable itself (arrays by reference)
            else:
                mapping[param] = self.namer.fresh(f"{func.__name__}_{param}")
                pre.append(Assign(cst.Name(mapping[param]), arg.value, None, origin))
        for local in sorted(local_names(callee.node) - set(params)):
            mapping[local] = self.namer.fresh(f"{func.__name__}_{local}")
        renamed = callee.node.visit(_Rename(mapping))
        inner = Normalizer(replace(callee, node=renamed), self.namer, (*self.callers, _unwrap_parsed(self.parsed)))
        core = inner.function()
        for name, value in core.constants:
            if self.constants.get(name, value) != value:
                raise self.parsed.error(
                    f"global `{name}` has different values in the caller and in {func.__name__}", origin
                )
            self.constants[name] = value
        self.custom.update(core.custom)
        return pre + list(core.body), core.ret

    def unpack(self, targets: cst.Tuple, value: cst.BaseExpression, origin) -> list[Stmt]:
        """`a, b = b, a` is a permutation of names; anything else goes through fresh temporaries."""
        lhs = [self.expr(e.value) for e in targets.elements]
        if isinstance(value, cst.Call):  # a, b = f(...): a user function returning a tuple
            func = user_function(value.func, self.parsed.globals)
            body, ret = self.inline(func, self.expr(value), value)
            if not ret.is_tuple or len(ret.values) != len(lhs):
                raise self.parsed.error(f"{func.__name__} does not return {len(lhs)} values", self.where(value))
            out = list(body)
            for target, item in zip(lhs, ret.values, strict=True):
                out.append(Assign(target, item, None, origin))
            return out
        rhs = [self.expr(e.value) for e in value.elements]
        names = [n.value for n in lhs if isinstance(n, cst.Name)]
        sources = [n.value for n in rhs if isinstance(n, cst.Name)]
        if len(names) == len(lhs) == len(sources) == len(set(names)) and set(names) == set(sources):
            return [Permute(tuple(names), tuple(sources), origin)]
        out: list[Stmt] = []
        read = set().union(*(names_in(v) for v in rhs))
        targets_written = {(t.value.value if isinstance(t, cst.Subscript) else t.value) for t in lhs}  # type: ignore[union-attr]
        if not read & targets_written:
            for target, item in zip(lhs, rhs, strict=True):
                out += self.assign(target, item, None, origin)
            return out
        temps = []
        for item in rhs:
            temp = cst.Name(self.namer.fresh("new"))
            out += self.assign(temp, item, None, origin)
            temps.append(temp)
        for target, temp in zip(lhs, temps, strict=True):
            out.append(Assign(target, temp, None, origin))
        return out

    def augmented(self, small: cst.AugAssign) -> list[Stmt]:
        target = self.expr(small.target)
        value = self.expr(small.value)
        var = target.value.value if isinstance(target, cst.Subscript) else target.value  # type: ignore[union-attr]
        if isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)) and var not in names_in(value):
            sign = "+" if isinstance(small.operator, cst.AddAssign) else "-"
            return self.assign(target, value, sign, small)
        operator = _AUG_TO_BINARY[type(small.operator)]()
        return self.assign(target, cst.BinaryOperation(target, operator, paren(value)), None, small)

    def loop(self, stmt: cst.For) -> list[Stmt]:
        call = stmt.iter
        key = canonical_call(call.func, self.parsed.globals)  # type: ignore[attr-defined]
        pre: list[Stmt] = []
        args = []
        for a in call.args:  # type: ignore[attr-defined]
            before, bound = self.choices(self.expr(a.value))
            pre += before
            args.append(bound)
        if len(args) == 1:
            args = [cst.Integer("0"), args[0]]
        if len(args) == 2:
            args.append(cst.Integer("1"))
        body = self.block(list(stmt.body.body))  # type: ignore[attr-defined]
        hoisted: list[Stmt] = []
        written_inside = assigned_names(tuple(body))
        for k, (role, bound) in enumerate(zip(("start", "stop", "step"), args, strict=True)):
            if names_in(bound) & written_inside:
                fresh = self.namer.fresh(role)
                hoisted.append(Assign(cst.Name(fresh), bound, None, stmt.iter))
                args[k] = cst.Name(fresh)
        var = stmt.target.value  # type: ignore[union-attr]
        return pre + hoisted + [For(var, args[0], args[1], args[2], tuple(body), key == "prange", stmt)]

    def expr(self, node: cst.BaseExpression) -> cst.BaseExpression:
        return _one_line(node).visit(_Canonicalize(self))  # type: ignore[return-value]


def _one_line(node: cst.BaseExpression) -> cst.BaseExpression:
    """An expression the user wrapped over several lines (inside brackets), on one line: generated
    statements are one line each. Comments inside it are dropped."""
    text = code(node)
    if "\n" not in text:
        return node
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    joined = re.sub(r"([(\[])\s+", r"\1", " ".join(part for part in lines if part))
    return cst.parse_expression(re.sub(r"\s+([)\]])", r"\1", joined).replace(",)", ")"))


class _Rename(cst.CSTTransformer):
    """Rename variables (not attribute names or keywords)."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(original.value)
        return updated.with_changes(value=new) if new else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def _unwrap_parsed(parsed: ParsedFunction):
    """The function object of a parsed function, found by name in its globals (for recursion checks)."""
    from .parse import unwrap

    obj = parsed.globals.get(parsed.name)
    return unwrap(obj) if obj is not None else None


def _element_writes(body: tuple[Stmt, ...]) -> set[str]:
    return {s.var for s in walk_statements(body) if isinstance(s, Assign) and s.writes_element}


def assigned_whole(body: tuple[Stmt, ...]) -> set[str]:
    """Names rebound anywhere (not element writes)."""
    names: set[str] = set()
    for s in walk_statements(body):
        if isinstance(s, Assign) and not s.writes_element:
            names.add(s.var)
        elif isinstance(s, (For, Permute)):
            names |= written(s)
    return names


_REDUCING_METHODS = ("sum", "mean", "max", "min", "prod")


def _axis_reduction(key: str, x: cst.BaseExpression, axis: cst.Arg) -> cst.BaseExpression:
    """np.sum(x, axis=k); np.mean over an axis is np.sum(x, axis=k) / x.shape[k] (numba has no
    np.mean with an axis)."""
    total = cst.Call(canonical_func_node("np.sum"), [cst.Arg(x), axis])
    if key == "np.sum":
        return total
    count = cst.parse_expression(f"{code(paren(x))}.shape[{code(axis.value)}]")
    return cst.BinaryOperation(total, cst.Divide(), count)


def _axis_arg(value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value, keyword=cst.Name("axis"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    )


class _Canonicalize(cst.CSTTransformer):
    """Rewrite calls to canonical names, inline module constants such as `math.pi`, and note
    the frozen globals an expression reads."""

    def __init__(self, owner: Normalizer):
        self.owner = owner

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        is_method = canonical_call(original.func, self.owner.parsed.globals) is None
        if isinstance(func, cst.Attribute) and func.attr.value in _REDUCING_METHODS and is_method:
            # x.sum() is np.sum(x), x.sum(axis=1) is np.sum(x, axis=1): one rule for both spellings
            if updated.args:
                return _axis_reduction(f"np.{func.attr.value}", func.value, _axis_arg(updated.args[0].value))
            return cst.Call(canonical_func_node(f"np.{func.attr.value}"), [cst.Arg(func.value)])
        if isinstance(func, cst.Attribute) and func.attr.value == "reshape" and is_method:
            # x.reshape(a, b) is np.reshape(x, (a, b))
            dims = [a.value for a in updated.args]
            shape = dims[0] if len(dims) == 1 else cst.Tuple([cst.Element(d) for d in dims])
            return cst.Call(canonical_func_node("np.reshape"), [cst.Arg(func.value), cst.Arg(shape)])
        key = canonical_call(original.func, self.owner.parsed.globals)
        if key in ("np.sum", "np.mean") and len(updated.args) == 2:
            return _axis_reduction(key, updated.args[0].value, _axis_arg(updated.args[1].value))
        if key is None:  # a method such as x.copy()
            return updated
        if key.startswith("custom."):
            self.owner.custom.add(key)
        return updated.with_changes(func=canonical_func_node(key))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value == "T":  # x.T is np.transpose(x): one rule for both spellings
            return cst.Call(canonical_func_node("np.transpose"), [cst.Arg(updated.value)])
        if isinstance(original.value, cst.Name) and original.value.value in self.owner.locals:
            return updated
        value = lookup(original, self.owner.parsed.globals)
        return number(value) if isinstance(value, float) else updated

    def visit_Name(self, node: cst.Name) -> None:
        owner = self.owner
        if node.value in owner.locals or node.value in ("True", "False"):
            return
        value = lookup(node, owner.parsed.globals)
        if is_frozen_constant(value):
            owner.constants[node.value] = value
