"""Ring indices (`sourcead/rings.py`): which spellings are recognised, which are not, and what the
shape contract makes of them and of `e % n` in a loop over range(n) (numeric checks: the zoo's
ring stencils, tests/test_gather.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import stencils
from numeric import assert_close, finite_difference_gradient
from sources import function_from_source

import sourcead
from sourcead.frontend.rings import ring_indices
from sourcead.ir.core import For, walk_statements
from sourcead.pipeline.driver import analyze, generate

_RING = """
def f(x, n):
    s = 0.0
    for i in range({stop}):
{before}        {name} = {step}
        if {test}:
            {reset}
        s += x[i] * x[{name}]
    return s
"""


def _rings(tmp_path, stop="n", before="", name="ip", step="i + 1", test="ip == n", reset="ip = 0", body_extra=""):
    text = _RING.format(stop=stop, before=before, name=name, step=step, test=test, reset=reset)
    text = text.replace("        s += x[i]", f"{body_extra}        s += x[i]")
    prog = analyze(function_from_source(tmp_path, text, "f"), ("x",), {"x": "array:1", "n": "int"})
    (loop,) = [s for s in walk_statements(prog.fn.body) if isinstance(s, For)]
    return {name: ring.offset for name, ring in ring_indices(loop).items()}


@pytest.mark.parametrize(
    "step, test, reset, offset",
    [
        ("i + 1", "ip == n", "ip = 0", 1),
        ("1 + i", "ip >= n", "ip -= n", 1),
        ("i + 1", "ip >= n", "ip = ip - n", 1),
        ("i - 1", "ip < 0", "ip = n - 1", -1),
        ("i - 1", "ip == -1", "ip += n", -1),
        ("i - 1", "ip < 0", "ip = n + ip", -1),
    ],
)
def test_the_idioms_are_recognised(tmp_path, step, test, reset, offset):
    assert _rings(tmp_path, step=step, test=test, reset=reset) == {"ip": offset}


@pytest.mark.parametrize(
    "changes, why",
    [
        ({"stop": "1, n"}, "the loop does not start at 0"),
        ({"stop": "0, n, 2"}, "the loop steps by 2"),
        ({"stop": "n - 1"}, "the ring is not the loop's range"),
        ({"step": "i + 2", "test": "ip >= n", "reset": "ip -= n"}, "two elements on"),
        ({"test": "ip > n"}, "n itself is not wrapped"),
        ({"reset": "ip = 1"}, "wrapped to the wrong element"),
        ({"step": "i - 1", "test": "ip < 0", "reset": "ip = 0"}, "the previous of 0 is n - 1"),
        ({"step": "i - 1", "test": "ip == n", "reset": "ip = 0"}, "an upward test for a downward step"),
        ({"before": "        s += x[ip]\n"}, "read before it is set this iteration"),
        ({"body_extra": "        ip = 2\n"}, "assigned elsewhere in the body"),
        ({"body_extra": "        n = 3\n"}, "the size changes in the body"),
        ({"test": "ip == n + 0 * s", "reset": "ip = 0"}, "a test that is not the size"),
        ({"step": "i + 1\n        s += x[ip - 1]"}, "a statement between the step and the wrap"),
    ],
)
def test_neighbouring_spellings_are_not_rings(tmp_path, changes, why):
    assert _rings(tmp_path, **changes) == {}, why


def _contract(f, wrt: tuple[str, ...]) -> dict:
    return json.loads(generate(f, "reverse", wrt).contract)


_STENCIL = """
def stencil(u0, k):
    n = u0.shape[0]
    un = np.zeros({size})
    for i in range({size}):
        ip = i + 1
        if ip == {size}:
            ip = 0
        im = i - 1
        if im < 0:
            im = {size} - 1
        un[i] = u0[ip] - 2.0 * u0[i] + k * u0[im]
    return np.sum(un * un)
