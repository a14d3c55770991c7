"""Values read only for their shape (issue 40, item 4: "nothing computed only for its shape").

`analysis/reads.value_reads` declares which reads see only a shape (`zeros_like(y)`, `y.shape`,
`unbroadcast(g, y)`, ...); dead-code removal (`postpass/unread.py`) then drops the element writes
into a fresh array that nothing reads but for its shape, in either sweep. Pinned here: where the
writes go (spmv's rows, a stencil's two buffers, a prange loop, a time loop's scratch), by golden
files and numerically; and the shapes of code where they must stay (values read after the loop,
through a view or a second name, in the next step, in a prange loop's reader, a returned array,
snapshots of `memory=` checkpointing), numerically too, with and without numba. Text-level cases
pin what the generated code can hold but the front end does not make (a record, a helper call, a
tuple binding, an argument).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest
import shape_reads as sr
from goldens import GOLDEN, check_golden
from numeric import assert_close, assert_gradient_matches, norm, vdot

import sourcead
from sourcead.analysis.reads import value_reads
from sourcead.pipeline.driver import generate
from sourcead.postpass.deadcode import eliminate_dead_code


def _pruned(text: str) -> str:
    return eliminate_dead_code(cst.parse_module(text)).code


RNG = np.random.default_rng(41)
N = 5
A_ROW = np.array([0, 2, 2, 5, 6, 8])  # an empty row, a row of one
A_COL = np.array([0, 3, 1, 2, 4, 0, 1, 4])
X2 = RNG.standard_normal((4, N))
W4 = RNG.standard_normal(4)

# name: (function, arguments, wrt, kinds, the array whose forward writes are dead, or None)
DEAD = {
    "csr_rows": (
        sr.csr_rows,
        (A_ROW, A_COL, RNG.standard_normal(8), RNG.standard_normal(N)),
        ("A_val", "x"),
        {"A_row": "int_array:1", "A_col": "int_array:1", "A_val": "array:1", "x": "array:1"},
    ),
    "two_buffers": (sr.two_buffers, (RNG.standard_normal(N), RNG.standard_normal(N), 3), ("A0", "B0"), None),
    "rows_in_prange": (sr.rows_in_prange, (X2, W4), ("X", "w"), {"X": "array:2", "w": "array:1"}),
    "shaped_in_time_loop": (sr.shaped_in_time_loop, (RNG.standard_normal(N), 0.7, 3), ("u0", "c"), None),
}
KEPT = {
    "squares_read_after": (sr.squares_read_after, (RNG.standard_normal(N),), ("x",), None),
    "read_through_view": (sr.read_through_view, (RNG.standard_normal(N),), ("x",), None),
    "read_in_loop": (sr.read_in_loop, (RNG.standard_normal(N), 3), ("x",), None),
    "element_read_in_prange": (
        sr.element_read_in_prange,
        (X2, W4),
        ("X", "w"),
        {"X": "array:2", "w": "array:1"},
    ),
    "scratch_in_time_loop": (sr.scratch_in_time_loop, (RNG.standard_normal(N), 0.7, 3), ("u0", "c"), None),
    "scratch_feeds_state": (sr.scratch_feeds_state, (RNG.standard_normal(N), 0.7, 3), ("u0", "c"), None),
}
RECORDED = {  # g's values are read only for their shape: its shape on the tape, not its values
    "shape_changes_each_step": (
        sr.shape_changes_each_step,
        (np.array([0.3]), np.linspace(-0.5, 0.4, N), 3),
        ("x0", "y"),
        {"x0": "array:1", "y": "array:1", "steps": "int"},
    ),
}
WRITES = {  # the element write each program's forward sweep loses (DEAD) or keeps (KEPT)
    "csr_rows": "y[i] =",
    "two_buffers": "B[1:-1] =",
    "rows_in_prange": "y[i] =",
    "shaped_in_time_loop": "y[i] =",
    "squares_read_after": "y[i] =",
    "read_through_view": "y[i] =",
    "read_in_loop": "y[i] =",
    "element_read_in_prange": "y[i] =",
    "scratch_in_time_loop": "t[i] =",
    "scratch_feeds_state": "y[i] =",
}


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a


def _forward_sweep(text: str) -> str:
    """The forward sweep's code, without its comments."""
    sweep = text.partition("# reverse sweep")[0].partition("# forward sweep")[2].partition("\n")[2]
    return "\n".join(line.partition("#")[0].rstrip() for line in sweep.splitlines())


