"""The adjoint of one assignment, as lines of code (used by `reverse/sweeps.py`).

Each active assignment's adjoint reads the values its partial derivatives need (recomputing
intermediate values inside the statement) and accumulates into the adjoints of its operands.
What those lines read is what the to-be-recorded analysis must keep available.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from ..analysis.activity import value_sources
from ..analysis.liveness import needed_assignments
from ..analysis.program import Program, builds_array, copied_array
from ..derive.adjoints import adjoint
from ..derive.linearize import Node, array_roots, shape_like
from ..frontend.alias_errors import rename_error, view_error
from ..frontend.aliases import statements_after, view_conflict, writes_in_place
from ..ir.core import Assign, For, Permute, Stmt, While, walk_statements, written
from ..ir.emit import Line
from ..ir.exprs import Rename, code, dotted, is_cheap, names_in, negate, number, transformed, unparen, walk
from .peephole import simplify
from .scaled import scalars_onto_seeds
from .shapes import shapes_from_adjoints, steady_arrays
from .singular import singular_adjoints, suspect_adjoints


class StatementAdjoints:
    def __init__(self, prog: Program):
        self.prog = prog
        self.statements = list(walk_statements(prog.fn.body))
        self.in_loop = {
            s for loop in self.statements if isinstance(loop, (For, While)) for s in walk_statements(loop.body)
        }
        self.needed = needed_assignments(prog)
        self.in_prange = {
            s for loop in self.statements if isinstance(loop, For) and loop.parallel for s in walk_statements(loop.body)
        }
        # the temporary that holds the whole value of `x = e` in its adjoint, where one does
        # (`t1 = m[j] / (r2 * t0)` for a quotient's partial): the value `x` holds after it
        self.root_value: dict[Assign, str] = {}
        self.steady = steady_arrays(prog)
        self.singular = singular_adjoints(prog)  # guarded on zero partials too (`singular.py`)
        self.written_once = _written_once(prog, self.statements, self.in_loop)
        self.suspect, self.moving = suspect_adjoints(prog)  # not guarded on a zero adjoint there
        self.lines = {s: self.rewritten(s, simplify(self.of(s))) for s in self.statements if isinstance(s, Assign)}

    def of(self, s: Assign) -> list[Line]:
        prog = self.prog
        whole_array = prog.kinds.is_array(s.var) and not s.writes_element
        if whole_array and not builds_array(s):
            self.check_view(s)  # active or not: the reverse sweep reads primal values through both names
        if not prog.is_active(s.var) or s not in self.needed:
            return []  # no derivative, or a zero adjoint where it runs (liveness.py)
        if whole_array and builds_array(s):
            return self.array_assignment(s)
        lin = prog.linearize(s.value, s.origin)
        target_bar = prog.shadow(s.target, "_bar")
        zero = cst.parse_expression(f"zeros_like({prog.bar(s.var)})") if whole_array else number(0.0)
        if lin.root is None:
            if s.accumulate is not None:  # `s += 1.0`: the derivative of s passes through unchanged
                return []
            return [Line(target_bar, "=", zero)] if self.needs_reset(s) else []
        lines = [Line(cst.Name(t), "=", value) for t, value in lin.bindings]
        if self.holds_its_value(s) and isinstance(lin.value, cst.Name) and lin.value.value in dict(lin.bindings):
            self.root_value[s] = lin.value.value
        if s.accumulate is not None:
            seed = self.into_value(s, lin.value, target_bar, lines)
            self.propagate(lin.root, seed if s.accumulate == "+" else negate(seed), lines, s)
        elif s.var in value_sources(s.value):  # reads what it overwrites: take the adjoint first
            seed = cst.Name(prog.namer.temp())
            taken = target_bar  # a slice or row of the adjoint is a view: copy it before zeroing
            if isinstance(target_bar, cst.Subscript) and prog.kinds.type_of(s.target).is_array:
                taken = cst.Call(cst.Attribute(target_bar, cst.Name("copy")), [])
            lines += [Line(seed, "=", taken), Line(target_bar, "=", zero)]
            self.propagate(lin.root, self.into_value(s, lin.value, seed, lines), lines, s)
        else:
            self.propagate(lin.root, self.into_value(s, lin.value, target_bar, lines), lines, s)
            if self.needs_reset(s):
                lines.append(Line(target_bar, "=", zero))
        if s in self.written_once and s in self.root_value:  # x holds e's value here: read, not computed
            root = self.root_value.pop(s)
            rename = Rename({root: s.target})
            lines = [
                replace(line, value=transformed(line.value, rename)) for line in lines if code(line.target) != root
            ]
        return lines

    def rewritten(self, s: Assign, lines: list[Line]) -> list[Line]:
        """The lines with shapes read from adjoints (`shapes.py`), scalar factors of products on
        their seeds (`scaled.py`) and products added in place."""
        held = {self.root_value[s]} if s in self.root_value else set()
        lines = scalars_onto_seeds(shapes_from_adjoints(self.prog, self.steady, lines, held), self.is_scalar)
        return self.in_place(s, lines)

    def is_scalar(self, e: cst.BaseExpression) -> bool:
        """Is `e` a float or int of the function's variables (not a temporary of the lines)?"""
        kinds = self.prog.kinds
        if any(name not in kinds.of for name in _variables(e)):
            return False
        return not kinds.type_of(e).is_array

    def in_place(self, s: Assign, lines: list[Line]) -> list[Line]:
        """Each contribution of a product of vectors to an operand's adjoint, added in place: `L_bar[i,
        :i] += chosen(m, matmul_bar_left(g, L[i, :i], x[:i]))` (a dot product's) as `add_product(L_bar[i,
        :i], m, g, x[:i])`, and `A_bar += chosen(m, matmul_bar_left(g, A, x))` (a matrix-vector
        product's, an outer product) as `add_outer(A_bar, m, g, x)`, where the lines as they stand
        allocate the product and `chosen`'s result, two arrays for every iteration of a loop around
        them (`ProductLine`). Not in a `prange` body, whose accumulations into shared arrays numba
        reduces across threads."""
        if s in self.in_prange:
            return lines
        bound = {
            line.target.value: line.value for line in lines if line.op == "=" and isinstance(line.target, cst.Name)
        }
        out = []
        for line in lines:
            kind = self.product_kind(line, bound)
            if kind is not None:
                line = ProductLine(line.target, line.op, line.value, line.comment, kind == "outer")
            elif (taken := _taken_parts(line)) is not None and not _adds_into_what_it_reads(line, taken[1:], bound):
                line = TakenLine(line.target, line.op, line.value, line.comment)
            elif (added := _added_parts(line)) is not None and self.adds_array(line.target, added[1], bound):
                line = AddedLine(line.target, line.op, line.value, line.comment)
            out.append(line)
        return out

    def adds_array(
        self, target: cst.BaseExpression, factor: cst.BaseExpression | None, bound: dict[str, cst.BaseExpression]
    ) -> bool:
        """Is `x_bar` (`a_bar[i]`, `a_bar[1:]`) an array, not a float (a whole array's adjoint or a
        row or slice of one), and the factor, if any, a number or a float of the function's
        variables, or a temporary of the lines bound to one (an array factor may broadcast g)?"""
        if isinstance(factor, cst.Name) and factor.value in bound:
            factor = bound[factor.value]
        if factor is not None and not isinstance(factor, (cst.Integer, cst.Float)) and not self.is_scalar(factor):
            return False
        base = target.value if isinstance(target, cst.Subscript) else target
        var = self.prog.namer.shadowed(base.value) if isinstance(base, cst.Name) else None
        if var is None or not self.prog.kinds.is_array(var):
            return False
        if isinstance(target, cst.Name):
            return True
        return self.prog.kinds.type_of(target.with_changes(value=cst.Name(var))).ndim > 0

    def product_kind(self, line: Line, bound: dict[str, cst.BaseExpression]) -> str | None:
        """ "vector" for a dot product's contribution to a vector operand, "outer" for a matrix-vector
        product's to its matrix, else None (`_product_parts`)."""
        found = _product_parts(line)
        if found is None:
            return None
        _m, g, a, b, right = found
        dims = [self.ndim(e, bound) for e in (a, b)]
        if dims == [1, 1]:
            kind, arrays = "vector", [a if right else b]  # g is a float, read once
        elif dims == ([1, 2] if right else [2, 1]):
            kind, arrays = "outer", [a, g] if right else [g, b]
        else:
            return None
        if _adds_into_what_it_reads(line, arrays, bound):
            return None  # `A_bar += outer(A_bar[1], x)`: a vector it reads is what it adds into
        return kind

    def ndim(self, e: cst.BaseExpression, bound: dict[str, cst.BaseExpression], depth: int = 0) -> int | None:
        """The number of dimensions of an array operand, a temporary of the adjoint's lines read
        through its binding (`t0 = A @ x`); None where it is not an array or not known."""
        if isinstance(e, cst.Name) and e.value in bound and depth < 4:
            return self.ndim(bound[e.value], bound, depth + 1)
        kinds = self.prog.kinds
        if any(name not in kinds.of for name in _variables(e)):
            return None
        t = kinds.type_of(e)
        return t.ndim if t.is_array else None

    def into_value(self, s: Assign, value: cst.BaseExpression, g: cst.BaseExpression, lines: list[Line]):
        """The adjoint `g` of a written row or slice, `dst[sl] = v` (or `+=`, and `u += v` into a whole
        array), made into v's shape:
        NumPy broadcast v into the slice (a float into a row, a row into rows, a (1, n) slice into
        (2, n)), so v's adjoint is the slice's summed back over the axes v was broadcast along,
        `unbroadcast(dst_bar[sl], v)`; for a float v, the slice's sum. Where several arrays meet in
        v, each operand's adjoint is already summed back to its own shape (linearize.sums_to_shape);
        v's shape is that of its one array (its adjoint's, so no primal value is read for it)."""
        prog = self.prog
        target, v = prog.kinds.type_of(s.target), prog.kinds.type_of(s.value)
        if not target.is_array or not s.writes_element and s.accumulate is None:
            return g  # (a whole array accumulating a float or a row, `u += a`, is summed back too)
        if not v.is_array:
            return cst.parse_expression(f"np.sum({code(g)})")
        roots = array_roots(s.value, prog.kinds.type_of)
        if len(roots) != 1 or roots == {code(s.target)}:
            return g  # several arrays meet, or the slice is computed from itself (its own shape)
        (root,) = roots
        if not root.startswith("<"):  # an array or a slice of one: its adjoint has its shape
            leaf = cst.parse_expression(root)
            if not prog.is_active_leaf(leaf):
                return g  # no array adjoint reaches it (a float operand's adjoint is a sum)
            like = prog.shadow(leaf, "_bar")
        else:  # one operation that is not elementwise (`2.0 * (A @ x)`): its shape, or its value
            operation = cst.parse_expression(root[1:-1])
            like = shape_like(operation) or (value if is_cheap(value) else operation)
            if not is_cheap(like):
                temp = cst.Name(prog.namer.temp())
                lines.append(Line(temp, "=", unparen(like)))
                like = temp
        return cst.parse_expression(f"unbroadcast({code(g)}, {code(like)})")

    def holds_its_value(self, s: Assign) -> bool:
        """Does the target of `s` hold the value of its right-hand side once `s` has run? A name
        (a float, or a whole array: `h = np.tanh(W @ x + b)`) assigned with `=`, from an expression
        that does not read it; or a float element (`x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]`:
        the value is computed before the element is written). (An array's other names are refused
        where either is written: `check_view`, `array_assignment`.)"""
        if s.accumulate is not None:
            return False
        if isinstance(s.target, cst.Subscript):
            of = self.prog.kinds.type_of(s.target)
            return of.dtype == "float" and of.ndim == 0
        return s.var not in names_in(s.value)

    def check_view(self, s: Assign) -> None:
        """`b = a[i]` makes b a view of a row of a (as `b = a.T` of all of it, and the other
        primitives declared `view`): writes through either name change both, which reverse mode
        does not follow; refused where one is written while the other is read (`aliases.py`
        copies the views it can)."""
        conflict = None if _returns(s) else view_conflict(self.prog.fn, s, self.prog.kinds.is_array)
        if conflict is not None:
            raise view_error(self.prog.parsed, s, conflict)

    def propagate(self, root: Node, seed: cst.BaseExpression, lines: list[Line], s: Assign) -> None:
        """Send the adjoint `seed` of `s`'s value to its operands; an exactly zero seed (elementwise
        for an array value) contributes exactly zero (`linearize.adjoint`)."""

        def accumulate(leaf: cst.BaseExpression, g: cst.BaseExpression) -> None:
            if isinstance(g, cst.UnaryOperation) and isinstance(g.operator, cst.Minus):
                lines.append(Line(self.prog.shadow(leaf, "_bar"), "-=", unparen(g.expression)))
            else:
                lines.append(Line(self.prog.shadow(leaf, "_bar"), "+=", g))

        def bind(value: cst.BaseExpression) -> cst.BaseExpression:
            temp = cst.Name(self.prog.namer.temp())
            lines.append(Line(temp, "=", value))
            return temp

        array_seed = self.prog.kinds.type_of(s.value).is_array
        moving = lambda leaf: bool(names_in(leaf) & self.moving)  # noqa: E731
        adjoint(root, seed, accumulate, bind, array_seed, s.var in self.singular, s.var in self.suspect, moving)

    def array_assignment(self, s: Assign) -> list[Line]:
        """`b = a.copy()` and `b = a` (a second name for an array never written) send b's adjoint
        to a; `b = np.zeros(n)` is a constant."""
        prog = self.prog
        value = s.value
        defs = [t for t in self.statements if isinstance(t, Assign) and t.var == s.var and not t.writes_element]
        source = copied_array(s)
        if isinstance(value, cst.Name):
            if {s.var, value.value} & self.written_after(s) and not _returns(s):
                raise rename_error(prog.parsed, s, value.value)
            source = value  # never written: the same as a copy
        lines = []
        if isinstance(source, cst.Name) and prog.is_active(source.value):
            lines.append(Line(cst.Name(prog.bar(source.value)), "+=", cst.Name(prog.bar(s.var))))
        if (len(defs) > 1 or s in self.in_loop or s.var in prog.fn.params) and self.needs_reset(s):
            zero = cst.parse_expression(f"zeros_like({prog.bar(s.var)})")
            lines.append(Line(cst.Name(prog.bar(s.var)), "=", zero))
        return lines

    def written_after(self, s: Assign) -> set[str]:
        """The arrays written in place (an element or slice, or `x += e`) once `s` has run: by a later
        statement, or by any statement of a loop around `s` (the next iteration comes after it)."""
        return {t.var for t in statements_after(self.prog.fn.body, s) if writes_in_place(t)}

    def needs_reset(self, s: Assign) -> bool:
        """After the adjoint of `v = ...`, must `v_bar` be zeroed for an earlier value of `v`?"""
        if s.writes_element or s.var in self.prog.fn.params or s in self.in_loop:
            return True
        earlier = self.statements[: self.statements.index(s)]
        return any(
            isinstance(t, Assign) and t.var == s.var or isinstance(t, Permute) and s.var in t.targets for t in earlier
        )

    def has_work(self, body: tuple[Stmt, ...], sites: set[Assign]) -> bool:
        """Does the reverse sweep of `body` do anything (adjoints, restores, un-permuting)?"""
        return any(
            isinstance(s, Permute) or isinstance(s, Assign) and (s in sites or self.lines[s])
            for s in walk_statements(body)
        )


