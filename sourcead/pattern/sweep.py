"""The pass `pattern`: the pattern sweep, forward mode whose tangents are sets of input elements.

`f(x, ...)` becomes `f_pattern(x, ..., x_dot, pairs)`: the function's own statements beside, for
every active statement, its tangent statement as forward mode writes it (`derive.tangent`), but run
as plain Python with every tangent a `runtime.deps.Dep` (a set of flat input elements) and every
tangent array an array of them (`dep_zeros_like`). A `Dep`'s arithmetic is union, so the result's
tangent is, element by element, the set of inputs it structurally depends on: the Jacobian's
pattern, at the point given (branches and data indices follow the arguments).

For the Hessian, each edge of a statement's derivative tree whose partial derivative reads an
active value is nonlinear: `dep_pairs(pairs, D, T)` records that the sets of the partial's inputs
(D) and of the operand's tangent (T) meet, the global-pairs rule of SparseConnectivityTracer; the
union of all pairs, made symmetric, holds every nonzero of the Hessian. D is written element by
element (`x_dot[1:] + x_dot[:-1]`) where the partial is an elementwise expression, else as a tuple
of everything it reads (all against all: a superset).

    before: r[i] = x[i - 1] * math.exp(x[i])
    after:  t0 = math.exp(x[i])
            if pairs is not None:
                dep_pairs(pairs, x_dot[i - 1] + x_dot[i], x_dot[i])  # d/dx[i] reads x[i - 1], x[i]
                dep_pairs(pairs, x_dot[i], x_dot[i - 1])             # d/dx[i - 1] reads x[i]
            r_dot[i] = t0 * x_dot[i - 1] + x[i - 1] * (t0 * x_dot[i])
            r[i] = x[i - 1] * t0
"""

from __future__ import annotations

import libcst as cst

from ..analysis.program import Program, builds_array, copied_array
from ..derive.linearize import Node, tangent
from ..ir.core import Assign, Break, For, If, Permute, Stmt, While
from ..ir.emit import Line, Writer, tuple_text
from ..ir.exprs import code, number
from ..rules import Partials, classify, primitive
from ..runtime import HELPERS
from .static import local_reasons

LOCAL = "pattern local to the point: "  # the API reads these comments (static or not)
STATIC = "pattern static: "
SINK = "pattern_pairs"  # the Hessian's pair set (None for a Jacobian sweep)
_PROBE = "pattern_probe_"  # stands for an operand's tangent while a partial is read


def pattern_function(prog: Program) -> str:
    fn = prog.fn
    sink = _sink_name(prog)
    params = [*fn.params, *(prog.dot(w) for w in prog.wrt), sink]
    out = Writer()
    with out.block(f"def {fn.name}_pattern({', '.join(params)})"):
        out.comment(f"pattern sweep of {fn.name} with respect to {', '.join(prog.wrt)}: tangents are sets of inputs")
        for line in prog.activity_comments():
            out.comment(line)
        reasons = local_reasons(prog)
        for reason in reasons:
            out.comment(f"{LOCAL}{reason}")
        if not reasons:
            out.comment(f"{STATIC}no branch, index or selection reads data")
        for line in prog.placeholders(tangents=True):
            target, _, value = line.partition(" = ")
            out.line(f"{target} = dep_zeros_like({value})" if target.endswith("_dot") else line)
        for param in fn.params:
            if prog.is_active(param) and param not in prog.wrt:
                out.line(f"{prog.dot(param)} = {_zero(prog, param)}  # {param} is not differentiated: no inputs")
        _Sweep(prog, sink).block(fn.body, out)
        values = [code(v) for v in fn.ret.values]
        tangents = [_returned(prog, v) for v in fn.ret.values]
        value, dots = (tuple_text(values), tuple_text(tangents)) if fn.ret.is_tuple else (values[0], tangents[0])
        if fn.mutated:
            value = tuple_text([value, *fn.final_states])
            dots = tuple_text([dots, *(_returned(prog, cst.Name(m)) for m in fn.final_states)])
        out.line(f"return {value}, {dots}")
    return out.text()


def _sink_name(prog: Program) -> str:
    name = SINK
    while name in prog.kinds.of or name in prog.fn.params:
        name += "_"
    return name


