"""Issue 38, in-place updates: what sourcead cannot follow is refused at the user's line, in the
user's names; a written argument's final state is an output of jvp and vjp (README: "A function
may write into its argument arrays")."""

from __future__ import annotations

import inspect

import numpy as np
import outsiders_inplace as m
import pytest

import sourcead
from sourcead import SourceADError


def _marked(func, marker: str, token: str) -> tuple[int, int]:
    """The line of `# refused: <marker>` in func's module, and the column of `token` in it."""
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if f"# refused: {marker}" in text:
            return first + offset, text.index(token)
    raise AssertionError(f"no '# refused: {marker}' line in {func.__name__}")


_ROWS = (np.ones((2, 3)), np.ones(3))
_TWO = (np.ones((2, 2)), np.ones((2, 2)))

# the function, its arguments, the marker of the refused line, the token the caret is under, the
# message and the hint (each in part)
REFUSED = [
    (m.update_through_second_name, _TWO, "second name", "D +=",
     "`D += B` updates an array in place that another name holds too (`D = C`)", "update `C`"),
    (m.update_through_row, _ROWS, "row", "r +=", "`r += b` updates `r` in place, a view of `A`", "`A[0] += ...`"),
    (m.update_loop_rows, _ROWS, "loop row", "row +=", "`row += b` updates `row` in place, a view of `A`",
     "for i in range(len(A)): A[i] += ..."),
    (m.update_row_in_helper, _ROWS, "row in helper", "_add_to(A[i], b)",
     "`_add_to` updates its argument `r` in place (`r += b`), and this call passes it a row of `A`", "`A[i] += ...`"),
    (m.helper_rebinds_after_update, _TWO[:1], "rebinds", "_update_then_rebind(C)",
     "`_update_then_rebind` updates its argument `C` in place (`C += 1.0`) and also assigns `C` a new value",
     "`C2 = C * 2.0`"),
    (m.argument_in_prange, (np.ones(3), np.ones(3)), "prange", "C +=",
     "`C += B` updates all of `C` in every iteration of a prange loop", "acc += ..."),
    (m.floats_into_ints, (np.ones(3),), "ints", "k *=",
     "`k` holds a 1-D integer array in one place and a 1-D float64 array in another", "different name"),
]  # fmt: skip