def _variables(e: cst.BaseExpression) -> set[str]:
    """The names `e` reads, less the modules of the functions it calls (`np` of `np.take(x, i)`)."""
    modules = {dotted(c.func).split(".")[0] for c in walk(e) if isinstance(c, cst.Call) and "." in dotted(c.func)}
    return names_in(e) - modules


def _adds_into_what_it_reads(line: Line, arrays, bound: dict[str, cst.BaseExpression]) -> bool:
    """Does an array the in-place call reads name the array it adds into?"""
    base = line.target.value if isinstance(line.target, cst.Subscript) else line.target
    return isinstance(base, cst.Name) and any(base.value in _reads(e, bound) for e in arrays)


def _reads(e: cst.BaseExpression, bound: dict[str, cst.BaseExpression]) -> set[str]:
    """The names `e` reads, through the bindings of the adjoint's temporaries."""
    seen: set[str] = set()
    todo = list(names_in(e))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += list(names_in(bound[name])) if name in bound else []
    return seen


def _product_parts(line: Line):
    """`(m, g, a, b, right)` of `X += chosen(m, matmul_bar_left(g, a, b))` (`matmul_bar_right`:
    right), or of the same without `chosen` (m is True), else None."""
    if line.op != "+=" or not isinstance(line.target, (cst.Name, cst.Subscript)):
        return None
    value, m = unparen(line.value), cst.parse_expression("True")
    if isinstance(value, cst.Call) and dotted(value.func) == "chosen" and len(value.args) == 2:
        m, value = value.args[0].value, unparen(value.args[1].value)
    if not (isinstance(value, cst.Call) and len(value.args) == 3):
        return None
    name = dotted(value.func)
    if name not in ("matmul_bar_left", "matmul_bar_right") or any(a.keyword or a.star for a in value.args):
        return None
    g, a, b = (unparen(arg.value) for arg in value.args)
    return m, g, a, b, name == "matmul_bar_right"