@pytest.mark.parametrize("name", sorted(DEAD))
def test_writes_read_only_for_their_shape_are_dead(name, update_golden):
    func, _args, wrt, kinds = DEAD[name]
    text = generate(func, "gradient", wrt, kinds).source
    assert WRITES[name] not in _forward_sweep(text)
    check_golden(GOLDEN / f"shape_reads_{name}.gradient.py", text, update_golden, name)


def test_spmv_forward_sweep_is_one_allocation():
    func, _args, wrt, kinds = DEAD["csr_rows"]
    code = [line.strip() for line in _forward_sweep(generate(func, "gradient", wrt, kinds).source).splitlines()]
    assert code == ["y = np.empty(A_row.size - 1, dtype=A_val.dtype)"]


def test_a_copy_read_only_for_its_shape_is_an_allocation():
    text = generate(sr.two_buffers, "gradient", ("A0", "B0")).source
    assert "A = np.empty(A0.shape, A0.dtype)" in text and "np.copy(A0)" not in _forward_sweep(text)


@pytest.mark.parametrize("name", sorted(KEPT))
def test_writes_whose_values_are_read_stay(name):
    func, _args, wrt, kinds = KEPT[name]
    assert WRITES[name] in _forward_sweep(generate(func, "gradient", wrt, kinds).source)


def test_a_returned_array_keeps_its_writes():
    assert "y[i] =" in _forward_sweep(generate(sr.returned_array, "reverse", ("x",)).source)


@pytest.mark.parametrize("memory", [None, 200])
def test_checkpointed_steps_keep_what_their_snapshots_read(memory):
    text = generate(sr.shaped_in_time_loop, "gradient", ("u0", "c"), None, memory=memory).source
    assert ("y[i] =" in _forward_sweep(text)) == (memory is not None)  # the snapshots read y


@pytest.mark.parametrize("memory", [None, 10**6])
def test_an_array_read_only_for_its_shape_records_its_shape(memory):
    func, _args, wrt, kinds = RECORDED["shape_changes_each_step"]
    text = generate(func, "gradient", wrt, kinds, memory=memory).source
    assert "record_flat(tape, top, g)" not in text and "g = tape[" not in text
    assert "itape[np.uint64(itop)] = g.shape[0]" in text and "g = np.empty(shape" in text
    assert "record_flat(tape, top, x)" in text  # x's values are read (its own adjoint)


