"""Gather-form adjoints of stencils at constant offsets (`sourcead/gather.py`).

The zoo runs the stencils of stencils.py through every numeric check and pins their code; here:
ranges too short for every contribution to exist (the guarded ends, an empty middle, an empty
loop), checked against finite differences and forward mode, compiled and not; and the analysis
itself, on adjoint lines written by hand, where gathering would change what a line reads.
"""

from __future__ import annotations

import functools

import libcst as cst
import numpy as np
import pytest
import stencils
from numeric import assert_close, finite_difference_gradient

import sourcead
from sourcead.ir.core import Assign, For
from sourcead.ir.emit import Line
from sourcead.ir.exprs import code
from sourcead.reverse.gather import plan_gather
from sourcead.reverse.offsets import plus_constant, shifted


@functools.cache
def _grad(name: str, jit: bool):
    return sourcead.grad(getattr(stencils, name), wrt=_WRT[name], jit=jit)


@functools.cache
def _jvp(name: str):
    return sourcead.jvp(getattr(stencils, name), wrt=_WRT[name])


_WRT = {
    "short_range": ("x", "k"),
    "wide_stencil": ("u0", "c"),
    "one_sided": ("x", "w"),
    "rosenbrock": ("x",),
    "ring_in_prange": ("x", "k"),
    "ring_rows_in_prange": ("u0", "kappa"),
    "ring": ("x", "k"),  # serial: its sum into k_bar reads the ring indices
    "ring_product": ("x", "k"),
    "modulo_reaction": ("u0", "v0", "feed"),
}
_ARGS = {
    "short_range": lambda rng, n: (rng.standard_normal(n), 0.6),
    "wide_stencil": lambda rng, n: (rng.standard_normal(n), 0.2, 3),
    "one_sided": lambda rng, n: (rng.standard_normal(n), 0.7, min(1, n)),
    "rosenbrock": lambda rng, n: (rng.uniform(-1.0, 1.0, n),),
    # rings of 1 and 2 elements: both neighbours are the element itself, or the same other one
    "ring_in_prange": lambda rng, n: (rng.standard_normal(n), 0.3, 2),
    "ring_rows_in_prange": lambda rng, n: (rng.standard_normal((n, 1 + n % 4)), 0.15, 2),
    "ring": lambda rng, n: (rng.standard_normal(n), 0.3, 2),
    "ring_product": lambda rng, n: (rng.standard_normal(n), 0.7),
    "modulo_reaction": lambda rng, n: (  # small values: u * v * v grows fast
        0.5 * rng.standard_normal((n, 1 + n % 4)),
        0.5 * rng.standard_normal((n, 1 + n % 4)),
        0.04,
        2,
    ),
}


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("name", sorted(_WRT))
def test_short_ranges_match_finite_differences(name, jit):
    """Every length from an empty loop to one whose middle holds every contribution."""
    f = getattr(stencils, name)
    source = _grad(name, jit).source
    assert "gathered" in source or "summed first in a loop of its own" in source
    for n in range(0, 12):
        args = _ARGS[name](np.random.default_rng(n), n)
        got = _grad(name, jit)(*args)
        expected = finite_difference_gradient(f, args, _WRT[name])
        for g, e in zip(got, expected, strict=True):
            assert_close(g, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(_WRT))
def test_short_ranges_forward_against_reverse(name):
    """<J v, 1> from forward mode equals <v, J^T 1> from the gathered reverse mode."""
    for n in range(0, 12):
        rng = np.random.default_rng(100 + n)
        args = _ARGS[name](rng, n)
        tangents = tuple(rng.standard_normal(np.shape(args[_index(name, w)])) for w in _WRT[name])
        tangents = tuple(t if np.ndim(t) else float(t) for t in tangents)
        _, forward = _jvp(name)(*args, tangents=tangents)
        reverse = _grad(name, True)(*args)
        dot = sum(float(np.vdot(t, g)) for t, g in zip(tangents, reverse, strict=True))
        assert abs(forward - dot) <= 1e-10 * max(1.0, abs(dot))


