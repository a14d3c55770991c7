"""Pass 5b, reverse mode: a forward sweep that records what is overwritten, then the adjoints.

`f(x, ...)` becomes `f_vjp(x, ..., out_bar)` returning `(value, x_bar, ...)`. Each active
statement's adjoint is built first; the to-be-recorded analysis (`sourcead.tbr`) then reads
what those adjoints need and decides which overwrites the forward sweep records on a typed
tape (`tape` for floats, `itape` for ints). The reverse sweep runs the statements backwards,
restoring each recorded value at its mirror point, so every adjoint sees the values that its
statement saw. Values a partial derivative needs inside one statement are recomputed there.
"""

from __future__ import annotations

import libcst as cst

from .activity import value_sources
from .core import Assign, For, Stmt, walk_statements
from .emit import Line, Writer
from .exprs import code, dotted, names_in, negate, number, paren, unparen
from .kinds import ARRAY, INT
from .linearize import adjoint
from .naming import bar
from .program import Program
from .tbr import to_be_recorded


def reverse_function(prog: Program) -> tuple[str, list[str]]:
    """The text of `f_vjp` and the runtime helpers it calls."""
    return Reverser(prog).function()


class Reverser:
    def __init__(self, prog: Program):
        self.prog = prog
        fn = prog.fn
        self.statements = list(walk_statements(fn.body))
        self.in_loop = {s for loop in self.statements if isinstance(loop, For) for s in walk_statements(loop.body)}
        self.primal = set(fn.params) | {s.var for s in self.statements}
        self.adjoints = {s: self.adjoint_lines(s) for s in self.statements if isinstance(s, Assign)}
        reads = {s: set().union(*(line.reads() for line in lines)) & self.primal for s, lines in self.adjoints.items()}
        self.sites = to_be_recorded(fn.body, reads, self.primal)
        self.helpers: set[str] = set()

    # --- the adjoint of one statement -------------------------------------------------------

    def adjoint_lines(self, s: Assign) -> list[Line]:
        prog = self.prog
        if not prog.is_active(s.var):
            return []
        if prog.kinds[s.var] == ARRAY and not s.writes_element:
            return self.array_adjoint(s)
        lin = prog.linearize(s.value, s.origin)
        target_bar = prog.shadow(s.target, "_bar")
        if lin.root is None:
            return [Line(target_bar, "=", number(0.0))] if self.needs_reset(s) else []
        lines = [Line(cst.Name(t), "=", value) for t, value in lin.bindings]
        if s.accumulate is not None:
            seed = target_bar if s.accumulate == "+" else negate(target_bar)
            self.propagate(lin.root, seed, lines)
        elif s.var in value_sources(s.value):  # reads what it overwrites: take the adjoint first
            seed = cst.Name(prog.namer.temp())
            lines += [Line(seed, "=", target_bar), Line(target_bar, "=", number(0.0))]
            self.propagate(lin.root, seed, lines)
        else:
            self.propagate(lin.root, target_bar, lines)
            if self.needs_reset(s):
                lines.append(Line(target_bar, "=", number(0.0)))
        return lines

    def propagate(self, root, seed: cst.BaseExpression, lines: list[Line]) -> None:
        def accumulate(leaf: cst.BaseExpression, g: cst.BaseExpression) -> None:
            if isinstance(g, cst.UnaryOperation) and isinstance(g.operator, cst.Minus):
                lines.append(Line(self.prog.shadow(leaf, "_bar"), "-=", unparen(g.expression)))
            else:
                lines.append(Line(self.prog.shadow(leaf, "_bar"), "+=", g))

        def bind(value: cst.BaseExpression) -> cst.BaseExpression:
            temp = cst.Name(self.prog.namer.temp())
            lines.append(Line(temp, "=", value))
            return temp

        adjoint(root, seed, accumulate, bind)

    def array_adjoint(self, s: Assign) -> list[Line]:
        prog = self.prog
        defs = [t for t in self.statements if isinstance(t, Assign) and t.var == s.var and not t.writes_element]
        if len(defs) > 1 or s in self.in_loop or s.var in prog.fn.params:
            raise prog.parsed.error(
                f"the array `{s.var}` carries a derivative and is assigned more than once or inside a loop",
                s.origin,
                "Create each differentiated array once, before the loops, and write into its elements.",
            )
        value = s.value
        source = None
        if isinstance(value, cst.Call) and dotted(value.func).endswith(".copy"):
            source = value.func.value  # type: ignore[attr-defined]
        elif isinstance(value, cst.Name):
            written = {t.var for t in self.statements if isinstance(t, Assign) and t.writes_element}
            if {s.var, value.value} & written:
                raise prog.parsed.error(
                    f"`{s.var} = {value.value}` makes two names for one array that is then written, "
                    "which reverse mode does not support yet",
                    s.origin,
                    f"Write `{s.var} = {value.value}.copy()`.",
                )
            source = value  # never written: the same as a copy
        if isinstance(source, cst.Name) and prog.is_active(source.value):
            return [Line(cst.Name(bar(source.value)), "+=", cst.Name(bar(s.var)))]
        return []  # a fresh constant array

    def needs_reset(self, s: Assign) -> bool:
        """After the adjoint of `v = ...`, must `v_bar` be zeroed for an earlier value of `v`?"""
        if s.writes_element or s.var in self.prog.fn.params or s in self.in_loop:
            return True
        earlier = self.statements[: self.statements.index(s)]
        return any(isinstance(t, Assign) and t.var == s.var for t in earlier)

    # --- the whole function -----------------------------------------------------------------

    def function(self) -> tuple[str, list[str]]:
        prog, fn = self.prog, self.prog.fn
        namer = prog.namer
        outputs = fn.ret.values
        seeds = [namer.fresh(f"out{k}_bar" if fn.ret.is_tuple else "out_bar") for k in range(len(outputs))]
        value = namer.fresh("value")
        out = Writer()
        with out.block(f"def {fn.name}_vjp({', '.join(list(fn.params) + seeds)})"):
            out.comment(f"reverse mode (adjoints) of {fn.name} with respect to {', '.join(prog.wrt)}")
            active = sorted(prog.activity.active)
            out.comment(f"active (carry derivatives): {', '.join(active) if active else 'none'}")
            self.plan_reservations()
            self.allocate_tapes(out)
            out.comment("forward sweep" + ("" if self.sites else ": nothing the reverse sweep reads is overwritten"))
            self.forward_sweep(fn.body, out)
            out.line(f"{value} = {self.captured_value()}")
            out.comment("reverse sweep")
            self.initialize_adjoints(seeds, out)
            self.reverse_sweep(fn.body, out)
            grads = [bar(w) for w in prog.wrt]
            out.line(f"return {', '.join([value] + grads)}")
        return out.text(), sorted(self.helpers)

    def tape_of(self, s: Assign) -> tuple[str, str]:
        if not s.writes_element and self.prog.kinds[s.var] == INT:
            return "itape", "itop"
        return "tape", "top"

    def allocate_tapes(self, out: Writer) -> None:
        for tape, top, dtype in (("tape", "top", ""), ("itape", "itop", ", np.int64")):
            straight = [s for s in self.sites if self.tape_of(s)[0] == tape and s not in self.in_loop]
            if any(self.tape_of(s)[0] == tape for s in self.sites):
                out.line(f"{tape} = np.empty({len(straight)}{dtype})")
                out.line(f"{top} = 0")
        recorded = {s.var for s in self.sites & self.in_loop if not s.writes_element} - set(self.prog.fn.params)
        for var in sorted(recorded - self.defined_before_its_loop(recorded)):
            zero = "0" if self.prog.kinds[var] == INT else "0.0"
            out.line(f"{var} = {zero}  # recorded in a loop: defined before its first record")

    def defined_before_its_loop(self, names: set[str]) -> set[str]:
        """Names assigned at the top level before the first top-level loop that records them."""
        defined: set[str] = set()
        done: set[str] = set()
        for s in self.prog.fn.body:
            if isinstance(s, For):
                inside = {t.var for t in self.sites if t in set(walk_statements(s.body))}
                done |= inside & names
            elif s.var not in done:
                defined.add(s.var)
        return defined & names

    def forward_sweep(self, body: tuple[Stmt, ...], out: Writer) -> None:
        for s in body:
            if isinstance(s, For):
                for tape, top, size in self.reservations.get(s, ()):
                    self.helpers.add("reserve")
                    out.line(f"{tape} = reserve({tape}, {top} + {size})  # exact size: trip counts are known here")
                with out.block(f"for {s.var} in {s.range_text()}"):
                    self.forward_sweep(s.body, out)
                continue
            if s in self.sites:
                self.record(s, out)
            out.line(s.text())

    def record(self, s: Assign, out: Writer) -> None:
        tape, top = self.tape_of(s)
        target = code(s.target)
        reason = "its own adjoint reads it" if s.var in value_sources(s.value) else "an adjoint reads it"
        if s not in self.exact:  # trip count unknown at loop entry: grow by doubling
            self.helpers.add("reserve")
            with out.block(f"if {top} == {tape}.shape[0]"):
                out.line(f"{tape} = reserve({tape}, 2 * {top} + 16)")
        out.line(f"{tape}[{top}] = {target}  # record {target}: overwritten next, and {reason}")
        out.line(f"{top} += 1")

    def plan_reservations(self) -> None:
        """Sizes of the tapes per top-level loop nest, where the trip counts are known at its entry."""
        self.reservations: dict[For, list[tuple[str, str, str]]] = {}
        self.exact: set[Assign] = {s for s in self.sites if s not in self.in_loop}
        for loop in self.prog.fn.body:
            if not isinstance(loop, For):
                continue
            inside = set(walk_statements(loop.body))
            written = {t.var for t in walk_statements((loop,))}
            for tape, top in (("tape", "top"), ("itape", "itop")):
                sites = {s for s in self.sites if s in inside and self.tape_of(s)[0] == tape}
                size = self.records_per_run(loop, tape, written) if sites else None
                if size is not None:
                    self.reservations.setdefault(loop, []).append((tape, top, size))
                    self.exact |= sites

    def records_per_run(self, loop: For, tape: str, written: set[str]) -> str | None:
        bounds = (loop.start, loop.stop, loop.step)
        if any(names_in(b) & written for b in bounds):
            return None
        terms = []
        straight = sum(1 for s in loop.body if isinstance(s, Assign) and s in self.sites and self.tape_of(s)[0] == tape)
        if straight:
            terms.append(str(straight))
        for inner in loop.body:
            if isinstance(inner, For) and any(
                isinstance(t, Assign) and t in self.sites for t in walk_statements(inner.body)
            ):
                size = self.records_per_run(inner, tape, written)
                if size is None:
                    return None
                terms.append(size)
        if not terms:
            return None
        per_iteration = terms[0] if len(terms) == 1 else f"({' + '.join(terms)})"
        trips = _trip_count(loop)
        return trips if per_iteration == "1" else f"{trips} * {per_iteration}"

    def captured_value(self) -> str:
        element_restored = {s.var for s in self.sites if s.writes_element}
        items = []
        for v in self.prog.fn.ret.values:
            text = code(v)
            items.append(f"{text}.copy()" if isinstance(v, cst.Name) and v.value in element_restored else text)
        if self.prog.fn.ret.is_tuple:
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        return items[0]

    def initialize_adjoints(self, seeds: list[str], out: Writer) -> None:
        prog = self.prog
        seeded: dict[str, list[str]] = {}
        for v, seed in zip(prog.fn.ret.values, seeds, strict=True):
            if isinstance(v, cst.Name) and prog.is_active(v.value):
                seeded.setdefault(v.value, []).append(seed)
        for var in sorted(prog.activity.active | set(prog.wrt)):
            if var in seeded:
                first, *rest = seeded[var]
                copy = ".copy()" if prog.kinds[var] == ARRAY else ""
                out.line(f"{bar(var)} = {first}{copy}")
                for seed in rest:
                    out.line(f"{bar(var)} += {seed}")
            else:
                out.line(f"{bar(var)} = {code(prog.zero(var))}")

    def has_reverse_work(self, body: tuple[Stmt, ...]) -> bool:
        return any(isinstance(s, Assign) and (s in self.sites or self.adjoints[s]) for s in walk_statements(body))

    def reverse_sweep(self, body: tuple[Stmt, ...], out: Writer) -> None:
        for s in reversed(body):
            if isinstance(s, For):
                if self.has_reverse_work(s.body):
                    with out.block(f"for {s.var} in {self.reversed_range(s)}"):
                        self.reverse_sweep(s.body, out)
                continue
            lines = self.adjoints[s]
            if lines:
                out.comment(f"adjoint of: {s.text()}")
            if s in self.sites:
                tape, top = self.tape_of(s)
                out.line(f"{top} -= 1")
                out.line(f"{code(s.target)} = {tape}[{top}]  # restore the value {code(s.target)} had before")
            out.emit(lines)

    def reversed_range(self, loop: For) -> str:
        start, stop, step = loop.start, loop.stop, loop.step
        first = _minus_one(start)
        if code(step) == "1":
            return f"range({_minus_one(stop)}, {first}, -1)"
        self.helpers.add("last_index")
        return f"range(last_index({code(start)}, {code(stop)}, {code(step)}), {first}, -{code(paren(step))})"


def _minus_one(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Integer):
        return str(int(node.value) - 1)
    return f"{code(paren(node))} - 1"


def _trip_count(loop: For) -> str:
    start, stop, step = code(loop.start), code(paren(loop.stop)), code(loop.step)
    if step == "1":
        return stop if start == "0" else f"({stop} - {code(paren(loop.start))})"
    return f"len(range({start}, {code(loop.stop)}, {step}))"
