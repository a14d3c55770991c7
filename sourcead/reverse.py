"""Pass 5b, reverse mode: a forward sweep that records what is overwritten, then the adjoints.

`f(x, ...)` becomes `f_vjp(x, ..., out_bar)` returning `(value, x_bar, ...)`. Each active
assignment's adjoint is built first (`adjoint.py`); the to-be-recorded analysis (`tbr.py`)
then reads what those adjoints need and decides which overwrites the forward sweep records on
a typed tape (`tape` for floats, `itape` for ints). The forward sweep also records which branch
each `if` took and how many times each `while` loop (or `for` loop with a `break`) ran, when
their reversal has work to do. The reverse sweep runs the statements backwards, restoring each
recorded value at its mirror point, so every adjoint sees the values its statement saw.

Before each top-level statement whose records can be bounded at its entry (trip counts known),
the tape is reserved once and records are plain stores; elsewhere a record checks capacity and
the tape grows by doubling.
"""

from __future__ import annotations

import libcst as cst

from .activity import value_sources
from .adjoint import StatementAdjoints
from .core import Assign, Break, For, If, Permute, Stmt, While, assigned_names, has_break, walk_statements, written
from .emit import Writer, tuple_text
from .exprs import code, is_number, names_in, number_value, paren
from .kinds import ARRAY, BOOL, INT
from .naming import bar
from .program import Program
from .tbr import to_be_recorded

FLOAT_TAPE, INT_TAPE = ("tape", "top"), ("itape", "itop")


def reverse_function(prog: Program) -> tuple[str, list[str]]:
    """The text of `f_vjp` and the runtime helpers it calls."""
    return Reverser(prog).function()