"""


def test_ring_indices_are_in_range_by_the_contract(tmp_path):
    """u0[ip], u0[im] over range(n) with n = u0.shape[0]: nothing left to bounds checks."""
    contract = _contract(function_from_source(tmp_path, _STENCIL.format(size="n"), "stencil"), ("u0", "k"))
    assert contract["complete"] and contract["uncovered"] == []


@pytest.mark.parametrize("center, sufficient", [(" - 2.0 * u0[i]", False), ("", True)])
def test_a_ring_larger_than_the_array_is_an_error(tmp_path, center, sufficient):
    """range(n + 1) over an array of n: ip reaches n, out of range. With `u0[i]` read too, the
    contract's exact check at the call says so; without, the ring's accesses give a sufficient
    fact (`u0.shape[0] >= n + 1`), and a call that fails it runs the bounds-checked variant.
    Either way a positioned ShapeError, as the primal's IndexError, never a read out of range."""
    text = _STENCIL.format(size="n + 1").replace(" - 2.0 * u0[i]", center)
    f = function_from_source(tmp_path, text, "stencil")
    contract = _contract(f, ("u0", "k"))
    assert contract["complete"] and bool(contract["sufficient"]) == sufficient
    with pytest.raises(IndexError):
        f(np.ones(4), 0.5)
    with pytest.raises(sourcead.ShapeError):
        sourcead.grad(f, wrt=("u0", "k"))(np.ones(4), 0.5)


_MODULO = """
def f(x, y, n, m):
    s = 0.0
    for i in range({loop}):
        j = (i + 1) % {size}
        s += x[(i + 2) % {size}] * x[j] * y[i]
    return s
"""


@pytest.mark.parametrize(
    "loop, size, complete",
    [
        ("x.shape[0]", "x.shape[0]", True),  # e % n in a loop over range(n): 0 .. n - 1, and n > 0 there
        ("n", "n", True),  # in range of x for n <= its size: a sufficient fact, tested at the call
        ("x.shape[0]", "m", False),  # m is no loop's bound: it may be 0 or negative where this runs
        ("1, x.shape[0]", "x.shape[0]", False),  # not a loop over range(n) from 0
    ],
)
def test_a_modulo_by_a_loop_bound_is_in_that_loop_variables_range(tmp_path, loop, size, complete):
    f = function_from_source(tmp_path, _MODULO.format(loop=loop, size=size), "f")
    contract = json.loads(generate(f, "reverse", ("x", "y")).contract)
    probed = [fact["access"] for fact in contract["sufficient"] if fact.get("probe")]
    assert contract["complete"] and bool(probed) != complete, (contract["uncovered"], probed)  # else: probed
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(5), rng.standard_normal(5), 5, 5)
    expected = finite_difference_gradient(f, args, ("x", "y"))
    for got, e in zip(sourcead.grad(f, wrt=("x", "y"))(*args), expected, strict=True):
        assert_close(got, e, rtol=1e-6, atol=1e-8)


# --- `(i + 1) % n` in a loop over range(n): the same ring index, set first in the body (normalize) ---

_NEIGHBOURS = """
def f(x, y, n):
    s = 0.0
    for i in range({stop}):
{extra}        s += x[i] * y[{index}] + x[{index}] * x[{index}]
    return s
"""


def _normalized(tmp_path, index, stop="n", extra=""):
    text = _NEIGHBOURS.format(stop=stop, index=index, extra=extra)
    f = function_from_source(tmp_path, text, "f")
    prog = analyze(f, ("x", "y"), {"x": "array:1", "y": "array:1", "n": "int"})
    (loop,) = [s for s in walk_statements(prog.fn.body) if isinstance(s, For) and s.var == "i"]
    return f, {name: ring.offset for name, ring in ring_indices(loop).items()}


