"""Derivatives inside differentiated code (issue 42): a prepared `grad` called in a function that
grad, jvp or vjp differentiates, checked against central differences of the outer function and
by the dot-product test, with and without numba."""

from __future__ import annotations

import nested_programs as npg
import numpy as np
import pytest
from numeric import assert_close

import sourcead as ad

RNG = np.random.default_rng(42)
X0 = np.array([0.3, -0.2, 0.5])
Q, DT, STEPS = 0.7, 0.05, 20


def _fd(f, args, k, direction, eps=1e-6):
    """The central difference of f along `direction` in argument k."""
    plus, minus = list(args), list(args)
    plus[k] = args[k] + eps * direction
    minus[k] = args[k] - eps * direction
    return (f(*plus) - f(*minus)) / (2 * eps)


@pytest.fixture(scope="module", params=[True, False], ids=["numba", "python"])
def jit(request):
    return request.param


@pytest.fixture(scope="module")
def simulate_derivatives(jit):
    return ad.grad(npg.simulate, wrt=(0, 1), jit=jit), ad.jvp(npg.simulate, wrt=(0, 1), jit=jit)


def test_reverse_over_reverse_matches_central_differences(simulate_derivatives):
    g, _ = simulate_derivatives
    gx, gq = g(X0, Q, DT, STEPS)
    args = (X0, Q, DT, STEPS)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        assert_close(gx[k], _fd(npg.simulate, args, 0, e), 1e-6, 1e-8)
    assert_close(gq, _fd(npg.simulate, args, 1, 1.0), 1e-6, 1e-8)


def test_forward_over_reverse_matches_central_differences_and_the_dot_product_test(simulate_derivatives):
    g, j = simulate_derivatives
    v, w = RNG.standard_normal(3), 0.4
    value, tangent = j(X0, Q, DT, STEPS, tangents=(v, w))
    assert_close(value, npg.simulate(X0, Q, DT, STEPS), 1e-12, 0)
    plus = npg.simulate(X0 + 1e-6 * v, Q + 1e-6 * w, DT, STEPS)
    minus = npg.simulate(X0 - 1e-6 * v, Q - 1e-6 * w, DT, STEPS)
    assert_close(tangent, (plus - minus) / 2e-6, 1e-6, 1e-8)
    gx, gq = g(X0, Q, DT, STEPS)
    assert_close(tangent, gx @ v + gq * w, 1e-12, 1e-12)  # forward against reverse


def test_the_outer_adjoint_calls_the_inner_hvp_once_per_step(simulate_derivatives):
    """No inner tape in the outer one: the forward sweep calls `force`, the reverse sweep its hvp
    from the recorded arguments, and never the gradient again."""
    g, _ = simulate_derivatives
    source = g.source
    forward, reverse = source.split("# reverse sweep", 1)
    reverse = "\n".join(line for line in reverse.splitlines() if not line.strip().startswith("#"))
    assert "force(x, q)" in forward and "force(" not in reverse.replace("force_hvp(", "")
    assert reverse.count("force_hvp(x, q, ") == 1
    assert 'force_hvp = nested_entry("nested_programs", "force"' in source


def test_vjp_over_reverse_with_a_cotangent(jit):
    c = 1.7
    value, (gx, gq) = ad.vjp(npg.simulate, wrt=(0, 1), jit=jit)(X0, Q, DT, STEPS, cotangent=c)
    ex, eq = ad.grad(npg.simulate, wrt=(0, 1), jit=jit)(X0, Q, DT, STEPS)
    assert_close(gx, c * ex, 1e-12, 0)
    assert_close(gq, c * eq, 1e-12, 0)


def test_a_call_of_its_njit_is_the_same_call(jit):
    gx = ad.grad(npg.simulate_njit_call, wrt=0, jit=jit)(X0, Q, DT, STEPS)
    assert_close(gx, ad.grad(npg.simulate, wrt=0, jit=jit)(X0, Q, DT, STEPS), 1e-12, 0)


def test_derivatives_flow_through_every_argument_of_the_inner_call(jit):
    """`stiff(x, k)` differentiates wrt x only, yet the outer gradient reaches k through it."""
    args = (X0, 1.3, DT, 10)
    gk = ad.grad(npg.spring, wrt=1, jit=jit)(*args)
    assert_close(gk, _fd(npg.spring, args, 1, 1.0), 1e-6, 1e-8)