def _index(name: str, wrt: str) -> int:
    code_ = getattr(stencils, name).__code__
    return code_.co_varnames[: code_.co_argcount].index(wrt)


# --- the analysis, on lines written by hand ---------------------------------------------------


def _lines(*texts: str) -> list[Line]:
    found = []
    for text in texts:
        node = cst.parse_statement(text).body[0]
        if isinstance(node, cst.AugAssign):
            op = "+=" if isinstance(node.operator, cst.AddAssign) else "-="
            found.append(Line(node.target, op, node.value))
        else:
            found.append(Line(node.targets[0].target, "=", node.value))
    return found


def _plan(
    *texts: str,
    changing: frozenset[str] = frozenset(),
    inner: tuple[str, ...] = (),
    bound: str = "m",
    private: frozenset[str] = frozenset(),
):
    """The gather of `for i in range(1, n - 1)` whose body's one statement has the adjoint lines
    `texts`, and, if given, a `for j in range(bound)` after it whose statement has `inner`."""
    statement = Assign(cst.Name("v"), cst.Integer("0"), None, cst.Name("v"))
    lines = {statement: _lines(*texts)}
    body: tuple = (statement,)
    if inner:
        nested = Assign(cst.Name("w"), cst.Integer("0"), None, cst.Name("w"))
        lines[nested] = _lines(*inner)
        body = (
            statement,
            For("j", cst.Integer("0"), cst.parse_expression(bound), cst.Integer("1"), (nested,), False, None),
        )
    loop = For("i", cst.Integer("1"), cst.parse_expression("n - 1"), cst.Integer("1"), body, False, None)
    return plan_gather(
        loop,  # type: ignore[arg-type]
        lines,
        lambda name: name.endswith("_bar"),
        lambda name: name in ("u_bar", "v_bar", "w_bar"),
        set(changing),
        {"v", "w", "j", "q"},
        set(private),
    )


def test_a_stencil_is_gathered_and_the_rest_keeps_its_order():
    gather = _plan(
        "t0 = k * v_bar[i]",
        "u_bar[i - 1] += t0",
        "k_bar += u[i] * v_bar[i]",
        "u_bar[i + 1] -= t0",
        "v_bar[i] = 0.0",
    )
    assert gather is not None
    (group,) = gather.groups
    assert (group.array, group.axis, group.lowest, group.highest) == ("u_bar", 0, -1, 1)
    assert [code(t.added) for t in group.terms] == ["k * v_bar[i]", "-(k * v_bar[i])"]
    (sums,) = gather.sums  # k_bar: a scalar adjoint no line reads, summed in a loop of its own
    assert [code(t.added) for t in sums.terms] == ["u[i] * v_bar[i]"]
    (residual,) = gather.residual.values()
    assert [line.text() for line in residual] == ["t0 = k * v_bar[i]", "v_bar[i] = 0.0"]


@pytest.mark.parametrize(
    "lines, why",
    [
        (("u_bar[i] += v_bar[i]", "u_bar[i + 1] += v_bar[i]"), None),
        (("u_bar[i] += v_bar[i]",), "no contribution at a nonzero offset"),
        (("v_bar[i] = 0.0", "u_bar[i - 1] += v_bar[i]"), "reads v_bar[i] after its reset"),
        (("u_bar[i - 1] += v_bar[i]", "v_bar[0] = 0.0"), "v_bar[0] reset in every iteration"),
        (("u_bar[i - 1] += v_bar[i]", "v_bar[i] = 0.0", "u_bar[i + 1] += v_bar[i]"), "a read after the reset"),
        (("u_bar[i - 1] += v_bar[i + 1]", "v_bar[i] = 0.0"), "reads another element than the one reset"),
        (("u_bar[i - 1] += v_bar[i]", "w_bar[i] += u_bar[i]"), "a gathered array read"),
        (("u_bar[i - 1] += v_bar[i]", "u_bar[i] = 0.0"), "a gathered array reset"),
        (("u_bar[i - 1] += s_bar * v_bar[i]", "s_bar += v_bar[i]"), "a scalar the loop accumulates"),
        (("u_bar[i - 1] += p * v_bar[i]",), "p is restored in each iteration (changing)"),
        (("t0 = v_bar[i]", "t0 = 2.0 * v_bar[i]", "u_bar[i - 1] += t0"), "a temporary assigned twice"),
        (("u_bar[i - 1] += t0", "t0 = v_bar[i]"), "a temporary read before its definition"),
    ],
)
def test_gathering_is_refused_where_a_read_would_change(lines, why):
    gather = _plan(*lines, changing=frozenset({"p"}))
    assert (gather is None) == (why is not None), why