@pytest.mark.parametrize(
    "index, offset",
    [
        ("(i + 1) % n", 1),
        ("(1 + i) % n", 1),
        ("(i + 1 - n) % n", 1),
        ("(i - 1) % n", -1),
        ("(i + n - 1) % n", -1),
        ("(n + i - 1) % n", -1),
        ("(i - 1 + 2 * n) % n", -1),
    ],
)
def test_a_neighbour_by_modulo_becomes_a_ring_index(tmp_path, index, offset):
    """Each spelling is one ring index (one per offset, however often the body reads it), and the
    gradient is right on rings of 1 to 4 elements (n = 1: the neighbour is the element itself)."""
    f, rings = _normalized(tmp_path, index)
    assert rings == {"i_next" if offset == 1 else "i_prev": offset}
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 4):
        args = (rng.standard_normal(n), rng.standard_normal(n), n)
        expected = finite_difference_gradient(f, args, ("x", "y"))
        for jit in (False, True):
            got = sourcead.grad(f, wrt=("x", "y"), jit=jit)(*args)
            for g, e in zip(got, expected, strict=True):
                assert_close(g, e, rtol=1e-6, atol=1e-8)


def test_a_local_assigned_a_neighbour_by_modulo_is_the_ring_index_itself(tmp_path):
    """`j = (i - 1) % n` (j assigned nowhere else) becomes `j = i - 1; if j < 0: j = n - 1` where it
    stood; a second `j = ...` in the body keeps a ring index of its own."""
    f, rings = _normalized(tmp_path, "j", extra="        j = (i - 1) % n\n")
    assert rings == {"j": -1}
    f, rings = _normalized(tmp_path, "j", extra="        j = (i - 1) % n\n        j = j + 0 * i\n")
    assert rings == {"i_prev": -1}
    args = (np.arange(4.0), np.arange(1.0, 5.0), 4)
    for g, e in zip(
        sourcead.grad(f, wrt=("x", "y"))(*args), finite_difference_gradient(f, args, ("x", "y")), strict=True
    ):
        assert_close(g, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "changes, why",
    [
        ({"index": "(i + 2) % n"}, "two elements on"),
        ({"index": "(2 * i + 1) % n"}, "not the loop's variable plus one"),
        ({"index": "(i + 1) % y.shape[0]"}, "another size than the loop's"),
        ({"index": "(i + 1) % n", "stop": "1, n"}, "the loop does not start at 0"),
        ({"index": "(i + 1) % n", "stop": "0, n, 2"}, "the loop steps by 2"),
        ({"index": "(i + 1) % (n - 1)", "stop": "n - 1"}, "a size that is an expression"),
        ({"index": "(i + 1) % n", "extra": "        n = 3\n"}, "the size changes in the body"),
    ],
)
def test_other_modulos_stay_as_written(tmp_path, changes, why):
    f, rings = _normalized(tmp_path, **changes)
    assert rings == {}, why
    rng = np.random.default_rng(4)
    args = (rng.standard_normal(5), rng.standard_normal(5), 4)
    expected = finite_difference_gradient(f, args, ("x", "y"))
    for g, e in zip(sourcead.grad(f, wrt=("x", "y"))(*args), expected, strict=True):
        assert_close(g, e, rtol=1e-6, atol=1e-8)


def test_a_neighbour_by_modulo_keeps_its_line_in_errors(tmp_path):
    """`y[(i + 1) % n]` with n larger than y: the primal's IndexError, here a ShapeError (bounds
    checks, since n is no size) that names the user's line."""
    f, _ = _normalized(tmp_path, "(i + 1) % n")
    args = (np.ones(5), np.ones(3), 5)
    with pytest.raises(IndexError):
        f(*args)
    with pytest.raises(sourcead.ShapeError) as info:
        sourcead.grad(f, wrt=("x", "y"))(*args)
    assert "line 8" in str(info.value), str(info.value)


def test_a_periodic_reaction_written_with_modulo_needs_no_bounds_checks():
    """tests/stencils.py's modulo_reaction: `%` neighbours in prange, v swapped with a buffer made
    from u0's sizes. Complete contract (v0.shape >= u0.shape checked at the call), rows gathered."""
    g = sourcead.grad(stencils.modulo_reaction, wrt=("u0", "v0", "feed"))
    assert g._default.plan.complete
    assert "around the ring" in g.source
    rng = np.random.default_rng(5)
    with pytest.raises(sourcead.ShapeError, match=r"v0.shape\[1\] >= u0.shape\[1\]"):
        g(rng.standard_normal((5, 4)), rng.standard_normal((5, 3)), 0.04, 2)