def _refused(f, line_text, *, jit=False, **kwargs):
    import nested_bad

    with pytest.raises(ad.SourceADError) as info:
        ad.grad(f, jit=jit, **kwargs)(np.array([0.3, 0.4]), *(() if f is not nested_bad.steps else (3,)))
    where = info.value.where
    assert where is not None and where.filename.endswith("nested_bad.py"), info.value
    assert line_text in where.source_line, where.source_line
    return info.value


def test_an_inner_vjp_with_a_float_cotangent_and_an_inner_hvp_run_right():
    """Once refused (tests/test_nested_kinds.py covers every kind): a vjp of a float result, whose
    lowering drops the np.sum, and an hvp, each against central differences."""
    import nested_bad

    x = np.array([0.3, 0.4])
    for f in (nested_bad.calls_a_vjp, nested_bad.calls_an_hvp):
        g = ad.grad(f, jit=False)(x)
        for k in range(2):
            e = np.zeros(2)
            e[k] = 1.0
            assert_close(g[k], _fd(f, (x,), 0, e), 1e-6, 1e-8)


def test_arguments_by_keyword_and_tuples_of_gradients_are_refused_at_the_call():
    import nested_bad

    error = _refused(nested_bad.calls_by_keyword, "cube_grad(x=x)")
    assert "by position" in error.message
    error = _refused(nested_bad.calls_a_tuple_of_gradients, "cube_grads(x, x)")
    assert "tuple of gradients" in error.message


def test_a_function_calling_its_own_derivative_is_refused(monkeypatch):
    import nested_bad

    monkeypatch.setattr(nested_bad, "inner", ad.grad(nested_bad.selfish, jit=False))
    error = _refused(nested_bad.selfish, "inner(x)")
    assert "derivative of selfish itself" in error.message


def test_an_inner_derivative_without_numba_is_refused_from_compiled_code():
    import nested_bad

    error = _refused(nested_bad.steps, "cube_grad(x)", jit=True)
    assert "jit=False" in error.message and "jit=True" in error.hint


def test_second_order_of_a_function_calling_a_derivative_is_refused():
    with pytest.raises(ad.SourceADError) as info:
        ad.hvp(npg.simulate, wrt=0, jit=False)(X0, Q, DT, STEPS, tangents=X0)
    assert "third derivatives" in info.value.message
    assert info.value.where is not None and "force(x, q)" in info.value.where.source_line


@pytest.mark.parametrize("outer", ["grad", "jvp"])
def test_reverse_and_forward_over_an_inner_jvp(jit, outer):
    """rf and ff: the inner jvp's generated tangent code is inlined like a helper, and the outer
    mode differentiates it; the same numbers as the inner-grad program, which computes the same."""
    args = (X0, Q, DT, 8)
    v, w = RNG.standard_normal(3), -0.6
    if outer == "grad":
        gx, gq = ad.grad(npg.simulate_forward_inner, wrt=(0, 1), jit=jit)(*args)
        assert_close(gx @ v + gq * w, _fd2(npg.simulate_forward_inner, args, v, w), 1e-6, 1e-8)
        ex, eq = ad.grad(npg.simulate, wrt=(0, 1), jit=jit)(*args)
        assert_close(gx, ex, 1e-10, 1e-12)
        assert_close(gq, eq, 1e-10, 1e-12)
    else:
        _, tangent = ad.jvp(npg.simulate_forward_inner, wrt=(0, 1), jit=jit)(*args, tangents=(v, w))
        assert_close(tangent, _fd2(npg.simulate_forward_inner, args, v, w), 1e-6, 1e-8)
        gx, gq = ad.grad(npg.simulate_forward_inner, wrt=(0, 1), jit=jit)(*args)
        assert_close(tangent, gx @ v + gq * w, 1e-12, 1e-12)  # dot-product test


def _fd2(f, args, v, w, eps=1e-6):
    x0, q, *rest = args
    return (f(x0 + eps * v, q + eps * w, *rest) - f(x0 - eps * v, q - eps * w, *rest)) / (2 * eps)