@dataclass(frozen=True)
class ProductLine(Line):
    """`X += chosen(m, matmul_bar_left(g, a, b))` for vectors a and b, written as the runtime's
    in-place `add_product(X, m, g, b)` (`a` for `matmul_bar_right`); for a matrix a and a vector b
    (`outer`), `add_outer(X, m, g, b)` (`matmul_bar_right` of a vector a and a matrix b:
    `add_outer(X, m, a, g)`). It stays that line for every pass that reads lines (what it reads and
    writes, renamings of its target and value): only its text differs, made from its fields."""

    outer: bool = False

    def text(self) -> str:
        found = _product_parts(self)
        assert found is not None
        m, g, a, b, right = found
        target, m_text = code(self.target), code(m)
        if self.outer:
            u, v = (a, g) if right else (g, b)
            call = f"add_outer({target}, {m_text}, {code(u)}, {code(v)})"
        else:
            call = f"add_product({target}, {m_text}, {code(g)}, {code(a if right else b)})"
        return f"{call}  # {self.comment}" if self.comment else call


def _returns(s: Assign) -> bool:
    """Is `s` a `return` (as `exits.py` writes one: the result variable set, then the function ends
    on that path)? A second name made there is never written afterwards."""
    return isinstance(s.origin, cst.Return)


