"""Whole-array constructs that issue 38's outside generator wrote and ours did not.

Augmented assignments on whole arrays and slices (also inside helpers that write their argument),
written arguments rebound or swapped afterwards, helpers returning arrays that are then written,
`for row in A` followed by writes, a `prange` loop beside a whole array recorded in a time loop,
norms along an axis at an exactly zero row, scalars written into rows, writes and reads through a
mask. Each is a feature of `FEATURES`; all are in the README's supported subset.

They are drawn from a random stream of their own (`ArrayExtras`): a program either gets one or two
of them (`SHARE` of the programs; all with `array_extras_all`) or none, and the main generator's
stream never sees them, so a program that gets none is, to the byte, the program of the same
seed before these features existed. The constructs are emitted as straight code at the top level
of the main function, between the main generator's statements or just before its return, using
the arrays and floats in scope, names of their own (none in the main generator's pools), and fold
their values into the result (`sx + <the result>`).
"""

from __future__ import annotations

import random
from typing import Any

ARRAY_FEATURES: dict[str, tuple[bool, str]] = {
    "inplace_whole": (True, "augmented assignments of whole arrays and slices: x += y, x[1:] *= c, A[i] -= x,"
                            " A[:, j] /= c, x **= 2.0 (also in a time loop, rows in a prange)"),
    "inplace_helpers": (True, "helpers writing their argument in place (C *= c; C += B), one or two levels deep"),
    "rebind_written": (True, "written arguments rebound or swapped afterwards: x[0] = ...; x = x * 2.0;"
                             " v = np.zeros_like(x); x, v = v, x"),
    "array_helpers": (True, "helpers returning a fresh array that is then written: y = h(x); y[0] = 0.0"),
    "row_loops": (True, "for row in A (for v in x), then writes into A (x)"),
    "prange_tape": (True, "a prange reduction, then a whole array rebound in a time loop (recorded whole)"),
    "axis_norms": (True, "np.linalg.norm along an axis (keepdims, ord) of an array with an exactly zero row"),
    "scalar_rows": (True, "a scalar written into a row or a slice: h[t] = x[t], h[:, j] = s, y[1:] = s"),
    "masked_writes": (True, "writes through a boolean mask in the index: x[x > 0.5] = s, x[np.logical_and(...)] *= c"),
    "masked_reads": (True, "reads through a boolean mask, in a name or not: np.sum(x[m] * y[m]), np.extract(m, x),"
                           " A[A > 0.5], and in a loop whose mask is computed again or recorded"),
    "array_extras_all": (False, "every program gets one or two of the constructs above (by default about 30%)"),
}  # fmt: skip
KINDS = [name for name in ARRAY_FEATURES if name not in ("array_extras_all", "masked_writes", "masked_reads")]
LATER = ("masked_writes", "masked_reads")  # drawn apart: the programs drawn before they existed keep their text
CONSTRUCTS = [*KINDS, *LATER]  # every construct
SHARE = 0.3  # programs that get any of them
SALT = 300  # their stream: program_seed(seed, index, SALT + attempt)

_ARRAYS = ["xw", "vb", "hz", "bz", "yh", "ua", "wz", "cz", "uq", "hq"]
_FLOATS = ["sx", "sr", "sn", "sp", "sw", "sy", "sv"]
_LOOPS = ["ti", "ri", "pj", "ci", "tj"]