@pytest.mark.parametrize(
    "lines, expected",
    [
        (("k_bar += u[i] * v_bar[i]", "v_bar[i] = 0.0"), ["u[i] * v_bar[i]"]),
        (("t0 = u[i] * c", "k_bar -= t0 * v_bar[i]", "c_bar += t0"), ["-((u[i] * c) * v_bar[i])", "u[i] * c"]),
        (("k_bar += u[i]", "k_bar += 2.0 * u[i + 1]"), ["u[i]", "2.0 * u[i + 1]"]),
        (("k_bar += u[i]", "w_bar[i] += k_bar"), None),  # read by another line: not only a sum
        (("k_bar += u[i]", "k_bar = 0.0"), None),  # reset in every iteration
        (("k_bar += p * v_bar[i]",), None),  # p is restored in each iteration
        (("k_bar += math.exp(u[i]) * v_bar[i]",), None),  # a call: computed again in its own loop
        (("t0 = u[i] / c", "k_bar += t0", "w_bar[i] += t0"), None),  # a division, the same
        (("s_bar += v_bar[i]", "k_bar += s_bar"), None),  # reads a scalar the loop accumulates
        (("v_bar[i] = 0.0", "k_bar += v_bar[i]"), None),  # reads v_bar[i] after its reset
        (("k_bar += v_bar[i + 1]", "v_bar[i] = 0.0"), None),  # an element another iteration resets
        # LU's `f_bar += U[k, j] * -U_bar[i, j]` then `U_bar[k, j] += ...`: each iteration adds
        # into its own column, after its read; no other iteration's read sees it
        (("t0 = w_bar[q, i]", "k_bar += u[i] * -t0", "w_bar[p, i] += c * -t0"), ["u[i] * -w_bar[q, i]"]),
        (("k_bar += w_bar[q, i]", "w_bar[p, i + 1] += c"), None),  # the next iteration's column
        (("w_bar[p, i] += c", "k_bar += w_bar[q, i]"), None),  # added before the read: p may be q
        (("k_bar += w_bar[q, i] * w_bar[q, i + 1]", "w_bar[p, i] += c"), None),  # two columns read
        (("k_bar += w_bar[q, 0]", "w_bar[p, i] += c"), None),  # a column every iteration reads
        (("k_bar += w_bar[i, q]", "w_bar[p, i] += c"), None),  # i on another axis
        (("k_bar += w_bar[q, i] * w_bar[i, q]", "w_bar[p, i] += c"), None),  # the same, with its own column
    ],
)
def test_sums_into_scalar_adjoints_take_a_loop_of_their_own(lines, expected):
    gather = _plan(*lines, changing=frozenset({"p"}))
    if expected is None:
        assert gather is None or not gather.sums
        return
    assert gather is not None and not gather.groups
    (sums,) = gather.sums
    assert [code(t.added) for t in sums.terms] == expected
    taken = {id(t.line) for t in sums.terms}
    assert all(id(line) not in taken for line in next(iter(gather.residual.values())))