def _zero(prog: Program, var: str) -> str:
    return f"dep_zeros_like({var})" if prog.kinds.is_array(var) else "0.0"


def _returned(prog: Program, value: cst.BaseExpression) -> str:
    if isinstance(value, cst.Name) and prog.is_active(value.value):
        return prog.dot(value.value)
    if isinstance(value, cst.Name):
        return _zero(prog, value.value)
    return "0.0"


class _Sweep:
    def __init__(self, prog: Program, sink: str):
        self.prog, self.sink = prog, sink

    def block(self, body: tuple[Stmt, ...], out: Writer) -> None:
        for stmt in body:
            self.statement(stmt, out)

    def statement(self, stmt: Stmt, out: Writer) -> None:
        prog = self.prog
        if isinstance(stmt, For):
            with out.block(f"for {stmt.var} in {stmt.range_text(serial=True)}"):
                self.block(stmt.body, out)
        elif isinstance(stmt, While):
            with out.block(f"while {code(stmt.test)}"):
                self.block(stmt.body, out)
        elif isinstance(stmt, If):
            self.branch(stmt, out, "if")
        elif isinstance(stmt, Break):
            out.line("break")
        elif isinstance(stmt, Permute):
            out.line(stmt.text())
            if any(prog.is_active(t) for t in stmt.targets):
                out.line(f"{', '.join(map(prog.dot, stmt.targets))} = {', '.join(map(prog.dot, stmt.sources))}")
        else:
            assert isinstance(stmt, Assign), "continue and exits are flags by now (exits.py)"
            self.assign(stmt, out)

    def branch(self, stmt: If, out: Writer, keyword: str) -> None:
        with out.block(f"{keyword} {code(stmt.test)}"):
            self.block(stmt.body, out)
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], If):
            self.branch(stmt.orelse[0], out, "elif")
        elif stmt.orelse:
            with out.block("else"):
                self.block(stmt.orelse, out)

    def assign(self, stmt: Assign, out: Writer) -> None:
        prog = self.prog
        if not prog.is_active(stmt.var):
            out.line(stmt.text())
            return
        if prog.kinds.is_array(stmt.var) and not stmt.writes_element and builds_array(stmt):
            out.line(stmt.text())
            out.line(f"{prog.dot(stmt.var)} = {self.array_tangent(stmt)}")
            return
        lin = prog.linearize(stmt.value, stmt.origin)
        out.emit([Line(cst.Name(temp), "=", value) for temp, value in lin.bindings])
        shadow = prog.shadow(stmt.target, "_dot")
        op = {None: "=", "+": "+=", "-": "-="}[stmt.accumulate]
        if lin.root is None:
            if stmt.accumulate is None and (stmt.writes_element or not prog.kinds.is_array(stmt.var)):
                out.emit([Line(shadow, "=", number(0.0))])
            elif stmt.accumulate is None:
                out.emit([Line(stmt.target, "=", lin.value)])
                out.line(f"{code(shadow)} = dep_zeros_like({stmt.var})")
                return
        else:
            leaf = lambda node: prog.shadow(node, "_dot")  # noqa: E731
            bindings = dict(lin.bindings)
            pairs = list(
                dict.fromkeys((p, code(tangent(child, leaf))) for p, child in _edges(lin.root, bindings, prog))
            )
            if pairs:
                with out.block(f"if {self.sink} is not None", "the Hessian's sweep: nonlinear edges"):
                    for partial, operand in pairs:
                        out.line(f"dep_pairs({self.sink}, {partial}, {operand})")
            value_dot = _helpers(tangent(lin.root, leaf))
            whole = stmt.accumulate is None and not stmt.writes_element and prog.kinds.is_array(stmt.var)
            if whole and isinstance(value_dot, (cst.Name, cst.Subscript)):
                value_dot = cst.parse_expression(f"np.copy({code(value_dot)})")  # its own array
            out.emit([Line(shadow, op, value_dot)])
        out.emit([Line(stmt.target, op, lin.value)])

    def array_tangent(self, stmt: Assign) -> str:
        prog, value, source = self.prog, stmt.value, copied_array(stmt)
        if isinstance(source, cst.Name) and prog.is_active(source.value):
            return f"np.copy({prog.dot(source.value)})"
        if isinstance(value, cst.Name) and prog.is_active(value.value):
            return prog.dot(value.value)
        return f"dep_zeros_like({stmt.var})"