def _taken_parts(line: Line):
    """`(m, g, indices)` of `X += chosen(m, take_bar(g, x, indices))` (a gather's adjoint, `x[idx]`),
    or of the same without `chosen` (m is True), else None."""
    if line.op != "+=" or not isinstance(line.target, (cst.Name, cst.Subscript)):
        return None
    value, m = unparen(line.value), cst.parse_expression("True")
    if isinstance(value, cst.Call) and dotted(value.func) == "chosen" and len(value.args) == 2:
        m, value = value.args[0].value, unparen(value.args[1].value)
    if not (isinstance(value, cst.Call) and dotted(value.func) == "take_bar" and len(value.args) == 3):
        return None
    if any(a.keyword or a.star for a in value.args):
        return None
    g, _x, indices = (unparen(arg.value) for arg in value.args)
    return m, g, indices


@dataclass(frozen=True)
class TakenLine(Line):
    """`X += chosen(m, take_bar(g, x, idx))` written as the runtime's in-place `add_taken(X, m, g,
    idx)`: g added at the gathered indices, with no array of x's size made for it (a gather in a
    loop, as spmv's `x[cols]`). Only its text differs from the line it stands for."""

    def text(self) -> str:
        found = _taken_parts(self)
        assert found is not None
        m, g, indices = found
        call = f"add_taken({code(self.target)}, {code(m)}, {code(g)}, {code(indices)})"
        return f"{call}  # {self.comment}" if self.comment else call