def test_sums_are_not_taken_where_the_caller_says_no():
    """In a parallel adjoint's iterations, shared sums go to per-iteration partial sums."""
    assert _plan("k_bar += u[i] * v_bar[i]") is not None
    statement = Assign(cst.Name("v"), cst.Integer("0"), None, cst.Name("v"))
    loop = For("i", cst.Integer("1"), cst.parse_expression("n - 1"), cst.Integer("1"), (statement,), False, None)
    lines = {statement: _lines("k_bar += u[i] * v_bar[i]")}
    adjoint = lambda name: name.endswith("_bar")  # noqa: E731
    assert plan_gather(loop, lines, adjoint, lambda name: False, set(), {"v"}, sums=False) is None


def test_inner_loops_gather_inside_the_same_loops():
    gather = _plan("k_bar += v_bar[i, 0]", inner=("u_bar[i - 1, j] += v_bar[i, j]", "u_bar[i + 1, j] += v_bar[i, j]"))
    assert gather is not None
    (group,) = gather.groups
    assert [c.var for c in group.context] == ["j"] and (group.lowest, group.highest) == (-1, 1)


@pytest.mark.parametrize(
    "inner, bound, why",
    [
        (("u_bar[i - 1, j] += v_bar[i, j]", "v_bar[i, j] = 0.0"), "m", None),
        (("u_bar[i - 1, j] += v_bar[i, j]",), "i", "the inner bounds change with i"),
        (("u_bar[i - 1, j] += v_bar[i, j]",), "q", "the inner bounds read what the body assigns"),
        (("u_bar[i - 1, j] += v_bar[i, 0]", "v_bar[i, 0] = 0.0"), "m", "v_bar[i, 0] reset in every j"),
    ],
)
def test_inner_loops_are_refused_where_a_read_would_change(inner, bound, why):
    gather = _plan("k_bar += 1.0", inner=inner, bound=bound)
    assert (gather is None) == (why is not None), why


@pytest.mark.parametrize(
    "lines, private, expected",
    [
        (("s_bar += k * v_bar[i]", "u_bar[i - 1] += s_bar", "v_bar[i] = 0.0", "s_bar = 0.0"), {"s_bar"},
         "k * v_bar[i]"),
        (("s_bar += k * v_bar[i]", "v_bar[i] = 0.0", "u_bar[i - 1] += s_bar", "s_bar = 0.0"), {"s_bar"},
         "k * v_bar[i]"),
        (("u_bar[i - 1] += s_bar", "s_bar += v_bar[i]", "s_bar = 0.0"), {"s_bar"}, "0.0"),
        (("s_bar += a", "s_bar -= b", "u_bar[i + 1] += 2.0 * s_bar", "s_bar = 0.0"), {"s_bar"}, "2.0 * (a - b)"),
        (("s_bar += k * v_bar[i]", "u_bar[i - 1] += s_bar", "s_bar = 0.0"), set(), None),  # not private
        (("s_bar += k * v_bar[i]", "u_bar[i - 1] += s_bar"), {"s_bar"}, None),  # never reset: carried
        (("s_bar += v_bar[i]", "u_bar[i - 1] += s_bar", "s_bar = 0.0", "w_bar[i] += s_bar"), {"s_bar"}, None),
        (("s_bar += v_bar[i]", "s_bar = 0.0", "s_bar += a", "u_bar[i - 1] += s_bar"), {"s_bar"}, None),
        (("s_bar += v_bar[i]", "v_bar[i] = 0.0", "s_bar += v_bar[i]", "u_bar[i - 1] += s_bar", "s_bar = 0.0"),
         {"s_bar"}, None),  # the second addition reads the reset element
    ],
)  # fmt: skip
def test_private_sums_are_inlined_as_what_the_iteration_added(lines, private, expected):
    gather = _plan(*lines, private=frozenset(private))
    assert (gather is None) == (expected is None)
    if gather is not None:
        (group,) = gather.groups
        assert code(group.terms[0].added) == expected


def test_a_private_sum_of_an_inner_loop_is_not_inlined_outside_it():
    gather = _plan("u_bar[i - 1] += s_bar", inner=("s_bar += v_bar[i, j]", "s_bar = 0.0"), private=frozenset({"s_bar"}))
    assert gather is None