class _HelperCalls(cst.CSTTransformer):
    """`select_along(X_dot, ...)` -> `dep_helper("select_along", X_dot, ...)`: the runtime's
    helpers compute on numbers; on sets, `dep_helper` gives the conservative union."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if isinstance(func, cst.Name) and func.value in HELPERS and not func.value.startswith("dep_"):
            name = cst.Arg(cst.SimpleString(f'"{func.value}"'))
            return updated.with_changes(func=cst.Name("dep_helper"), args=[name, *updated.args])
        return updated


def _helpers(node):
    """Runtime helper calls of a tangent expression (or its text) made set-aware."""
    if isinstance(node, str):
        if not any(f"{h}(" in node for h in HELPERS):
            return node
        return code(cst.parse_expression(node).visit(_HelperCalls()))
    return node.visit(_HelperCalls())


def _edges(root: Node, bindings: dict, prog: Program) -> list[tuple[str, Node]]:
    """The nonlinear edges under `root`: (what the partial reads, as a dependency expression; the child)."""
    found: list[tuple[str, Node]] = []
    for edge in root.edges:
        expr = edge.forward(cst.Name(_PROBE))
        reads = _Reads(bindings, prog)
        elementwise = reads.elementwise(expr)
        if root.elementwise and elementwise is not None:
            if elementwise != "0.0":
                found.append((elementwise, edge.child))
        elif reads.leaves:
            found.append((f"({', '.join(sorted(reads.leaves))},)", edge.child))
        found.extend(_edges(edge.child, bindings, prog))
    return found


class _Reads:
    """What a partial derivative reads: as an elementwise dependency expression where it is one
    (arithmetic and elementwise functions of active values and their slices), and the set of the
    active values it reads at all (`leaves`, for the all-against-all fallback)."""

    def __init__(self, bindings: dict, prog: Program):
        self.bindings, self.prog = bindings, prog
        self.leaves: set[str] = set()

    def elementwise(self, node: cst.BaseExpression) -> str | None:
        """The dependency expression of `node`, or None where it is not elementwise (then `leaves`
        holds everything it reads)."""
        self.exact = True
        text = self.walk(node)
        return text if self.exact else None

    def walk(self, node: cst.BaseExpression) -> str:
        prog = self.prog
        if isinstance(node, cst.Name):
            if node.value == _PROBE:
                return "0.0"
            if prog.is_active(node.value):
                self.leaves.add(prog.dot(node.value))
                return prog.dot(node.value)
            if node.value in self.bindings:
                return self.walk(self.bindings[node.value])
            return "0.0"
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            base = node.value.value
            if prog.is_active(base):
                self.leaves.add(prog.dot(base))
                return code(prog.shadow(node, "_dot"))
            if base in self.bindings or base == _PROBE:
                self.exact = self.exact and base == _PROBE
                return self.walk(node.value)
            return "0.0"
        if isinstance(node, (cst.Integer, cst.Float)):
            return "0.0"
        if isinstance(node, cst.Attribute):
            if node.attr.value in ("shape", "size", "ndim"):
                return "0.0"
            self.exact = False
            return self.walk(node.value)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.MatrixMultiply):
                self.exact = False
            return _plus(self.walk(node.left), self.walk(node.right))
        if isinstance(node, cst.UnaryOperation):
            return self.walk(node.expression)
        if isinstance(node, cst.Comparison):
            return "0.0"
        if isinstance(node, cst.IfExp):
            return _plus(self.walk(node.body), self.walk(node.orelse))
        if isinstance(node, cst.Call):
            found = classify(node)
            prim = found[0] if found is not None else primitive(code(node.func))
            if prim is None or not isinstance(prim.derivative, Partials) and not prim.constant:
                self.exact = False
            parts = [self.walk(arg.value) for arg in node.args]
            return "0.0" if prim is not None and prim.constant else _plus(*parts)
        self.exact = False
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self.walk(child)
        return "0.0"


def _plus(*parts: str) -> str:
    real = [p for p in parts if p != "0.0"]
    return " + ".join(real) if real else "0.0"