def _written_once(prog: Program, statements: list[Stmt], in_loop: set[Stmt]) -> set[Assign]:
    """The assignments `x = e` whose target holds e's value at their adjoint without a record: the
    only statements that write `x` (no other assignment, element write, loop variable or swap),
    in no loop, of a variable that is not a parameter (whose value before it an earlier adjoint may
    need restored) and that e does not read. An array's other names are refused where either is
    written (`check_view`), so nothing else changes `x`: a factorisation kept so (`L =
    np.linalg.cholesky(A)` read by `C = L + B`) is not computed again, nor recorded for."""
    writes: dict[str, int] = {}
    for s in statements:
        for name in written(s):
            writes[name] = writes.get(name, 0) + 1
    params = set(prog.fn.params)
    return {
        s
        for s in statements
        if isinstance(s, Assign)
        and not s.writes_element
        and s.accumulate is None
        and s not in in_loop
        and writes.get(s.var) == 1
        and s.var not in params
        and s.var not in names_in(s.value)
    }


def _added_parts(line: Line) -> tuple[str, cst.BaseExpression | None, cst.BaseExpression] | None:
    """(helper, factor, g) of an accumulation into an array adjoint that `AddedLine` writes as a
    call: `X += unbroadcast(g, X)` and `X += c * unbroadcast(g, X)` (X a name or a subscript; the
    factor c None where there is none), and, into a subscript, `X[s] += g` and `X[s] -= g`; the
    helper `subtract_into` where the line subtracts, or g is `-h` (then h), else `add_into`. None
    for any other line."""
    if line.op not in ("+=", "-=") or not isinstance(line.target, (cst.Name, cst.Subscript)):
        return None
    value, factor = unparen(line.value), None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        if _unbroadcast_of(unparen(value.right), line.target) is not None:
            factor, value = unparen(value.left), unparen(value.right)
    g = _unbroadcast_of(value, line.target)
    if g is not None:
        value = g
    elif isinstance(line.target, cst.Name):
        return None  # `x_bar += g` into a whole array is numba's in-place loop, with no slice assigned
    subtract = line.op == "-="
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        subtract, value = not subtract, unparen(value.expression)
    return ("subtract_into" if subtract else "add_into"), factor, value