def test_a_reset_in_another_loop_is_not_the_same_iteration():
    # the term reads v_bar[i] inside the loop over j; the reset is outside it, after: the term's
    # later j-iterations would have read the same element before the reset too, but the gather
    # keeps to resets in the same loops
    assert _plan("v_bar[i] = 0.0", inner=("u_bar[i - 1, j] += v_bar[i]",)) is None


def test_indices_that_are_not_the_loop_variable_plus_a_constant_stay_scattered():
    gather = _plan("u_bar[2 * i] += v_bar[i]", "u_bar[i, i + 1] += v_bar[i]", "w_bar[i - 1] += v_bar[i]")
    assert gather is not None
    assert [g.array for g in gather.groups] == ["w_bar"]
    (residual,) = gather.residual.values()
    assert [line.text() for line in residual] == ["u_bar[2 * i] += v_bar[i]", "u_bar[i, i + 1] += v_bar[i]"]


@pytest.mark.parametrize(
    "text, offset, expected",
    [
        ("v_bar[i] * u[i - 1] + i", -1, "v_bar[j + 1] * u[j] + (j + 1)"),
        ("u[i + 2, i] * 2 * i", 2, "u[j, j - 2] * 2 * (j - 2)"),
        ("np.sum(a.i) + f(i=i)", 0, "np.sum(a.i) + f(i=j)"),
        ("u[1 + i] + u[(i - 3)]", 3, "u[1 + (j - 3)] + u[j - 6]"),
    ],
)
def test_shifted_contributions(text, offset, expected):
    assert code(shifted(cst.parse_expression(text), "i", "j", offset)) == expected


@pytest.mark.parametrize(
    "text, k, expected",
    [
        ("n - 1", 1, "n"),
        ("n - 1", 2, "n + 1"),
        ("3", -4, "-1"),
        ("n * 2", -1, "n * 2 - 1"),
        ("a if b else c", 1, "(a if b else c) + 1"),
    ],
)
def test_bounds_fold_their_constants(text, k, expected):
    assert code(plus_constant(cst.parse_expression(text), k)) == expected


def test_gathered_rows_of_a_parallel_adjoint_are_the_same_on_any_thread_count():
    """The rows u_bar[i +- 1, j] gathered in a prange of their own (no chunk rows): each element
    is one iteration's sum, so 1 and 2 threads give the same bits."""
    g = sourcead.grad(stencils.rows_in_prange, wrt=("u0", "kappa"))
    assert "_rows = chunk_zeros" not in g.source and "in prange(" in g.source.split("gathered")[1]
    one, two = _on_1_and_2_threads(g, np.random.default_rng(5).standard_normal((40, 33)), 0.15, 7)
    assert np.array_equal(one[0], two[0]) and one[1] == two[1]
    u0 = np.random.default_rng(5).standard_normal((6, 5))
    expected = finite_difference_gradient(stencils.rows_in_prange, (u0, 0.15, 3), ("u0", "kappa"))
    for got, e in zip(g(u0, 0.15, 3), expected, strict=True):
        assert_close(got, e, rtol=1e-6, atol=1e-8)


def test_a_ring_gathered_in_parallel_is_the_same_on_any_thread_count():
    """The periodic rows gathered in a prange of their own (the columns keep their scatter in each
    iteration's serial loop); the ring indices complete the shape contract, so the module
    compiles parallel."""
    import json

    from sourcead.pipeline.driver import generate

    assert json.loads(generate(stencils.ring_rows_in_prange, "reverse", ("u0", "kappa")).contract)["complete"]
    g = sourcead.grad(stencils.ring_rows_in_prange, wrt=("u0", "kappa"))
    assert "around the ring of n" in g.source and "around the ring of m" not in g.source
    one, two = _on_1_and_2_threads(g, np.random.default_rng(6).standard_normal((33, 40)), 0.15, 5)
    assert np.array_equal(one[0], two[0]) and one[1] == two[1]


def _on_1_and_2_threads(g, *args):
    """The gradient `g(*args)` computed on 1 numba thread and on 2."""
    import numba

    results = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            results.append(g(*args))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return results
