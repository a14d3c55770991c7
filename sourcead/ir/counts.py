"""Record counts as a small algebra: sums of products of trip counts, rendered as code.

A tape is reserved before a region to the number of records the region can make, computed when
the region starts. A count is a sum of terms; a term is a constant times a product of trip counts
(`n`, `len(range(a, b, 3))`). A trip count that may be negative (`stop - start` of a range that may
be empty) counts as zero: wherever it is combined with another count, it is written `max(..., 0)`,
so a sum or a product can never undercount.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from .exprs import code, is_number, number_value, paren


@dataclass(frozen=True)
class Factor:
    """A trip count: its text, and whether it is known to be non-negative."""

    text: str
    nonnegative: bool

    def render(self, alone: bool) -> str:
        return self.text if self.nonnegative or alone else f"max({_unwrapped(self.text)}, 0)"


@dataclass(frozen=True)
class Count:
    """sum over terms of coefficient * product(factors); `None` stands for "unbounded" elsewhere."""

    terms: tuple[tuple[int, tuple[Factor, ...]], ...] = ()

    @classmethod
    def of(cls, n: int) -> Count:
        return cls(((n, ()),)) if n else cls()

    @classmethod
    def trips(cls, loop) -> Count:
        """The number of iterations of `for var in range(start, stop, step)`."""
        start, stop, step = loop.start, loop.stop, loop.step
        if code(step) == "1":
            if code(start) == "0":
                return cls(((1, (Factor(code(paren(stop)), _nonnegative(stop)),)),))
            if is_number(start) and is_number(stop):
                return cls.of(max(int(number_value(stop) - number_value(start)), 0))
            return cls(((1, (Factor(f"({_difference(stop, start)})", False),)),))
        text = f"len(range({code(start)}, {code(stop)}, {code(step)}))"
        return cls(((1, (Factor(text, True),)),))

    @property
    def is_zero(self) -> bool:
        return not self.terms

    def __add__(self, other: Count) -> Count:
        merged: dict[tuple[Factor, ...], int] = {}
        for coefficient, factors in self.terms + other.terms:
            merged[factors] = merged.get(factors, 0) + coefficient
        return Count(tuple((c, f) for f, c in merged.items() if c))

    def __mul__(self, other: Count) -> Count:
        total = Count()
        for c1, f1 in self.terms:
            for c2, f2 in other.terms:
                total = total + Count(((c1 * c2, f1 + f2),))
        return total

    def names(self) -> set[str]:
        """The names the count reads (a count of a region depends on them being known at its entry)."""
        return {name for _, factors in self.terms for f in factors for name in re.findall(r"[A-Za-z_]\w*", f.text)}

    def render(self, atom: bool = False, exact: bool = False) -> str:
        """The count as code; `atom`: parenthesized unless it is a single name or number. A trip
        count alone may stand negative where it only reserves room; `exact`: it never does (the
        count is subtracted from a tape's top)."""
        if not self.terms:
            return "0"
        alone = len(self.terms) == 1 and len(self.terms[0][1]) <= 1 and not exact
        common = self.common_factor()
        if common is not None and len(self.terms) > 1:  # n * (2 + m) rather than 2 * n + n * m
            rest = Count(tuple((c, _without(f, common)) for c, f in self.terms))
            return f"{common.render(False)} * {rest.render(atom=True)}"
        parts = []
        for coefficient, factors in self.terms:
            items = [f.render(alone) for f in factors]
            if coefficient != 1 or not items:
                items.insert(0, str(coefficient))
            parts.append(" * ".join(items))
        text = " + ".join(parts)
        if len(parts) > 1 or (atom and " " in text and not text.startswith("(")):
            return f"({text})"
        return text

    def common_factor(self) -> Factor | None:
        """A trip count that every term is a multiple of."""
        if not self.terms:
            return None
        for factor in self.terms[0][1]:
            if all(factor in f for _, f in self.terms):
                return factor
        return None


def _unwrapped(text: str) -> str:
    """`(n - k)` as `n - k` where the outer parentheses enclose it all."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and k < len(text) - 1:
            return text  # `(a) * (b)`: the first parenthesis closes early
    return text[1:-1]


def _without(factors: tuple[Factor, ...], factor: Factor) -> tuple[Factor, ...]:
    items = list(factors)
    items.remove(factor)
    return tuple(items)


def _difference(stop: cst.BaseExpression, start: cst.BaseExpression) -> str:
    """`stop - start` as code, with literal offsets folded: range(1, n - 1) has n - 2 iterations."""
    if is_number(start) and isinstance(stop, cst.BinaryOperation) and is_number(stop.right):
        if isinstance(stop.operator, (cst.Add, cst.Subtract)):
            sign = 1 if isinstance(stop.operator, cst.Add) else -1
            offset = int(sign * number_value(stop.right) - number_value(start))
            base = code(paren(stop.left)) if not isinstance(stop.left, cst.BinaryOperation) else code(stop.left)
            if offset == 0:
                return base
            return f"{base} + {offset}" if offset > 0 else f"{base} - {-offset}"
    if is_number(start, 0.0):
        return code(stop)
    return f"{code(paren(stop))} - {code(paren(start))}"


def maximum(a: Count, b: Count) -> Count:
    """An upper bound of both (the branches of an if): their sum where they differ."""
    if a == b or b.is_zero:
        return a
    if a.is_zero:
        return b
    if all(len(f) == 0 for _, f in a.terms + b.terms):  # constants
        return Count.of(max(sum(c for c, _ in a.terms), sum(c for c, _ in b.terms)))
    return a + b


def _nonnegative(node: cst.BaseExpression) -> bool:
    """Sizes are never negative: `x.shape[k]`, `len(x)`, `x.size`, non-negative literals."""
    if isinstance(node, cst.Integer):
        return True
    return (
        (isinstance(node, cst.Call) and code(node.func) == "len")
        or (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "shape"
        )
        or (isinstance(node, cst.Attribute) and node.attr.value == "size")
    )