def _unbroadcast_of(value: cst.BaseExpression, target: cst.BaseExpression) -> cst.BaseExpression | None:
    """g of `unbroadcast(g, target)`, else None."""
    if not (isinstance(value, cst.Call) and dotted(value.func) == "unbroadcast" and len(value.args) == 2):
        return None
    if any(a.keyword or a.star for a in value.args) or code(value.args[1].value) != code(target):
        return None
    return unparen(value.args[0].value)


@dataclass(frozen=True)
class AddedLine(Line):
    """An accumulation into an array adjoint, `X[s] += unbroadcast(g, X[s])` (`_added_parts`),
    written as the runtime's in-place `add_into(X[s], g)` (`subtract_into(X[s], h)` for g = -h, `add_into(X[s], c
    * g)` for a factor c): numba lowers the line itself as three loop nests in the function (the
    add, then the slice assigned from itself: an overlap copy and the copy back), where the call is
    a helper compiled once per argument types (hdiff's gradient: 76,000 -> 46,000 LLVM
    instructions, LLVM's function passes on it 13 -> 4.5 s). Only its text differs."""

    def text(self) -> str:
        found = _added_parts(self)
        if found is None:  # a later pass changed it: as it stands
            return Line.text(self)
        helper, factor, g = found
        if factor is not None:
            g = cst.BinaryOperation(factor, cst.Multiply(), _atom(g))
        call = f"{helper}({code(self.target)}, {code(g)})"
        return f"{call}  # {self.comment}" if self.comment else call


def _atom(e: cst.BaseExpression) -> cst.BaseExpression:
    """`e`, parenthesized where it binds less tightly than a product's right operand."""
    loose = (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.UnaryOperation)
    return cst.parse_expression(f"({code(e)})") if isinstance(e, loose) else e