def test_inside_prange_each_iteration_has_its_own_inner_derivative(jit):
    X = RNG.standard_normal((5, 3))
    gX, gq = ad.grad(npg.field_energy, wrt=(0, 1), jit=jit)(X, Q)
    V = RNG.standard_normal((5, 3))
    assert_close(np.sum(gX * V) + gq * 0.3, _fd2(npg.field_energy, (X, Q), V, 0.3), 1e-6, 1e-8)
    _, tangent = ad.jvp(npg.field_energy, wrt=(0, 1), jit=jit)(X, Q, tangents=(V, 0.3))
    assert_close(tangent, np.sum(gX * V) + gq * 0.3, 1e-12, 1e-12)  # dot-product test


def test_an_inner_optimiser_tuned_through_its_steps(jit):
    X, y = RNG.standard_normal((8, 3)), RNG.standard_normal(8)
    Xv, yv = RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    args = (0.05, np.zeros(3), X, y, Xv, yv)
    g_lr = ad.grad(npg.tuned, wrt=0, jit=jit)(*args)
    assert_close(g_lr, _fd(npg.tuned, args, 0, 1.0), 1e-6, 1e-8)
    _, t_lr = ad.jvp(npg.tuned, wrt=0, jit=jit)(*args, tangents=1.0)
    assert_close(t_lr, g_lr, 1e-12, 1e-12)


def test_memory_bounds_the_outer_tape_and_gives_the_same_gradient():
    args = (X0, Q, 0.01, 2000)
    exact = ad.grad(npg.simulate, wrt=(0, 1), jit=False)(*args)
    bounded = ad.grad(npg.simulate, wrt=(0, 1), jit=False, memory="16kB")
    assert "checkpoint" in bounded.source
    got = bounded(*args)
    assert_close(got[0], exact[0], 1e-12, 0)
    assert_close(got[1], exact[1], 1e-12, 0)


@pytest.mark.parametrize("variant", ["rr", "fr", "rf", "ff"])
def test_gradbench_particle_and_saddle_derivatives_match_central_differences(variant):
    """The GradBench tool's nested variants (benchmarks/gradbench_tool/): each outer derivative
    against central differences of its objective, without numba for the outer transform."""
    from benchmarks.gradbench_tool import particle, saddle

    objective, gradient = particle.outer(variant, False)
    w = np.array([0.3])
    fd = (objective(w + 1e-6) - objective(w - 1e-6)) / 2e-6
    assert_close(gradient(w)[0], fd, 1e-5, 1e-7)
    start = np.array([1.0, 1.0])
    objective, gradient = saddle.outer(variant, False, start)
    p1 = np.array([0.4, -0.3])
    units = np.eye(2)
    fd2 = [(objective(p1 + 1e-6 * e) - objective(p1 - 1e-6 * e)) / 2e-6 for e in units]
    assert_close(gradient(p1), np.array(fd2), 1e-5, 1e-7)


def test_calls_with_other_kinds_of_arguments_are_refused_at_the_second_call():
    import nested_bad

    with pytest.raises(ad.SourceADError) as info:
        ad.grad(nested_bad.mixed_kinds, jit=False)(np.ones((2, 2)))
    assert "`cube_grad` is called here with arguments of other kinds" in info.value.message
    assert info.value.where is not None and "cube_grad(x[:, 0])" in info.value.where.source_line


def test_a_module_load_never_waits_on_an_inner_derivative_another_thread_prepares():
    # a thread preparing the inner object holds its lock, then loads its module; the outer build
    # must not hold the load lock while it waits for that inner object (each would wait for ever)
    import threading
    import time

    import nested_lock

    from sourcead.build import modules

    held, loaded = threading.Event(), {}

    def preparer():
        with nested_lock.force._lock:
            held.set()
            time.sleep(1.0)  # the outer build reaches the inner object meanwhile
            loaded["ok"] = modules._LOCK.acquire(timeout=20)
            if loaded["ok"]:
                modules._LOCK.release()

    thread = threading.Thread(target=preparer)
    thread.start()
    held.wait()
    x = np.array([0.3, -0.2, 0.5])
    g = ad.grad(nested_lock.pull, wrt=0, jit=False)(x, 0.5)
    thread.join()
    assert loaded["ok"], "the outer module's load held the load lock while building its derivative call"
    assert_close(g, 9.0 * 0.5 * x * x, 1e-12, 1e-12)  # pull = sum(3 q x^3)