CASES = {**DEAD, **KEPT, **RECORDED}


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name, jit):
    func, args, wrt, _kinds = CASES[name]
    got = sourcead.grad(func, wrt=wrt, jit=jit)(*(_copy(a) for a in args))
    assert_gradient_matches(func, args, wrt, got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_reverse_agree(name):
    func, args, wrt, _kinds = CASES[name]
    params = func.__code__.co_varnames
    tangents = tuple(
        RNG.standard_normal(a.shape) if isinstance(a, np.ndarray) else float(RNG.standard_normal())
        for p, a in zip(params, args, strict=False)
        if p in wrt
    )
    _, jv = sourcead.jvp(func, wrt=wrt, jit=False)(*(_copy(a) for a in args), tangents=tangents)
    _, jtw = sourcead.vjp(func, wrt=wrt, jit=False)(*(_copy(a) for a in args), cotangent=0.7)
    jtw = jtw if isinstance(jtw, tuple) else (jtw,)
    assert_close(vdot(jtw, tangents), 0.7 * jv, rtol=1e-10, atol=1e-12 * norm(jtw) * norm(tangents))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_checkpointed_gradients_match_finite_differences(jit):
    for func in (sr.shaped_in_time_loop, sr.scratch_feeds_state):
        args = (RNG.standard_normal(N), 0.7, 4)
        got = sourcead.grad(func, wrt=("u0", "c"), jit=jit, memory=200)(*(_copy(a) for a in args))
        assert_gradient_matches(func, args, ("u0", "c"), got, rtol=1e-6, atol=1e-8)
    # x0 of y's shape: the state keeps its shape (the next test changes it)
    args = (RNG.standard_normal(N) * 0.5, np.linspace(-0.5, 0.4, N), 6)
    got = sourcead.grad(sr.shape_changes_each_step, wrt=("x0", "y"), jit=jit, memory=200)(*args)
    assert_gradient_matches(sr.shape_changes_each_step, args, ("x0", "y"), got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_checkpointed_state_that_changes_shape_is_refused_with_what_to_do(jit):
    # x0 of one element broadcast against y: the state x grows after the first step, and the
    # snapshots hold the shape x had at the loop's entry; without memory= the gradient is right
    args = (np.array([0.3]), np.linspace(-0.5, 0.4, N), 6)
    got = sourcead.grad(sr.shape_changes_each_step, wrt=("x0", "y"), jit=jit)(*args)
    assert_gradient_matches(sr.shape_changes_each_step, args, ("x0", "y"), got, rtol=1e-6, atol=1e-8)
    with pytest.raises(sourcead.ShapeError, match="changes shape in the loop") as caught:
        sourcead.grad(sr.shape_changes_each_step, wrt=("x0", "y"), jit=jit, memory=200)(*args)
    assert "sourcead bug" not in str(caught.value) and "without memory=" in caught.value.hint


def test_a_shared_adjoint_read_for_its_shape_in_a_prange_loop():
    args = (X2, RNG.standard_normal(N))
    got = sourcead.grad(sr.shared_adjoint_in_prange, wrt=("X", "w"))(*(_copy(a) for a in args))
    assert_gradient_matches(sr.shared_adjoint_in_prange, args, ("X", "w"), got)


def test_a_returned_array_pulls_back_right():
    x, w = RNG.standard_normal(N), RNG.standard_normal(N)
    value, pulled = sourcead.vjp(sr.returned_array, wrt="x", jit=False)(x.copy(), cotangent=w)
    assert_close(value, x * x, 1e-15)
    assert_close(pulled, 2.0 * x * w, 1e-14)


# ---- the declaration of shape-only reads ------------------------------------------------------
@pytest.mark.parametrize(
    "text, values",
    [
        ("zeros_like(y)", set()),
        ("y.shape[0] + len(y) + y.size", set()),
        ("np.empty(y.shape, y.dtype)", {"np"}),
        ("unbroadcast(g, y)", {"g"}),
        ("unbroadcast(g, broadcast_like(x, y))", {"g"}),
        ("unbroadcast(g, x + 2.0 * y)", {"g"}),
        ("zeros_like(y[i:j])", {"i", "j"}),
        ("broadcast_like(x, y)", {"x", "y"}),  # its result may be x itself: a value
        ("y[1:]", {"y"}),
        ("np.sum(y)", {"np", "y"}),
        ("zeros_like(np.sin(y))", {"np", "y"}),  # only operators and declared helpers pass a shape on
        ("y.copy()", {"y"}),
    ],
)
def test_value_reads(text, values):
    assert value_reads(cst.parse_expression(text)) == values


# ---- aliases the generated code can hold: the writes stay ---------------------------------------
ALIASED = {
    "returned": "y = np.empty(n)\ny[0] = x\nreturn y",
    "bound again": "y = np.empty(n)\ny[0] = x\nz = y\nz_bar = zeros_like(z)\nreturn z[0]",
    "recorded": "y = np.empty(n)\ny[0] = x\nrecord_flat(tape, 0, y)\nreturn zeros_like(y)",
    "a view read": "y = np.empty(n)\nv = y[1:]\ny[1] = x\nreturn np.sum(v)",
    "an element read": "y = np.empty(n)\ny[0] = x\nreturn y[0] + zeros_like(y)",
    "a tuple": "y = np.empty(n)\ny, z = z, y\ny[0] = x\nreturn z",
    "not fresh": "y = w[1:]\ny[0] = x\nreturn zeros_like(y) + w",
    "in a helper": "y = np.empty(n)\ny[0] = x\nadd_taken(g, True, y, idx)\nreturn zeros_like(y)",
}


@pytest.mark.parametrize("name", sorted(ALIASED))
def test_element_writes_into_an_aliased_array_stay(name):
    body = textwrap.indent(ALIASED[name], "    ")
    text = _pruned(f"def f(x, n, w, z, tape, g, idx):\n{body}\n")
    assert "y[0] = x" in text or "y[1] = x" in text


def test_element_writes_into_an_argument_stay():
    text = _pruned("def f(y, x):\n    y[0] = x\n    return zeros_like(y)\n")
    assert "y[0] = x" in text


def test_element_writes_read_only_for_a_shape_go():
    before = (
        "def f(x, n):\n    y = np.copy(x)\n    for i in range(n):\n        y[i] = x[i] * 2.0\n"
        "        y += 1.0\n    return zeros_like(y)\n"
    )
    after = "def f(x, n):\n    y = np.empty(x.shape, x.dtype)\n    return zeros_like(y)\n"
    assert _pruned(before) == after
