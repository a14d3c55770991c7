"""One prepared derivative shared by many Python threads gives, on every call, the serial result.

The scenario of background/1-prepared-derivatives-and-threads.txt: a gradient prepared once, then
8 threads x 10,000 calls on different inputs, with fresh results, with out= buffers, and for a
function whose reverse sweep reads a tape. Equality is exact: the same compiled code on the same
input must give the same bits, whatever runs beside it.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import passthrough as pt
import pytest

import sourcead

THREADS, CALLS, N = 8, 10_000, 3


def wavy(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(a * x[i]) * x[i]
    return s


def taped(x, n):
    s = 0.0
    for i in range(x.shape[0]):
        t = x[i]
        for _k in range(n):
            t = t * (1.0 - 0.25 * t)  # overwrites t, which its adjoint reads: recorded on the tape
        s += t * t
    return s


@pytest.fixture(scope="module")
def inputs():
    return np.random.default_rng(11).standard_normal((THREADS, CALLS, N))


@pytest.fixture(scope="module")
def wavy_grad():
    return sourcead.grad(wavy, wrt=(0, 1))


@pytest.fixture(scope="module")
def taped_grad():
    g = sourcead.grad(taped)
    assert "tape[np.uint64(top)] = t" in g.source  # the scenario needs a reverse sweep that reads a tape
    return g


def run_in_threads(work):
    """`work(t)` in THREADS threads started together; their results, in thread order."""
    barrier = threading.Barrier(THREADS)
    results: list = [None] * THREADS
    errors: list = []

    def body(t):
        try:
            barrier.wait()
            results[t] = work(t)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_shared_gradient_gives_the_serial_result_on_every_call(wavy_grad, inputs):
    a = 1.3
    serial = [[wavy_grad(x, a) for x in row] for row in inputs]
    threaded = run_in_threads(lambda t: [wavy_grad(x, a) for x in inputs[t]])
    for t in range(THREADS):
        assert np.array_equal(np.array([gx for gx, _ in threaded[t]]), np.array([gx for gx, _ in serial[t]]))
        assert [ga for _, ga in threaded[t]] == [ga for _, ga in serial[t]]


def test_shared_gradient_with_out_buffers_gives_the_serial_result(wavy_grad, inputs):
    a = 0.7
    serial = np.array([[wavy_grad(x, a)[0] for x in row] for row in inputs])
    written = np.full_like(inputs, np.nan)

    def work(t):
        for i, x in enumerate(inputs[t]):
            gx, _ = wavy_grad(x, a, out=(written[t, i], None))
            assert gx.base is written  # the buffer itself comes back
        return None

    run_in_threads(work)
    assert np.array_equal(written, serial)


def test_shared_gradient_of_a_taped_loop_gives_the_serial_result(taped_grad, inputs):
    serial = np.array([[taped_grad(x, 4) for x in row] for row in inputs])
    threaded = run_in_threads(lambda t: np.array([taped_grad(x, 4) for x in inputs[t]]))
    assert np.array_equal(np.array(threaded), serial)


def test_compiled_code_releases_the_gil(taped_grad):
    taped_grad(np.ones(N), 1)
    assert taped_grad._default.call.targetoptions["nogil"] is True


def test_first_calls_racing_on_a_new_signature_compile_it_once(wavy_grad):
    x = np.linspace(-1.0, 1.0, 5)[::2]  # a non-contiguous array: a signature no other test uses
    dispatcher = wavy_grad._default.call
    before = set(dispatcher.signatures)
    expected = sourcead.grad(wavy, wrt=(0, 1), jit=False)(x.copy(), 0.5)
    results = run_in_threads(lambda t: wavy_grad(x, 0.5))
    new = set(dispatcher.signatures) - before
    assert len(new) == 1
    for gx, ga in results:
        np.testing.assert_allclose(gx, expected[0], rtol=1e-14)
        assert math.isclose(ga, expected[1], rel_tol=1e-14)


def test_preparing_from_many_threads_at_once_shares_one_compiled_module():
    prepared = run_in_threads(lambda t: sourcead.grad(taped))
    assert len({id(g._default.call) for g in prepared}) == 1
    x = np.array([0.1, 0.2, 0.3])
    assert len({tuple(g(x, 2)) for g in prepared}) == 1


def test_variants_for_call_kinds_are_built_once_when_threads_race():
    vf = sourcead.vjp(pt.ident, jit=False)  # `ident`'s parameter takes its kind from the call
    results = run_in_threads(lambda t: vf(np.full(3, float(t)), cotangent=np.full(3, 2.0 * t)))
    for t, (value, g) in enumerate(results):
        np.testing.assert_array_equal(g, np.full(3, 2.0 * t))
    assert len(vf._variants) == 2  # floats (the default) and arrays, each built once
    assert len({id(v) for v in vf._variants.values()}) == 2


def test_decorated_function_hands_every_thread_the_same_prepared_derivative():
    f = sourcead.differentiable(taped)
    prepared = run_in_threads(lambda t: f.grad(0))
    assert all(p is prepared[0] for p in prepared)