class Reverser:
    def __init__(self, prog: Program):
        self.prog = prog
        fn = prog.fn
        self.adjoints = StatementAdjoints(prog)
        self.primal = set(fn.params) | assigned_names(fn.body)
        lines = self.adjoints.lines
        reads = {s: set().union(*(line.reads() for line in ls)) & self.primal for s, ls in lines.items()}
        self.sites = to_be_recorded(fn.body, reads, self.primal)
        statements = list(walk_statements(fn.body))
        work = self.has_work
        self.decisions = {s for s in statements if isinstance(s, If) and (work(s.body) or work(s.orelse))}
        self.counters = {
            s: prog.namer.fresh("trips")
            for s in statements
            if isinstance(s, (For, While)) and (isinstance(s, While) or has_break(s)) and work(s.body)
        }
        self.helpers: set[str] = set()

    def has_work(self, body: tuple[Stmt, ...]) -> bool:
        return self.adjoints.has_work(body, self.sites)

    def tape_of(self, s: Assign) -> tuple[str, str]:
        if not s.writes_element and self.prog.kinds[s.var] in (INT, BOOL):
            return INT_TAPE
        return FLOAT_TAPE

    # --- the whole function -----------------------------------------------------------------

    def function(self) -> tuple[str, list[str]]:
        prog, fn = self.prog, self.prog.fn
        namer = prog.namer
        seeds = [namer.fresh(f"out{k}_bar" if fn.ret.is_tuple else "out_bar") for k in range(len(fn.ret.values))]
        written_seeds = [namer.fresh(f"{m}_out_bar") for m in fn.mutated]
        value = namer.fresh("value")
        out = Writer()
        with out.block(f"def {fn.name}_vjp({', '.join(list(fn.params) + seeds + written_seeds)})"):
            out.comment(f"reverse mode (adjoints) of {fn.name} with respect to {', '.join(prog.wrt)}")
            active = sorted(prog.activity.active)
            out.comment(f"active (carry derivatives): {', '.join(active) if active else 'none'}")
            self.allocate_tapes(out)
            recorded = bool(self.sites or self.decisions or self.counters)
            out.comment("forward sweep" + ("" if recorded else ": nothing the reverse sweep reads is overwritten"))
            self.forward_sweep(fn.body, out, None)
            out.line(f"{value} = {self.captured_value()}")
            out.comment("reverse sweep")
            self.initialize_adjoints(seeds, written_seeds, out)
            self.reverse_sweep(fn.body, out)
            out.line(f"return {', '.join([value] + [bar(w) for w in prog.wrt])}")
        return out.text(), sorted(self.helpers)

    def allocate_tapes(self, out: Writer) -> None:
        top_level = set(self.prog.fn.body)
        uses_int = bool(self.decisions or self.counters)
        for (tape, top), dtype in ((FLOAT_TAPE, ""), (INT_TAPE, ", np.int64")):
            sites = [s for s in self.sites if self.tape_of(s)[0] == tape]
            if sites or (tape == "itape" and uses_int):
                straight = sum(1 for s in sites if s in top_level)
                out.line(f"{tape} = np.empty({straight}{dtype})")
                out.line(f"{top} = 0")
        for var in sorted(self.undefined_at_first_record()):
            kind = self.prog.kinds[var]
            zero = {INT: "0", BOOL: "False"}.get(kind, "0.0")
            out.line(f"{var} = {zero}  # recorded before it is first assigned: give it a typed value")

    def undefined_at_first_record(self) -> set[str]:
        """Scalars recorded inside a compound statement before any top-level assignment defines them."""
        defined = set(self.prog.fn.params)
        missing: set[str] = set()
        for s in self.prog.fn.body:
            if isinstance(s, (For, While, If)):
                inside = set(walk_statements((s,)))
                missing |= {t.var for t in self.sites if t in inside and not t.writes_element} - defined
            defined |= written(s)
        return missing

    # --- forward sweep ----------------------------------------------------------------------

    def forward_sweep(self, body: tuple[Stmt, ...], out: Writer, exact: set[str] | None) -> None:
        for s in body:
            here = exact if exact is not None else self.reserve(s, out)
            if isinstance(s, For):
                self.forward_loop(s, f"for {s.var} in {s.range_text()}", out, here)
            elif isinstance(s, While):
                self.forward_loop(s, f"while {code(s.test)}", out, here)
            elif isinstance(s, If):
                self.forward_branch(s, out, here, "if")
            elif isinstance(s, Break):
                out.line("break")
            elif isinstance(s, Permute):
                out.line(s.text())
            else:
                if s in self.sites:
                    target = code(s.target)
                    reads_itself = s.var in value_sources(s.value)
                    why = "its own adjoint reads it" if reads_itself else "an adjoint reads it"
                    self.record(self.tape_of(s), target, f"record {target}: overwritten next, and {why}", out, here)
                out.line(s.text())

    def forward_loop(self, loop: For | While, header: str, out: Writer, exact: set[str]) -> None:
        counter = self.counters.get(loop)
        if counter:
            out.line(f"{counter} = 0")
        with out.block(header):
            if counter:
                out.line(f"{counter} += 1")
            self.forward_sweep(loop.body, out, exact)
        if counter:
            self.record(INT_TAPE, counter, "record the trip count", out, exact)

    def forward_branch(self, s: If, out: Writer, exact: set[str], keyword: str) -> None:
        decided = s in self.decisions
        with out.block(f"{keyword} {code(s.test)}"):
            self.forward_sweep(s.body, out, exact)
            if decided:
                self.record(INT_TAPE, "1", "record the branch taken", out, exact)
        if not decided and len(s.orelse) == 1 and isinstance(s.orelse[0], If):
            self.forward_branch(s.orelse[0], out, exact, "elif")
        elif s.orelse or decided:
            with out.block("else"):
                self.forward_sweep(s.orelse, out, exact)
                if decided:
                    self.record(INT_TAPE, "0", "record the branch taken", out, exact)

    def record(self, which: tuple[str, str], value: str, comment: str, out: Writer, exact: set[str]) -> None:
        tape, top = which
        if tape not in exact:  # no bound known at the entry of this statement: grow by doubling
            self.helpers.add("reserve")
            with out.block(f"if {top} == {tape}.shape[0]"):
                out.line(f"{tape} = reserve({tape}, 2 * {top} + 16)")
        out.line(f"{tape}[{top}] = {value}  # {comment}")
        out.line(f"{top} += 1")

    def reserve(self, s: Stmt, out: Writer) -> set[str]:
        """Before a top-level statement: reserve each tape to a bound of its records, where one is known."""
        if not isinstance(s, (For, While, If)):
            return {"tape", "itape"}  # straight-line records are counted in the first allocation
        inside = assigned_names((s,))
        exact = set()
        for tape, top in (FLOAT_TAPE, INT_TAPE):
            size = self.bound_stmt(s, tape, inside)
            if size == "0":
                exact.add(tape)
            elif size is not None:
                self.helpers.add("reserve")
                out.line(
                    f"{tape} = reserve({tape}, {top} + {size})  # room for all its records: trip counts are known here"
                )
                exact.add(tape)
        return exact

    def bound(self, body: tuple[Stmt, ...], tape: str, inside: set[str]) -> str | None:
        """An upper bound of the records `body` makes on `tape`, computable before it runs, or None."""
        terms = []
        for s in body:
            term = self.bound_stmt(s, tape, inside)
            if term is None:
                return None
            terms.append(term)
        return _sum(terms)

    def bound_stmt(self, s: Stmt, tape: str, inside: set[str]) -> str | None:
        counts = "1" if tape == "itape" and s in self.counters else "0"
        if isinstance(s, Assign):
            return "1" if s in self.sites and self.tape_of(s)[0] == tape else "0"
        if isinstance(s, If):
            then, orelse = self.bound(s.body, tape, inside), self.bound(s.orelse, tape, inside)
            if then is None or orelse is None:
                return None
            decision = "1" if tape == "itape" and s in self.decisions else "0"
            return _sum([decision, _max(then, orelse)])
        if isinstance(s, While):
            body = self.bound(s.body, tape, inside)
            return counts if body == "0" else None
        if isinstance(s, For):
            body = self.bound(s.body, tape, inside)
            if body == "0" or body is None:
                return counts if body == "0" else None
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):
                return None
            return _sum([counts, _times(_trip_count(s), body)])
        return "0"

    def captured_value(self) -> str:
        """The primal result, copied where the reverse sweep will restore older elements."""
        fn = self.prog.fn
        restored = {s.var for s in self.sites if s.writes_element} | {n for p in self.permutes() for n in p.targets}
        items = []
        for v in fn.ret.values:
            array = isinstance(v, cst.Name) and self.prog.kinds[v.value] == ARRAY and v.value in restored
            items.append(f"{code(v)}.copy()" if array else code(v))
        value = tuple_text(items) if fn.ret.is_tuple else items[0]
        if fn.mutated:
            value = tuple_text([value, *(f"{m}.copy()" for m in fn.mutated)])
        return value

    def permutes(self) -> list[Permute]:
        return [s for s in walk_statements(self.prog.fn.body) if isinstance(s, Permute)]

    # --- reverse sweep ----------------------------------------------------------------------

    def initialize_adjoints(self, seeds: list[str], written_seeds: list[str], out: Writer) -> None:
        prog = self.prog
        seeded: dict[str, list[str]] = {}
        names = [v.value if isinstance(v, cst.Name) else None for v in prog.fn.ret.values] + list(prog.fn.mutated)
        for name, seed in zip(names, seeds + written_seeds, strict=True):
            if name is not None and prog.is_active(name):
                seeded.setdefault(name, []).append(seed)
        for var in sorted(prog.activity.active | set(prog.wrt)):
            if var in seeded:
                first, *rest = seeded[var]
                copy = ".copy()" if prog.kinds[var] == ARRAY else ""
                out.line(f"{bar(var)} = {first}{copy}")
                for seed in rest:
                    out.line(f"{bar(var)} += {seed}")
            else:
                out.line(f"{bar(var)} = {code(prog.zero(var))}")

    def reverse_sweep(self, body: tuple[Stmt, ...], out: Writer) -> None:
        for s in reversed(body):
            if isinstance(s, (For, While)):
                if self.has_work(s.body):
                    self.reverse_loop(s, out)
            elif isinstance(s, If):
                if s in self.decisions:
                    self.reverse_branch(s, out)
            elif isinstance(s, Permute):
                out.line(f"{', '.join(s.sources)} = {', '.join(s.targets)}  # undo: {s.text()}")
                if any(self.prog.is_active(t) for t in s.targets):
                    out.line(f"{', '.join(map(bar, s.sources))} = {', '.join(map(bar, s.targets))}")
            elif isinstance(s, Assign):
                self.reverse_assign(s, out)

    def reverse_assign(self, s: Assign, out: Writer) -> None:
        lines = self.adjoints.lines[s]
        if lines:
            out.comment(f"adjoint of: {s.text()}")
        if s in self.sites:
            tape, top = self.tape_of(s)
            out.line(f"{top} -= 1")
            out.line(f"{code(s.target)} = {tape}[{top}]  # restore the value {code(s.target)} had before")
        out.emit(lines)

    def reverse_branch(self, s: If, out: Writer) -> None:
        out.line("itop -= 1")
        then, orelse = self.has_work(s.body), self.has_work(s.orelse)
        with out.block(f"if itape[itop] == {1 if then else 0}"):
            self.reverse_sweep(s.body if then else s.orelse, out)
        if then and orelse:
            with out.block("else"):
                self.reverse_sweep(s.orelse, out)

    def reverse_loop(self, loop: For | While, out: Writer) -> None:
        counter = self.counters.get(loop)
        if counter:
            out.line("itop -= 1")
            out.line(f"{counter} = itape[itop]")
        if isinstance(loop, While):
            with out.block(f"for {self.prog.namer.fresh('_')} in range({counter})"):
                self.reverse_sweep(loop.body, out)
            return
        header, index = self.reversed_range(loop, counter)
        with out.block(header):
            if index:
                out.line(index)
            self.reverse_sweep(loop.body, out)

    def reversed_range(self, loop: For, counter: str | None) -> tuple[str, str | None]:
        """The header of the reversed loop, and a line that sets the loop variable if it cannot."""
        start, stop, step = loop.start, loop.stop, loop.step
        if not is_number(step):
            k = self.prog.namer.fresh("k")
            trips = counter or f"len(range({code(start)}, {code(stop)}, {code(step)}))"
            return f"for {k} in range({trips} - 1, -1, -1)", f"{loop.var} = {code(start)} + {k} * {code(paren(step))}"
        k = int(number_value(step))
        toward = -1 if k > 0 else 1  # one step before start, in the direction the loop went
        first = _offset(start, toward)
        if counter:
            last = f"{code(paren(start))} + ({counter} - 1) * {k}" if code(start) != "0" else f"({counter} - 1) * {k}"
            if k == 1:
                last = f"{counter} - 1" if code(start) == "0" else f"{code(paren(start))} + {counter} - 1"
        elif k in (1, -1):
            last = _offset(stop, -k)
        else:
            self.helpers.add("last_index")
            last = f"last_index({code(start)}, {code(stop)}, {k})"
        tail = "" if -k == 1 else f", {-k}"
        return f"for {loop.var} in range({last}, {first}{tail})", None


def _offset(node: cst.BaseExpression, delta: int) -> str:
    if isinstance(node, cst.Integer):
        return str(int(node.value) + delta)
    sign = "+" if delta > 0 else "-"
    return f"{code(paren(node))} {sign} {abs(delta)}"


def _trip_count(loop: For) -> str:
    start, stop = code(loop.start), code(paren(loop.stop))
    if code(loop.step) == "1":
        return stop if start == "0" else f"({stop} - {code(paren(loop.start))})"
    return f"len(range({start}, {code(loop.stop)}, {code(loop.step)}))"


def _sum(terms: list[str]) -> str:
    terms = [t for t in terms if t != "0"]
    if not terms:
        return "0"
    if all(t.isdigit() for t in terms):
        return str(sum(int(t) for t in terms))
    return terms[0] if len(terms) == 1 else f"({' + '.join(terms)})"


def _max(a: str, b: str) -> str:
    if a == b or b == "0":
        return a
    if a == "0":
        return b
    return f"max({a}, {b})"


def _times(a: str, b: str) -> str:
    return a if b == "1" else f"{a} * {b}"
