"""Dead-code elimination (`sourcead/deadcode.py`), pinned as text: what goes and what must stay.

Each case is a generated-looking function before and after the pass. The cases that must stay
are the ones a plain liveness analysis, or a pass that forgot an edge, gets wrong: reads after a
`break`, the next iteration's reads, loop variables read after their loop, effects of calls
that are not primitives. The numeric meaning of the pass on real generated code is checked by
every `grad` and `vjp` test (test_zoo_numeric.py runs `grad` against finite differences on every
float-valued zoo case; the fuzzer checks `grad` against finite differences).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from sourcead.ir.exprs import template
from sourcead.postpass.deadcode import eliminate_dead_code, is_pure

CASES = {
    "a reduction only the value reads, and the loops left empty": (
        """
        def f_grad(x, n, out_bar):
            total = 0.0
            for i in prange(n):
                z = 0.0
                for j in range(n):
                    z += x[i, j]
                total += math.exp(z)
            x_bar = np.zeros_like(x)
            x_bar[0, 0] = out_bar
            return (x_bar,)
        """,
        """
        def f_grad(x, n, out_bar):
            x_bar = np.zeros_like(x)
            x_bar[0, 0] = out_bar
            return (x_bar,)
        """,
    ),
    "an accumulation an element write reads stays, with what it reads": (
        """
        def f(x, n):
            s = 0.0
            t = 1.0
            for i in range(n):
                s += x[i]
                t *= x[i]
            x[0] = s
            return (x,)
        """,
        """
        def f(x, n):
            s = 0.0
            for i in range(n):
                s += x[i]
            x[0] = s
            return (x,)
        """,
    ),
    "the next iteration's read keeps a value; its last one is dead": (
        """
        def f(x, n):
            p = 0.0
            q = 0.0
            for i in range(n):
                x[i] = p
                p = x[i] * 2.0
                q = p
            return (x,)
        """,
        """
        def f(x, n):
            p = 0.0
            for i in range(n):
                x[i] = p
                p = x[i] * 2.0
            return (x,)
        """,
    ),
    "a loop variable read after its loop keeps the loop": (
        """
        def f(x, n):
            for i in range(n):
                pass
            x[0] = i
            return (x,)
        """,
        """
        def f(x, n):
            for i in range(n):
                pass
            x[0] = i
            return (x,)
        """,
    ),
    "what a break leaves is live after the loop; continue goes to the head": (
        """
        def f(x, n):
            a = 0.0
            b = 0.0
            c = 0.0
            for i in range(n):
                a = x[i]
                if a > 1.0:
                    break
                b = x[i] + 1.0
                if b > 2.0:
                    continue
                c = b
            x[0] = a
            return (x,)
        """,
        """
        def f(x, n):
            a = 0.0
            for i in range(n):
                a = x[i]
                if a > 1.0:
                    break
                b = x[i] + 1.0
                if b > 2.0:
                    continue
            x[0] = a
            return (x,)
        """,
    ),
    "a while loop's test keeps what it reads": (
        """
        def f(x, h):
            t = 0.0
            s = 0.0
            while t < 1.0:
                t += h
                s += t
            x[0] = t
            return (x,)
        """,
        """
        def f(x, h):
            t = 0.0
            while t < 1.0:
                t += h
            x[0] = t
            return (x,)
        """,
    ),
    "a placeholder is live where a branch may not assign its name": (
        """
        def f(x, c):
            r = 0.0
            s = 0.0
            if c > 0.0:
                r = x[0]
                s = x[1]
            else:
                s = x[2]
            x[0] = r + s
            return (x,)
        """,
        """
        def f(x, c):
            r = 0.0
            if c > 0.0:
                r = x[0]
                s = x[1]
            else:
                s = x[2]
            x[0] = r + s
            return (x,)
        """,
    ),
    "calls that are not primitives stay, and so does what they read": (
        """
        def f(x, n):
            m = n + 1
            tape = reserve(x, m)
            add_chunk_rows(x, x, 0)
            k = np.sum(x)
            if check(x):
                pass
            return (x,)
        """,
        """
        def f(x, n):
            m = n + 1
            tape = reserve(x, m)
            add_chunk_rows(x, x, 0)
            if check(x):
                pass
            return (x,)
        """,
    ),
    "a swap stays while either name is read; an empty branch goes with its pure test": (
        """
        def f(x, u, v):
            u, v = v, u
            a, b = v, u
            if u[0] > 0.0:
                b = a
            x[0] = a[0]
            return (x,)
        """,
        """
        def f(x, u, v):
            u, v = v, u
            a, b = v, u
            x[0] = a[0]
            return (x,)
        """,
    ),
    "a comment goes with its statements; the header and sections stay": (
        """
        def f_grad(x, out_bar):
            # header
            r = 0.0  # a placeholder
            y = 1.0
            # forward sweep
            # a loop only the value reads
            for i in range(3):
                r += x[i]
            # reverse sweep
            # adjoint of: y = 1.0
            y_bar = 0.0
            x_bar = out_bar * x
            return (x_bar,)
        """,
        """
        def f_grad(x, out_bar):
            # header
            # forward sweep
            # reverse sweep
            x_bar = out_bar * x
            return (x_bar,)
        """,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_dead_code_elimination(name):
    before, after = (textwrap.dedent(text).lstrip() for text in CASES[name])
    sections = frozenset({"# header", "# forward sweep", "# reverse sweep"})
    assert eliminate_dead_code(cst.parse_module(before), sections).code == after


@pytest.mark.parametrize(
    "expression, pure",
    [
        ("math.exp(a) + np.sum(b[1:]) * c.shape[0]", True),
        ("b.sum() + b.copy()[0]", True),
        ("reserve(tape, 4)", False),  # a runtime helper: it may write its arguments
        ("zeros_like(b)", True),  # the runtime's allocation, declared a primitive (rules/arrays.py)
        ("np.random.random()", False),  # not a primitive of the subset
        ("custom.k3f2(a)", False),  # a user's function behind a custom rule
        ("(y := a)", False),
    ],
)
def test_purity_consults_the_primitive_declarations(expression, pure):
    assert is_pure(template(expression)) is pure
