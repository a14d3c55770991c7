"""What each early pass turns a small function into, as exact text (Pythran's before/after doctests,
LibCST's `assertCodemod(before, after)`).

Each case is a function as the user writes it and the text `sourcead emit --after PASS` prints
for it (`sourcead.pipeline.passes`: `until`, `run`, `show`), written by hand from what the pass
must do: normalize's core form, the types kinds gives each variable, what activity finds varied
and useful, and which overwrites the to-be-recorded analysis (`reverse/tbr.py`, run by the plan
pass) sends to the tape.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from sources import function_from_source

from sourcead.ir.types import array_kind
from sourcead.pipeline.passes import run, show, until
from sourcead.pipeline.stages import Unit


def after(folder, name: str, before: str, wrt: tuple[str, ...], arrays: dict[str, str] | None = None) -> str:
    """The text `sourcead emit --after NAME` prints for the function in `before`."""
    text = textwrap.dedent(before)
    func = function_from_source(folder, text, re.findall(r"^def (\w+)", text, flags=re.M)[-1])
    passes = until("reverse", name)
    return show(run(passes, Unit(func, wrt, arrays, mode="reverse")), passes[-1])


def check(folder, name: str, before: str, wrt: tuple[str, ...], expected: str, arrays=None) -> None:
    assert after(folder, name, before, wrt, arrays) == textwrap.dedent(expected).lstrip("\n")


# --- normalize: the core form (one exit, explicit accumulations, calls inlined, loops over range)

NORMALIZE = {
    "a returned expression gets a name": (
        """
        def f(x, y):
            return x * y + math.sin(x)
        """,
        """
        # core form of f after normalize
        def f(x, y):
            result = x * y + math.sin(x)
            return result
        """,
    ),
    "`*=` is spelled out, `+=` and `-=` stay accumulations": (
        """
        def f(x):
            y = x
            y -= 2.0 * x
            y *= x
            y += 1.0
            return y
        """,
        """
        # core form of f after normalize
        def f(x):
            y = x
            y -= 2.0 * x
            y = y * x
            y += 1.0
            return y
        """,
    ),
    "a helper is inlined": (
        """
        def square(u):
            return u * u

        def f(x):
            return square(x) + 1.0
        """,
        """
        # core form of f after normalize
        def f(x):
            result = x * x
            result_1 = result + 1.0
            return result_1
        """,
    ),
    "an early return becomes a flag: one exit": (
        """
        def f(x):
            if x > 0.0:
                return x * x
            return -x
        """,
        """
        # core form of f after normalize
        def f(x):
            returned = False
            if x > 0.0:
                result = x * x
                returned = True
            if not returned:
                result = -x
                returned = True
            return result
        """,
    ),
    "a break becomes a flag tested after the rest of the iteration": (
        """
        def f(x):
            s = 0.0
            for i in range(x.shape[0]):
                if x[i] < 0.0:
                    break
                s += x[i]
            return s
        """,
        """
        # core form of f after normalize
        def f(x):
            s = 0.0
            broke = False
            for i in range(x.shape[0]):
                if x[i] < 0.0:
                    broke = True
                if not broke:
                    s += x[i]
                if broke:
                    break
            return s
        """,
    ),
    "a loop over elements, with enumerate, becomes a loop over range": (
        """
        def f(x):
            s = 0.0
            for i, v in enumerate(x):
                s += i * v
            return s
        """,
        """
        # core form of f after normalize
        def f(x):
            s = 0.0
            for i in range(len(x)):
                v = x[i]
                s += i * v
            return s
        """,
    ),
    "a method becomes its canonical call, a conditional expression an if": (
        """
        def f(x, c):
            y = x.sum() if c > 0.0 else 0.0
            return y
        """,
        """
        # core form of f after normalize
        def f(x, c):
            if c > 0.0:
                y = np.sum(x)
            else:
                y = 0.0
            return y
        """,
    ),
}


@pytest.mark.parametrize("case", list(NORMALIZE))
def test_normalize(tmp_path, case):
    before, expected = NORMALIZE[case]
    check(tmp_path, "normalize", before, ("x",), expected)


# --- kinds: float, integer or array (with its dimensions and dtype) of every variable

KINDS = {
    "loop variables and shapes are integers; arrays are known by their indexing": (
        """
        def f(x, n):
            s = 0.0
            for i in range(n):
                s += x[i] * i
            m = x.shape[0]
            return s / m
        """,
        None,
        """
        # core form of f after kinds
        # i: an integer
        # m: an integer
        # n: an integer
        # result: a float
        # s: a float
        # x: a 1-D float64 array
        def f(x, n):
            s = 0.0
            for i in range(n):
                s += x[i] * i
            m = x.shape[0]
            result = s / m
            return result
        """,
    ),
    "an integer counter stays an integer; dividing by it gives a float": (
        """
        def f(x):
            k = 0
            t = 0.0
            for i in range(x.shape[0]):
                if x[i] > 0.0:
                    k += 1
                    t += x[i]
            return t / k
        """,
        None,
        """
        # core form of f after kinds
        # i: an integer
        # k: an integer
        # result: a float
        # t: a float
        # x: a 1-D float64 array
        def f(x):
            k = 0
            t = 0.0
            for i in range(x.shape[0]):
                if x[i] > 0.0:
                    k += 1
                    t += x[i]
            result = t / k
            return result
        """,
    ),
    "an array used as an index is an integer array": (
        """
        def f(x, idx):
            s = 0.0
            for k in range(idx.shape[0]):
                s += x[idx[k]]
            return s
        """,
        None,
        """
        # core form of f after kinds
        # idx: a 1-D integer array
        # k: an integer
        # s: a float
        # x: a 1-D float64 array
        def f(x, idx):
            s = 0.0
            for k in range(idx.shape[0]):
                s += x[idx[k]]
            return s
        """,
    ),
    "given dimensions carry through a matrix product": (
        """
        def f(x, v):
            w = x @ v
            return np.sum(w * w)
        """,
        {"x": array_kind(2), "v": array_kind(1)},
        """
        # core form of f after kinds
        # result: a float
        # v: a 1-D float64 array
        # w: a 1-D float64 array
        # x: a 2-D float64 array
        def f(x, v):
            w = x @ v
            result = np.sum(w * w)
            return result
        """,
    ),
}


@pytest.mark.parametrize("case", list(KINDS))
def test_kinds(tmp_path, case):
    before, arrays, expected = KINDS[case]
    check(tmp_path, "kinds", before, ("x",), expected, arrays)


# --- activity: the variables both varied (depend on a wrt argument) and useful (the result depends on them)

ACTIVITY = {
    "neither the constant's products nor a dead use of x are active": (
        """
        def f(x, c):
            a = c * 2.0
            b = x * a
            d = x + 1.0
            e = d * c
            return b
        """,
        ("x",),
        """
        # core form of f after activity
        # a: a float
        # b: a float
        # c: a float
        # d: a float
        # e: a float
        # x: a float
        # active (varied and useful): b, x
        def f(x, c):
            a = c * 2.0
            b = x * a
            d = x + 1.0
            e = d * c
            return b
        """,
    ),
    "an argument only deciding a branch carries no derivative": (
        """
        def f(x, y):
            if x > 0.0:
                z = y * 3.0
            else:
                z = y
            return z
        """,
        ("x",),
        """
        # core form of f after activity
        # x: a float
        # y: a float
        # z: a float
        # active (varied and useful): nothing
        def f(x, y):
            if x > 0.0:
                z = y * 3.0
            else:
                z = y
            return z
        """,
    ),
    "the same function with respect to both: the branch's values are active, its decision is not": (
        """
        def f(x, y):
            if x > 0.0:
                z = y * 3.0
            else:
                z = y
            return z
        """,
        ("x", "y"),
        """
        # core form of f after activity
        # x: a float
        # y: a float
        # z: a float
        # active (varied and useful): y, z
        def f(x, y):
            if x > 0.0:
                z = y * 3.0
            else:
                z = y
            return z
        """,
    ),
    "weights not differentiated stay constant inside the loop": (
        """
        def f(x, w):
            s = 0.0
            for i in range(x.shape[0]):
                s += w[i] * x[i]
            return s
        """,
        ("x",),
        """
        # core form of f after activity
        # i: an integer
        # s: a float
        # w: a 1-D float64 array
        # x: a 1-D float64 array
        # active (varied and useful): s, x
        def f(x, w):
            s = 0.0
            for i in range(x.shape[0]):
                s += w[i] * x[i]
            return s
        """,
    ),
}


@pytest.mark.parametrize("case", list(ACTIVITY))
def test_activity(tmp_path, case):
    before, wrt, expected = ACTIVITY[case]
    check(tmp_path, "activity", before, wrt, expected)


# --- tbr: the overwrites whose old value an adjoint reads are recorded; the others are not

TBR = {
    "nothing overwritten, nothing recorded": (
        """
        def f(x, y):
            z = x * y + math.sin(x)
            return z * z
        """,
        [],
    ),
    "sin's adjoint reads the t it overwrites: recorded; the first t overwrites nothing": (
        """
        def f(x, b):
            t = x * b
            t = math.sin(t)
            return t * x
        """,
        ["t = math.sin(t)  <- OnTape"],
    ),
    "a linear update's adjoint does not read the old value: not recorded": (
        """
        def f(x, b):
            t = x * b
            t = t + x
            return t * x
        """,
        [],
    ),
    "a running product overwrites what its adjoint reads, every iteration": (
        """
        def f(x):
            p = 1.0
            for i in range(x.shape[0]):
                p = p * x[i]
            return p
        """,
        ["p = p * x[i]  <- OnTape"],
    ),
    "an accumulation's adjoint reads x, never s: not recorded": (
        """
        def f(x):
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i] * x[i]
            return s
        """,
        [],
    ),
}


@pytest.mark.parametrize("case", list(TBR))
def test_tbr(tmp_path, case):
    before, recorded = TBR[case]
    text = after(tmp_path, "plan", before, ("x",))
    plan = text.split("# the reverse plan: what the forward sweep records, and how\n", 1)[1]
    assert plan == "".join(f"#   {line}\n" for line in recorded)
