"""The shared helpers of the analyses: what a core statement reads (`analysis/reads.py`), one meaning
per function, and the affine algebra (`analysis/affine.py`) the shape contract and the element-record
proof both use."""

from __future__ import annotations

import libcst as cst
import pytest

from sourcead.analysis.affine import ONE, affine_form, affine_minus, affine_plus, affine_scale, constant, size_of
from sourcead.analysis.contract_terms import dump, load
from sourcead.analysis.reads import names_read, reads_array, values_read
from sourcead.frontend.bound_names import local_names
from sourcead.frontend.fence import fence
from sourcead.frontend.normalize import normalize
from sourcead.frontend.parse import parse_function
from sourcead.ir.core import For, Stmt, walk_statements
from sourcead.ir.naming import Namer


def kernel(a, b, x, u, v, k, n):
    s = 0.0
    for i in range(n):
        a[i] = b[i + 1] * x
        s += a[i]
        u, v = v, u
        k[i] += 1.0
        m = k.shape[0]
        t = k[0] * m
    return s + t


def _core(func) -> tuple[Stmt, ...]:
    """The body of `func` in core form."""
    parsed = parse_function(func)
    fence(parsed)
    return normalize(parsed, Namer(local_names(parsed.node) | set(parsed.globals))).body


def _statements(func) -> dict[str, Stmt]:
    """The simple core statements of `func`, by their text."""
    return {s.text(): s for s in walk_statements(_core(func)) if hasattr(s, "text")}


@pytest.fixture(scope="module")
def stmts():
    return _statements(kernel)


def test_an_element_write_needs_its_array_bound_but_reads_none_of_its_values(stmts):
    write = stmts["a[i] = b[i + 1] * x"]
    assert names_read(write) == {"a", "b", "i", "x"}
    assert values_read(write) == {"b", "i", "x"}
    assert not reads_array(write, "a")
    assert reads_array(write, "b")


def test_an_accumulation_needs_its_name_but_does_not_read_it_as_a_value(stmts):
    total = stmts["s += a[i]"]
    assert names_read(total) == {"s", "a", "i"}
    assert values_read(total) == {"a", "i"}


def test_a_swap_reads_values_only_where_asked(stmts):
    swap = stmts["u, v = v, u"]
    assert names_read(swap) == {"u", "v"}
    assert values_read(swap) == set()
    assert values_read(swap, swaps=True) == {"u", "v"}
    assert reads_array(swap, "u")


def test_an_element_accumulation_reads_its_array_and_a_size_does_not(stmts):
    assert reads_array(stmts["k[i] += 1.0"], "k")
    assert not reads_array(stmts["m = k.shape[0]"], "k")
    assert reads_array(stmts["t = k[0] * m"], "k")


def test_reads_array_looks_inside_a_loop_names_read_at_its_bounds_only():
    loop = next(s for s in _core(kernel) if isinstance(s, For))
    assert names_read(loop) == {"n"}
    assert reads_array(loop, "b")


def _form(text: str):
    def leaf(node):
        if isinstance(node, cst.Name):
            return {node.value: 1}
        size = size_of(node)
        return None if size is None else {("size", *size): 1}

    return affine_form(cst.parse_expression(text), leaf)


def test_equal_expressions_are_equal_forms():
    assert _form("n + 1 - 1") == _form("n") == {"n": 1}
    assert _form("2 * (i + 3) - 6") == {"i": 2}
    assert _form("1 - 1") == {} and constant({}) == 0
    assert _form("x.shape[0] - 1") == {("size", "x", 0): 1, ONE: -1}
    assert _form("len(x)") == {("size", "x", 0): 1}
    assert _form("i * j") is None and _form("i // 2") is None


def test_the_algebra_keeps_no_zero_coefficient():
    a = {"i": 1, ONE: 2}
    assert affine_minus(a, a) == {}
    assert affine_plus(a, {ONE: -2}) == {"i": 1}
    assert affine_scale(a, 0) == {}
    assert constant({ONE: 3}) == 3 and constant(a) is None


def test_the_contract_writes_the_constant_as_1_and_reads_it_back():
    form = {"s:0:0": 1, ONE: -1}
    assert dump(form) == [["1", -1], ["s:0:0", 1]]
    assert load(dump(form)) == form
    assert load([["1", 0], ["n:0", 1]]) == {"n:0": 1}  # a zero term, as contracts stored before, is dropped