class ArrayExtras:
    """The constructs one program gets, and how they are written into the generator's function."""

    def __init__(self, rnd: random.Random, features: frozenset[str]):
        self.rnd = rnd
        enabled = [k for k in KINDS if k in features]
        share = 1.0 if "array_extras_all" in features else SHARE
        self.pending: list[str] = []
        if enabled and rnd.random() < share:
            self.pending = rnd.sample(enabled, min(len(enabled), rnd.choice([1, 1, 2])))
        shadow = random.Random()
        shadow.setstate(rnd.getstate())  # a stream of its own that leaves rnd's as it was
        later = random.Random(shadow.random())
        self.pending += [kind for kind in LATER if kind in features and later.random() < share / 2]
        self.used: set[str] = set()
        self.helpers: list[str] = []  # module-level sources, placed before the main function
        self.results: list[str] = []  # floats added to the main function's result
        self.rebound: set[str] = set()  # parameters no longer naming the caller's array
        self.gen: Any = None
        self.sc: Any = None

    # --- the hooks the generator calls ---

    def maybe(self, gen: Any, sc: Any) -> None:
        """Before a statement of the main function: sometimes emit the next construct here (only at
        its top level: straight code that always runs)."""
        if self.pending and not gen.in_helper and not sc.in_loop and gen.fn.indent == 1 and self.rnd.random() < 0.3:
            self.emit(gen, sc)

    def flush(self, gen: Any, sc: Any) -> None:
        """Before the main function's epilogue: the constructs not emitted yet."""
        while self.pending:
            self.emit(gen, sc)

    def fold(self, result: str) -> str:
        """The return expression with this program's floats added (a tuple: to its first item)."""
        return "".join(f"{name} + " for name in self.results) + result

    def helper_text(self) -> str:
        return "\n\n\n".join(self.helpers)

    # --- small utilities ---

    def emit(self, gen: Any, sc: Any) -> None:
        self.gen, self.sc = gen, sc
        kind = self.pending.pop(0)
        if getattr(self, f"c_{kind}")():
            self.used.add(kind)

    def line(self, text: str, depth: int = 0) -> None:
        self.gen.fn.emit("    " * depth + text)

    def name(self, pool: list[str], kind: str) -> str:
        taken = self.gen.fn.kinds
        options = [n for n in pool if n not in taken]
        name = self.rnd.choice(options) if options else f"{pool[0]}{len(taken)}"
        while name in taken:
            name += "_"
        taken[name] = kind
        return name

    def arrays(self, ndim: int | None = None, writable: bool = False) -> list[tuple[str, tuple[int, ...]]]:
        return [
            (nm, a.shape)
            for nm, a in self.sc.arrays.items()
            if a.ints is None and len(a.shape) <= 2 and (ndim is None or len(a.shape) == ndim)
            and (a.writable or not writable)
        ]  # fmt: skip

    def params(self) -> list[tuple[str, tuple[int, ...]]]:
        """Writable array parameters still naming the caller's array."""
        return [
            (nm, shape) for nm, shape in self.arrays(writable=True)
            if self.sc.arrays[nm].param == nm and not self.sc.arrays[nm].local and nm not in self.rebound
        ]  # fmt: skip

    def const(self) -> str:
        return self.rnd.choice(["0.5", "1.2", "0.75", "2.0", "-0.5", "0.25"])

    def leaf(self) -> str:
        """A float: a float in scope, an element of an array at a constant index, or a constant."""
        rnd = self.rnd
        floats = list(self.sc.floats)
        elems = self.arrays()
        r = rnd.random()
        if floats and r < 0.4:
            return rnd.choice(floats)
        if elems and r < 0.85:
            nm, shape = rnd.choice(elems)
            return f"{nm}[{', '.join(str(rnd.randrange(L)) for L in shape)}]"
        return self.const()

    def scalar(self) -> str:
        a, b = self.leaf(), self.leaf()
        return self.rnd.choice([a, f"{self.const()} * {a}", f"np.sin({a})", f"{a} / (1.0 + {b} * {b})", f"{a} * {b}"])

    def sources(self, shape: tuple[int, ...], avoid: str = "") -> list[str]:
        """Array expressions of `shape` (whole arrays, rows, columns, shifted slices), none of `avoid`."""
        out = []
        for nm, s in self.arrays():
            a = self.sc.arrays[nm]
            if nm == avoid or (avoid and a.param is None and not a.local):  # a view of avoid, maybe
                continue
            if s == shape:
                out.append(nm)
            if len(s) == 2 and len(shape) == 1:
                if s[1] == shape[0]:
                    out.append(f"{nm}[{self.rnd.randrange(s[0])}]")
                if s[0] == shape[0]:
                    out.append(f"{nm}[:, {self.rnd.randrange(s[1])}]")
            if len(s) == 1 and len(shape) == 1 and s[0] == shape[0] + 1:
                out.append(self.rnd.choice([f"{nm}[1:]", f"{nm}[:-1]"]))
        return out

    def array_value(self, shape: tuple[int, ...], avoid: str = "") -> str:
        """An array expression of `shape` (or a float, which broadcasts)."""
        options = self.sources(shape, avoid)
        if not options or self.rnd.random() < 0.15:
            return self.scalar()
        src = self.rnd.choice(options)
        return self.rnd.choice([src, f"{self.const()} * {src}", f"np.sin({src})", f"{src} * {src}"])

    def fold_sum(self, expr: str) -> None:
        name = self.name(_FLOATS, "f")
        self.line(f"{name} = {expr}")
        self.results.append(name)

    def folded(self, nm: str) -> None:
        """A local array's value into the result (a written argument is an output already)."""
        a = self.sc.arrays.get(nm)
        if a is None or a.local or a.param != nm or nm in self.rebound or self.rnd.random() < 0.3:
            self.fold_sum(self.rnd.choice([f"np.sum({nm} * {nm})", f"np.sum(np.sin({nm}))", f"np.mean({nm})"]))

    # --- the constructs (True: emitted) ---

    def targets(self) -> list[tuple[str, str, tuple[int, ...]]]:
        """(array, part, shape of the part) that an augmented assignment may write."""
        out = []
        for nm, s in self.arrays(writable=True):
            out += [(nm, nm, s), (nm, f"{nm}[:]", s)]
            if s[0] >= 2:
                out.append((nm, f"{nm}[1:]", (s[0] - 1, *s[1:])))
            if len(s) == 2:
                out.append((nm, f"{nm}[{self.rnd.randrange(s[0])}]", (s[1],)))
                out.append((nm, f"{nm}[:, {self.rnd.randrange(s[1])}]", (s[0],)))
        return out

    def augment(self, part: str, shape: tuple[int, ...], avoid: str, depth: int = 0) -> None:
        rnd = self.rnd
        op = rnd.choice(["+=", "+=", "-=", "*=", "/=", "**="])
        if op in ("+=", "-="):
            value = self.array_value(shape, avoid)
        elif op == "*=":
            value = rnd.choice([self.const(), f"(1.0 + 0.5 * np.sin({self.leaf()}))", "1.1"])
        elif op == "/=":
            e = self.leaf()
            value = rnd.choice(["2.0", f"(1.0 + {e} * {e})", "1.5"])
        else:
            value = rnd.choice(["2.0", "2"])
        self.line(f"{part} {op} {value}", depth)

    def c_inplace_whole(self) -> bool:
        rnd = self.rnd
        targets = self.targets()
        if not targets:
            return False
        nm, part, shape = rnd.choice(targets)
        where = rnd.random()
        two_d = [(t, s) for t, s in self.arrays(2, writable=True) if t not in self.rebound]
        if where < 0.15 and two_d:  # rows in a prange: each iteration its own row
            t, s = rnd.choice(two_d)
            var = self.name(_LOOPS, "i")
            self.line(f"for {var} in numba.prange({t}.shape[0]):")
            row = self.rnd.choice(self.sources((s[1],), t) or [self.const()])
            self.line(f"{t}[{var}] {rnd.choice(['+=', '-='])} {rnd.choice(['', '0.5 * '])}{row}", 1)
            nm = t
        elif where < 0.4:  # a time loop
            var = self.name(_LOOPS, "i")
            self.line(f"for {var} in range({rnd.randint(2, 3)}):")
            self.line(f"{part} *= {rnd.choice(['0.9', '0.5', '-0.75'])}", 1)
            self.line(f"{part} += {rnd.choice(['0.1 * ', ''])}{self.array_value(shape, nm)}", 1)
        else:
            for _ in range(rnd.choice([1, 1, 2])):
                self.augment(part, shape, nm)
                nm, part, shape = rnd.choice([(nm, part, shape)] + [t for t in targets if t[0] == nm])
        self.folded(nm)
        return True

    def c_inplace_helpers(self) -> bool:
        rnd = self.rnd
        pairs = [(t, s, self.sources(s, t)) for t, s in self.arrays(writable=True)]
        pairs = [(t, s, src) for t, s, src in pairs if src]
        if not pairs:
            return False
        t, s, src = rnd.choice(pairs)
        k = len(self.helpers)
        inner = self.name([f"inplace_h{k}", f"scale_add{k}"], "h")
        lines = [rnd.choice(["C *= c", "C /= (1.0 + c * c)", "C -= c * B"]), rnd.choice(["C += B", "C[1:] += B[:-1]"])]
        if rnd.random() < 0.3:
            lines.append(rnd.choice(["C **= 2.0", "C[0] *= c", "C[:] += 0.5"]))
        returns = rnd.random() < 0.3
        body = "\n".join(f"    {x}" for x in lines) + ("\n    return np.sum(C * B)" if returns else "")
        self.helpers.append(f"def {inner}(C, B, c):\n{body}")
        call = inner
        args = f"{t}, {rnd.choice(src)}, {self.leaf()}"
        if rnd.random() < 0.4:  # two levels: the outer helper passes its argument on
            outer = self.name([f"update_h{k}", f"step_h{k}"], "h")
            self.helpers.append(f"def {outer}(D, E, c):\n    {inner}(D, E, c)\n    D -= 0.1 * E")
            call, returns = outer, False
        if returns:
            self.fold_sum(f"{call}({args})")
        else:
            self.line(f"{call}({args})")
        self.folded(t)
        return True

    def c_rebind_written(self) -> bool:
        rnd = self.rnd
        params = self.params()
        if not params:
            return False
        x, s = rnd.choice(params)
        index = ", ".join(str(rnd.randrange(L)) for L in s)
        how = rnd.choice(["rebind", "rebind", "swap", "swap_loop"] if len(s) == 1 else ["rebind", "swap"])
        self.rebound.add(x)
        if how == "rebind":
            self.line(f"{x}[{index}] = {self.scalar()}" if rnd.random() < 0.7 else f"{x} += {self.array_value(s, x)}")
            self.line(f"{x} = {rnd.choice([f'{x} * 2.0', f'np.sin({x}) + 0.5', f'{x} + {self.array_value(s, x)}'])}")
            self.folded(x)
            return True
        v = self.name(_ARRAYS, "a")
        self.line(f"{v} = {rnd.choice([f'np.zeros_like({x})', f'{x} * 0.5', f'np.ones_like({x})'])}")
        if how == "swap":
            self.line(f"{x}, {v} = {v}, {x}")
            through = rnd.choice([v, v, x])  # v is the caller's array now
            self.line(f"{through}[{index}] = {self.scalar()}")
        else:
            L = s[0]
            t, i = self.name(_LOOPS, "i"), self.name(_LOOPS, "i")
            self.line(f"for {t} in range({rnd.randint(1, 3)}):")
            self.line(f"for {i} in range({rnd.choice([str(L), f'len({x})'])}):", 1)
            self.line(f"{v}[{i}] = 0.5 * {x}[{i}] + 0.25 * {x}[({i} + 1) % {L}]", 2)
            self.line(f"{x}, {v} = {v}, {x}", 1)
        self.fold_sum(f"np.sum({x} * {v})")
        return True

    def c_array_helpers(self) -> bool:
        rnd = self.rnd
        arrays = self.arrays()
        if not arrays:
            return False
        x, s = rnd.choice(arrays)
        h = self.name([f"arr_h{len(self.helpers)}", f"make_h{len(self.helpers)}"], "h")
        body = rnd.choice(
            [
                "    return u * a + 0.5",
                "    return np.sin(u) * a",
                "    w = u.copy()\n    w[0] = a * w[0]\n    return w",
                "    return 2.0 * u - a",
            ]
        )
        self.helpers.append(f"def {h}(u, a):\n{body}")
        y = self.name(_ARRAYS, "a")
        self.line(f"{y} = {h}({x}, {self.leaf()})")
        index = ", ".join(str(rnd.randrange(L)) for L in s)
        write = rnd.choice(
            [f"{y}[{index}] = 0.0", f"{y}[{index}] = {self.scalar()}", f"{y} += {self.array_value(s, y)}",
             f"{y}[1:] *= 0.5", f"{y}[{index}] += {self.leaf()}"]
        )  # fmt: skip
        self.line(write)
        self.fold_sum(rnd.choice([f"np.sum({y} * {y})", f"np.sum(np.sin({y}))", f"{y}[{index}] + np.mean({y})"]))
        return True

    def c_row_loops(self) -> bool:
        rnd = self.rnd
        two = self.arrays(2)
        one = self.arrays(1)
        if not two and not one:
            return False
        acc = self.name(_FLOATS, "f")
        self.line(f"{acc} = 0.0")
        if two and (rnd.random() < 0.7 or not one):
            A, s = rnd.choice(two)
            row = self.name(["row", "r_", "ra"], "a")
            self.line(f"for {row} in {A}:")
            body = [f"np.sum(np.sin({row}))", f"np.dot({row}, {row})", f"{row}[0] * {self.const()}",
                    f"np.sum({row} * {row})"]  # fmt: skip
        else:
            A, s = rnd.choice(one)
            row = self.name(["xv", "el"], "f")
            self.line(f"for {row} in {A}:")
            body = [f"{row} * {row}", f"np.sin({row})", f"{self.const()} * {row}"]
        self.line(f"{acc} += {rnd.choice(body)}", 1)
        self.results.append(acc)
        writable = [nm for nm, _ in self.arrays(writable=True)]
        target = A if A in writable else rnd.choice(writable) if writable and rnd.random() < 0.5 else None
        if target is not None:
            shape = self.sc.arrays[target].shape
            index = ", ".join(str(rnd.randrange(L)) for L in shape)
            self.line(f"{target}[{index}] = {rnd.choice(['1.0', self.scalar()])}")
            self.folded(target)
        return True

    def c_prange_tape(self) -> bool:
        rnd = self.rnd
        one = self.arrays(1)
        if not one:
            return False
        x, (L,) = rnd.choice(one)
        sp, var = self.name(_FLOATS, "f"), self.name(_LOOPS, "i")
        self.line(f"{sp} = 0.0")
        self.line(f"for {var} in numba.prange({rnd.choice([f'len({x})', f'{x}.shape[0]', str(L)])}):")
        floats = list(self.sc.floats)
        terms = [f"{x}[{var}] * {x}[{var}]", f"np.sin({x}[{var}])"] + ([rnd.choice(floats)] if floats else [])
        term = rnd.choice(terms)
        self.line(f"{sp} += {term}", 1)
        u, t = self.name(_ARRAYS, "a"), self.name(_LOOPS, "i")
        self.line(f"{u} = {rnd.choice([f'{x} + 0.0', f'{x} * 1.0', f'{x}.copy()'])}")
        self.line(f"for {t} in range({rnd.randint(2, 4)}):")
        step = rnd.choice([f"{u} + 0.1 * np.sin({x})", f"0.5 * {u} + {x} * {u}", f"{u} + 0.1 * {x}"])
        self.line(f"{u} = {step}", 1)
        self.results.append(sp)
        self.fold_sum(f"np.sum({u} * {u})")
        return True

    def c_axis_norms(self) -> bool:
        rnd = self.rnd
        two = self.arrays(2)
        one = self.arrays(1)
        if not two and not one:
            return False
        b = self.name(_ARRAYS, "a")
        if two:
            A, (r, c) = rnd.choice(two)
            self.line(f"{b} = {rnd.choice([f'{A} * 1.0', f'{A}.copy()', f'np.sin({A})'])}")
        else:
            (p, (r,)), (q, (c,)) = rnd.choice(one), rnd.choice(one)
            self.line(f"{b} = np.outer({p}, {q})")
        axis = rnd.choice([0, 1, -1])
        zero = rnd.randrange(r if axis != 0 else c)  # the row (column for axis=0) made exactly zero
        i = self.name(_LOOPS, "i")
        if axis == 0:
            self.line(f"for {i} in range({r}):")
            self.line(f"{b}[{i}, {zero}] = 0.0", 1)
        else:
            self.line(f"for {i} in range({c}):")
            self.line(f"{b}[{zero}, {i}] = 0.0", 1)
        order = rnd.choice(["", "", "", ", 2", ", ord=2", ", ord=1", ", ord=np.inf"])
        keep = ", keepdims=True" if rnd.random() < 0.25 else ""
        norms = f"np.linalg.norm({b}{order}, axis={axis}{keep})"
        full = f"np.linalg.norm({b}[{zero if axis != 0 else 0}])"  # the full norm of the zero row
        sums = [f"np.sum({norms})", f"np.sum({norms} * {self.const()})", f"{full} + np.sum({norms})"]
        self.fold_sum(rnd.choice(sums))
        return True

    def c_scalar_rows(self) -> bool:
        rnd = self.rnd
        one = self.arrays(1)
        writable1 = [nm for nm, s in self.arrays(1, writable=True) if s[0] >= 2]
        if writable1 and (not one or rnd.random() < 0.25):
            y = rnd.choice(writable1)
            self.line(f"{y}[{rnd.choice(['1:', ':', ':-1'])}] = {self.scalar()}")
            self.folded(y)
            return True
        if not one:
            return False
        x, (L,) = rnd.choice(one)
        T, m = rnd.randint(2, 4), rnd.randint(2, 4)
        h, t = self.name(_ARRAYS, "a"), self.name(_LOOPS, "i")
        self.line(f"{h} = np.zeros(({T}, {m}))")
        if rnd.random() < 0.3:  # into a column, at the top level
            self.line(f"{h}[:, {rnd.randrange(m)}] = {self.scalar()}")
        self.line(f"for {t} in range({T}):")
        value = f"{x}[{t}]" if T <= L else f"{x}[{t} % {L}]"
        value = rnd.choice([value, f"{self.const()} * {value}", f"np.sin({value})"])
        self.line(f"{h}[{t}{rnd.choice(['', ', :', ', 1:'])}] = {value}", 1)
        self.fold_sum(rnd.choice([f"np.sum({h} * {h})", f"np.sum(np.sin({h}))", f"np.sum({h}[:, 0]) * {x}[0]"]))
        return True

    def c_masked_writes(self) -> bool:
        rnd = self.rnd
        owners = [
            (nm, sh) for nm, sh in self.arrays(writable=True) if self.sc.arrays[nm].local or nm in dict(self.params())
        ]
        if not owners:
            return False
        nm, shape = rnd.choice(owners)
        other = rnd.choice([t for t, u in self.arrays() if u == shape])  # nm itself, or an array of its shape
        threshold = rnd.choice(["0.5", "0.0", "-0.25", "1.0"])
        mask = rnd.choice(
            [
                f"{nm} > {threshold}",
                f"{other} < {threshold}",
                f"np.isnan({nm})",
                f"np.logical_and({nm} > -0.5, {other} < {threshold})",
                f"np.logical_not({nm} <= {threshold})",
            ]
        )
        op = rnd.choice(["=", "=", "+=", "-=", "*="])
        value = rnd.choice(["0.5", "2.0", "-1.0"]) if op == "*=" else self.scalar()
        if rnd.random() < 0.3:  # in a time loop (the mask changes as the array does)
            var = self.name(_LOOPS, "i")
            self.line(f"for {var} in range({rnd.randint(2, 3)}):")
            self.line(f"{nm}[{mask}] {op} {value}", 1)
        else:
            self.line(f"{nm}[{mask}] {op} {value}")
        self.folded(nm)
        return True

    def c_masked_reads(self) -> bool:
        rnd = self.rnd
        arrays = self.arrays()
        if not arrays:
            return False
        nm, shape = rnd.choice(arrays)
        other = rnd.choice([t for t, u in arrays if u == shape])  # nm itself, or an array of its shape
        threshold = rnd.choice(["0.5", "0.0", "-0.25"])
        mask = rnd.choice([f"{other} > {threshold}", f"np.logical_and({nm} > -0.5, {other} < {threshold})"])
        form = rnd.choice(["named", "inline", "extract", "loop"])
        if form == "named":
            m = self.name(_ARRAYS, "a")
            self.line(f"{m} = {mask}")
            self.fold_sum(rnd.choice([f"np.sum({nm}[{m}] * {other}[{m}])", f"np.sum(np.sin({nm}[{m}]))"]))
        elif form == "inline":
            self.fold_sum(rnd.choice([f"np.sum({nm}[{mask}] ** 2)", f"{self.scalar()} * np.sum({nm}[{mask}])"]))
        elif form == "extract":
            self.fold_sum(f"np.sum(np.extract({mask}, {nm}) * {self.const()})")
        else:  # one mask per step: computed again in the reverse sweep, or recorded where it changes
            var, m, acc = self.name(_LOOPS, "i"), self.name(_ARRAYS, "a"), self.name(_FLOATS, "f")
            self.line(f"{acc} = 0.0")
            self.line(f"for {var} in range({rnd.randint(2, 3)}):")
            self.line(f"{m} = {other} > {threshold} + 0.25 * {var}", 1)
            self.line(f"{acc} = {acc} + np.sum({nm}[{m}] ** 2) * ({var} + 1.0)", 1)
            self.results.append(acc)
        return True
