"""GradBench's ``hello``: ``square`` is x * x, ``double`` its derivative (2x), by sourcead."""

from __future__ import annotations

import sourcead
from benchmarks.gradbench_tool.common import Function, number, primal

TINY = 1.5


def square(x):
    return x * x


def define(jit: bool) -> dict[str, Function]:
    return {
        "square": Function(lambda raw: (number(raw),), primal(square, jit), number),
        "double": Function(lambda raw: (number(raw),), sourcead.grad(square, jit=jit), number),
    }
