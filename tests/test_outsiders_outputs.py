"""Issue 38, finding 1: which arrays are outputs follows the caller's memory, not the parameter's name.

A written argument's final state is an extra output whatever name reaches it at the end (after a
swap), or none (after a rebinding: its state from just before). Each program of
`outsiders_outputs.py` is checked against the plain Python function run on copies: the value and
the final states, jvp against central differences, vjp by the dot-product test against them, grad
against finite differences, with and without numba; the caller's arrays stay untouched.
"""

from __future__ import annotations

import inspect

import numpy as np
import outsiders_outputs as oo
import pytest
from numeric import assert_close, central_difference_jvp, copy_tree, finite_difference_gradient, norm, vdot

import sourcead

JIT = pytest.mark.parametrize("jit", [False, True], ids=["python", "jit"])
FD_RTOL = 1e-6


def _x(rng, n=5):
    return 0.5 + rng.random(n)


# (function, arguments, wrt, the positions of the arguments the caller sees written)
WRITTEN = [
    (oo.write_then_rebind, lambda rng: (_x(rng),), ("x",), (0,)),
    (oo.swap_then_write, lambda rng: (_x(rng), 0.7), ("x", "a"), (0,)),
    (oo.swap_write_swap_back, lambda rng: (_x(rng),), ("x",), (0,)),
    (oo.loop_write_then_rebind, lambda rng: (_x(rng), 0.3), ("x", "c"), (0,)),
    (oo.helper_writes_then_rebind, lambda rng: (_x(rng), 1.3), ("x", "s"), (0,)),
    (oo.prange_write_then_rebind, lambda rng: (_x(rng),), ("x",), (0,)),
    (oo.rebind_in_both_branches, lambda rng: (_x(rng), 0.6), ("x", "a"), (0,)),
    (oo.rebind_in_both_branches, lambda rng: (_x(rng), -0.6), ("x", "a"), (0,)),
    (oo.rebound_in_one_branch, lambda rng: (_x(rng), 0.6), ("x", "a"), (0,)),
    (oo.rebound_in_one_branch, lambda rng: (_x(rng), -0.6), ("x", "a"), (0,)),
    (oo.returned_on_one_path, lambda rng: (_x(rng), 0.6), ("x", "a"), (0,)),
    (oo.returned_on_one_path, lambda rng: (_x(rng), -0.6), ("x", "a"), (0,)),
    (oo.iterated_then_updated, lambda rng: (_x(rng), 0.3 + 0.1 * rng.random(5)), ("x", "w"), (0,)),
    (oo.rebind_then_write, lambda rng: (_x(rng),), ("x",), ()),
    (oo.swap_then_write_other, lambda rng: (_x(rng),), ("x",), ()),
]
each = pytest.mark.parametrize(
    "func, make, wrt, written", WRITTEN, ids=[f"{w[0].__name__}{k}" for k, w in enumerate(WRITTEN)]
)


def _outputs(func, written):
    """The function as sourcead sees it: (result, final state of each written argument), on copies."""

    def pure(*args):
        args = copy_tree(tuple(args))
        result = func(*args)
        return (result, *(args[k].copy() for k in written)) if written else result

    pure.__signature__ = inspect.signature(func)  # finite differences find wrt by name
    return pure


def _point(func, make, wrt):
    rng = np.random.default_rng(len(func.__name__))
    args = make(rng)
    names = list(inspect.signature(func).parameters)
    tangents = tuple(_random_like(rng, args[names.index(w)]) for w in wrt)
    return args, tangents, rng


def _random_like(rng, value):
    if isinstance(value, tuple):
        return tuple(_random_like(rng, v) for v in value)
    return rng.standard_normal(value.shape) if isinstance(value, np.ndarray) else float(rng.standard_normal())


@each
@JIT
def test_value_and_jvp_follow_the_callers_array(func, make, wrt, written, jit):
    args, tangents, _ = _point(func, make, wrt)
    before = copy_tree(args)
    pure = _outputs(func, written)
    value, tangent = sourcead.jvp(func, wrt=wrt, jit=jit)(*args, tangents=tangents)
    assert_close(value, pure(*args), 1e-12, 1e-12)
    expected = central_difference_jvp(pure, args, wrt, tangents)
    assert_close(tangent, expected, FD_RTOL, FD_RTOL * norm(expected))
    assert_close(args, before, 0.0, 0.0)  # the caller's arrays are untouched


@each
@JIT
def test_vjp_takes_a_cotangent_for_each_written_argument(func, make, wrt, written, jit):
    args, tangents, rng = _point(func, make, wrt)
    before = copy_tree(args)
    pure = _outputs(func, written)
    cotangent = _random_like(rng, pure(*args))
    value, grads = sourcead.vjp(func, wrt=wrt, jit=jit)(*args, cotangent=copy_tree(cotangent))
    assert_close(value, pure(*args), 1e-12, 1e-12)
    jv = central_difference_jvp(pure, args, wrt, tangents)
    expected = vdot(cotangent, jv)
    assert_close(vdot(grads, tangents), expected, FD_RTOL, FD_RTOL * norm(cotangent) * norm(jv))
    assert_close(args, before, 0.0, 0.0)


@each
@JIT
def test_grad_differentiates_the_result_alone(func, make, wrt, written, jit):
    args, _, _ = _point(func, make, wrt)
    grads = sourcead.grad(func, wrt=wrt, jit=jit)(*args)
    expected = finite_difference_gradient(_outputs(func, ()), args, wrt)
    assert_close(grads, expected, FD_RTOL, FD_RTOL * norm(expected))


def _line_of(func, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "func, at",
    [(oo.swapped_in_a_loop, "for _t in range(3):"), (oo.swapped_in_one_branch, "if a > 0.0:")],
)
@pytest.mark.parametrize("kind", ["jvp", "vjp", "grad"])
def test_a_caller_array_whose_name_depends_on_the_run_is_refused_at_its_line(func, at, kind):
    with pytest.raises(sourcead.SourceADError) as caught:
        getattr(sourcead, kind)(func, wrt=0, jit=False)(_x(np.random.default_rng(0)), 0.3)
    err = caught.value
    param = list(inspect.signature(func).parameters)[0]
    assert f"which name holds the array passed as `{param}` depends on the run here" in err.message
    assert err.where is not None and err.where.line == _line_of(func, at)
    assert err.where.column == 4
    assert f"`{param} = {param}.copy()`" in err.hint


@each
@JIT
def test_batches_of_directions_start_each_from_the_callers_arguments(func, make, wrt, written, jit):
    """hessian (a batch of hvp) and jacobian (a batch of jvp) call the derivative once per direction:
    each call writes its own copy of the written arguments."""
    args, _, _ = _point(func, make, wrt)
    g = sourcead.grad(func, wrt=wrt[0], jit=False)

    def gradient(*a):
        return g(*copy_tree(a))

    gradient.__signature__ = inspect.signature(func)
    size = args[0].size
    columns = [central_difference_jvp(gradient, args, wrt[:1], (e,), eps=1e-5) for e in np.eye(size)]
    hessian = sourcead.hessian(func, wrt=wrt[0], jit=jit)(*args)
    assert_close(hessian, np.array(columns), 1e-5, 1e-5 * norm(np.array(columns)))
    jacobian = sourcead.jacobian(func, wrt=wrt[0], mode="forward", jit=jit)(*args)
    expected = finite_difference_gradient(_outputs(func, ()), args, wrt[:1])[0]
    assert_close(jacobian, expected, FD_RTOL, FD_RTOL * norm(expected))