@pytest.mark.parametrize("func, args, marker, token, needle, hint", REFUSED, ids=[c[0].__name__ for c in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_refused_at_the_update(func, args, marker, token, needle, hint, mode):
    kwargs = {} if mode == "grad" else {"tangents": np.ones_like(args[0])}
    with pytest.raises(SourceADError) as info:  # refused where it is made, or (types from the call) at the call
        call = sourcead.grad(func, jit=False) if mode == "grad" else sourcead.jvp(func, jit=False)
        call(*[a.copy() for a in args], **kwargs)
    err = info.value
    assert err.where is not None and err.where.filename.endswith("outsiders_inplace.py")
    assert (err.where.line, err.where.column) == _marked(func, marker, token)
    assert needle in err.message
    assert hint in err.hint
    assert "_add_to_r" not in str(err) and "_update_then_rebind_C" not in str(err)  # the user's names only


def _point(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape), rng.uniform(0.5, 1.5, shape), rng.standard_normal(shape)


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
def test_jvp_gives_the_written_argument_as_an_output(jit):
    C, B, tC = _point((3, 4), 0)
    tB = np.zeros_like(B)
    C_given, B_given = C.copy(), B.copy()
    (value, C_final), (value_dot, C_dot) = sourcead.jvp(m.add_inplace, wrt=("C", "B"), jit=jit)(C, B, tangents=(tC, tB))
    assert np.array_equal(C, C_given) and np.array_equal(B, B_given)  # derivatives never modify your arrays
    np.testing.assert_allclose(C_final, C_given + B_given)
    np.testing.assert_allclose(C_dot, tC)
    np.testing.assert_allclose(value, np.sum((C_given + B_given) ** 2))
    np.testing.assert_allclose(value_dot, np.sum(2.0 * (C_given + B_given) * tC))


def test_a_helper_updates_the_callers_array():
    C, B, tC = _point((2, 3), 1)
    (value, C_final), (value_dot, C_dot) = sourcead.jvp(m.through_helper, wrt="C", jit=False)(C, B, tangents=tC)
    expected = C.copy()
    assert m.through_helper(expected, B) == pytest.approx(value)  # the value plain Python gives
    np.testing.assert_allclose(C_final, 1.2 * C + B)
    np.testing.assert_allclose(C_dot, 1.2 * tC)
    np.testing.assert_allclose(value_dot, np.sum(1.2 * tC * B))
    cotangent = (1.0, np.ones_like(C))  # the result and C's final state
    _, C_bar = sourcead.vjp(m.through_helper, wrt="C", jit=False)(C, B, cotangent=cotangent)
    np.testing.assert_allclose(C_bar, 1.2 * B + 1.2)


def test_a_float_updated_in_a_helper_is_the_helpers_own():
    (x,) = _point(4, 2)[:1]
    value, _ = sourcead.jvp(m.float_parameters, wrt="x", jit=False)(x, tangents=np.ones(4))
    assert isinstance(value, float)  # no written argument: no extra outputs
    assert value == pytest.approx(m.float_parameters(x))


def _uniform(rng, *shape):
    return rng.uniform(0.5, 1.5, shape) if shape else float(rng.uniform(0.2, 0.6))


# the programs that write their arguments (the zoo runs them on copies: `*_copied`), with the
# arguments to differentiate; check_derivative checks their written arguments' final states too
WRITERS = [
    (m.add_inplace, ((3, 4), (3, 4)), ("C", "B")),
    (m.through_helper, ((3, 4), (3, 4)), ("C", "B")),
    (m.two_helper_levels, ((3, 4), (3, 4)), ("C", "B")),
    (m.every_operator, ((5,), (5,), ()), ("x", "y", "a")),
    (m.reads_its_target, ((3, 2), (3, 2)), ("C", "B")),
    (m.helper_returns_it, ((4,), (4,)), ("x", "y")),
    (m.slices_inplace, ((6,), (6,), ()), ("x", "y", "a")),
    (m.rows_and_columns, ((3, 4), (4,), ()), ("A", "b", "a")),
    (m.broadcast_updates, ((3, 4), (4,), ()), ("A", "b", "a")),
    (m.rows_in_helpers, ((3, 4), (3,)), ("A", "s")),
    (m.in_time_loop, ((5,), (5,), ()), ("u", "a", "c")),
    (m.prange_rows, ((4, 3), (3,)), ("A", "x")),
    (m.element_before_update, ((2, 3),), ("A",)),
    (m.gemver, ((), (), (4, 4), *[(4,)] * 8), tuple(range(11))),
    (m.mvt, ((4,), (4,), (4,), (4,), (4, 4)), tuple(range(5))),
    (m.trmm, ((), (3, 3), (3, 4)), (0, 1, 2)),
    (m.symm, ((), (), (3, 4), (3, 3), (3, 4)), tuple(range(5))),
    (m.written_rebound_then_scaled, ((5,), (2,), (2, 2)), (0, 1, 2)),
]
COMPILED = ("add_inplace", "through_helper", "prange_rows")  # numba compiles are slow: a few of them
RUNS = [(*w, False) for w in WRITERS] + [(*w, True) for w in WRITERS if w[0].__name__ in COMPILED]


@pytest.mark.parametrize(
    "func, shapes, wrt, jit", RUNS, ids=[f"{r[0].__name__}-{'jit' if r[3] else 'nojit'}" for r in RUNS]
)
def test_written_arguments_are_right_in_value_and_derivatives(func, shapes, wrt, jit):
    rng = np.random.default_rng(7)
    args = tuple(_uniform(rng, *shape) for shape in shapes)
    report = sourcead.check_derivative(func, *args, wrt=wrt, jit=jit)
    assert report.ok, str(report)
