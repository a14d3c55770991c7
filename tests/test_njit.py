"""`g.njit`: every prepared transform as a numba dispatcher, callable from the user's own compiled
code, returning exactly what the Python wrapper returns (bit for bit: the same generated code)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mutating
import numba
import numpy as np
import parallel_kernels
import passthrough
import pytest
import vectorized
from numba.core.errors import TypingError
from numeric import finite_difference_gradient
from zoo import ZOO

import sourcead

ROOT = Path(__file__).resolve().parent.parent
SCALAR_CASES = [case for case in ZOO if case.scalar_output][:12]  # enough variety; each costs a compile


def assert_same(a, b):
    """Same structure, same types (float vs array), bit-equal values."""
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert isinstance(a, float) and not isinstance(a, np.ndarray), type(a)
        assert a == b or (math.isnan(a) and math.isnan(b))


def quartic(x, c, n):
    s = 0.0
    for k in range(n):
        for i in range(x.shape[0]):
            s += c * x[i] ** 4 / (k + 1)
    return s


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


ROSEN_GRAD = sourcead.grad(rosenbrock).njit  # a global: numba calls dispatchers it finds as globals


@numba.njit
def descend(x, steps, rate):
    for _ in range(steps):
        x = x - rate * ROSEN_GRAD(x)
    return x


@pytest.mark.parametrize("case", SCALAR_CASES, ids=lambda case: case.name)
def test_grad_njit_returns_what_grad_returns(case):
    args = case.make_args(np.random.default_rng(1))
    g = sourcead.grad(case.func, wrt=case.wrt)
    assert_same(g.njit(*args), g(*args))


def test_every_transform_and_structure():
    x, c, n = np.array([0.5, -1.0, 2.0]), 1.5, 3
    for wrt in (0, (0, 1), ("c",)):
        g, vg = sourcead.grad(quartic, wrt), sourcead.value_and_grad(quartic, wrt)
        assert_same(g.njit(x, c, n), g(x, c, n))
        assert_same(vg.njit(x, c, n), vg(x, c, n))
        vf = sourcead.vjp(quartic, wrt)
        assert_same(vf.njit(x, c, n, 2.5), vf(x, c, n, cotangent=2.5))
        jf = sourcead.jvp(quartic, wrt)
        t = {0: np.array([1.0, 0.5, -2.0]), (0, 1): (np.array([1.0, 0.5, -2.0]), 0.3), ("c",): (0.3,)}[wrt]
        assert_same(jf.njit(x, c, n, t), jf(x, c, n, tangents=t))
    # ints where floats are expected are accepted, as by the Python wrapper
    assert_same(sourcead.grad(quartic, 1).njit(x, 2, n), sourcead.grad(quartic, 1)(x, 2, n))


def test_gradient_matches_finite_differences():
    x = np.array([0.3, -0.7, 1.1, 0.9])
    (expected,) = finite_difference_gradient(rosenbrock, (x,), ["x"])
    np.testing.assert_allclose(ROSEN_GRAD(x), expected, rtol=1e-6)


def test_called_from_user_njit_code():
    x0 = np.array([-1.2, 1.0, 0.8])
    x = x0.copy()
    for _ in range(50):
        x = x - 1e-4 * sourcead.grad(rosenbrock)(x)
    np.testing.assert_array_equal(descend(x0, 50, 1e-4), x)


def test_written_arguments_are_copied_and_extra_outputs():
    x, out = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    g = sourcead.grad(mutating.fill_squares)
    assert_same(g.njit(x, out), g(x, out))
    vf = sourcead.vjp(mutating.fill_squares)
    c = (1.0, np.array([0.5, 1.0, -1.0]))
    assert_same(vf.njit(x, out, c), vf(x, out, cotangent=c))
    jf = sourcead.jvp(mutating.fill_squares)
    assert_same(jf.njit(x, out, np.ones(3)), jf(x, out, tangents=np.ones(3)))
    assert not out.any()  # never written
    u = np.linspace(0.0, 1.0, 9)
    gh = sourcead.grad(mutating.heat_in_place, wrt=(0, 1))
    assert_same(gh.njit(u, 0.1, 5), gh(u, 0.1, 5))
    assert u[1] == 0.125


def test_written_argument_sharing_memory_is_refused():
    x = np.arange(4.0)
    with pytest.raises(sourcead.AliasingError, match="`out` and `x` of fill_squares share memory"):
        sourcead.grad(mutating.fill_squares).njit(x, x)
    # disjoint halves of one buffer are fine
    buf = np.arange(8.0)
    g = sourcead.grad(mutating.fill_squares)
    assert_same(g.njit(buf[:4], buf[4:]), g(buf[:4], buf[4:]))


def test_tuple_results_and_cotangent_structure():
    x = np.array([1.0, -2.0])
    vf = sourcead.vjp(passthrough.scaled_and_self, wrt=(0, 1))
    c = (0.5, np.array([1.0, 3.0]))
    assert_same(vf.njit(x, 2.0, c), vf(x, 2.0, cotangent=c))
    with pytest.raises(TypingError, match="the cotangent of the result must be a tuple of 2 entries"):
        vf.njit(x, 2.0, 1.0)


def test_parallel_adjoint_with_chunk_rows():
    rng = np.random.default_rng(3)
    x, idx = rng.standard_normal(50), rng.integers(0, 50, 2000)
    g = sourcead.grad(parallel_kernels.gather_sum)
    assert "_rows = chunk_zeros(x.shape)" in g.source  # scattered adjoints: a slab per fixed chunk
    assert_same(g.njit(x, idx), g(x, idx))


def test_free_kinds_default_variant_and_njit_for():
    rng = np.random.default_rng(2)
    X, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    g = sourcead.grad(vectorized.softplus_mean, wrt=(0, 1))  # kinds and ndims come from the call
    with pytest.raises(TypingError, match="use g.njit_for"):  # the default variant takes floats
        g.njit(X, w, 0.5)
    assert_same(g.njit_for(X, w, 0.5)(X, w, 0.5), g(X, w, 0.5))
    entry = g.njit_for(X[0], w, 0.5)
    assert_same(entry(X[0], w, 0.5), g(X[0], w, 0.5))
    with pytest.raises(TypingError, match="is a 1-D array in this variant"):
        entry(X, w, 0.5)


def test_clear_errors():
    g = sourcead.grad(rosenbrock)
    with pytest.raises(TypingError, match="cannot differentiate with respect to `x`: it is a int64 array"):
        g.njit(np.arange(3))
    with pytest.raises(TypingError, match="argument `n` is used as an integer"):
        sourcead.grad(quartic).njit(np.ones(2), 1.0, 2.5)
    with pytest.raises(sourcead.SourceADError, match="the tangent of `x` does not have the shape"):
        sourcead.jvp(quartic).njit(np.ones(2), 1.0, 2, np.ones(3))


def test_jit_false_objects_have_compiled_njit():
    g = sourcead.grad(rosenbrock, jit=False)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(g.njit(x), g(x), rtol=1e-14)


def _users_numba() -> dict[str, str]:
    """The environment for a process that runs numba as a user does: at its default LLVM level.
    The suite compiles at level 0 (conftest.py), where a call to another jitted function keeps a
    load of the callee's dispatcher object, a process-local address that level 1 removes as dead
    code; numba does not cache a function holding one (an `.njit` entry, its callers)."""
    return {k: v for k, v in os.environ.items() if k != "NUMBA_OPT"}


def test_entry_module_is_cached_for_the_next_process(tmp_path):
    """A second process loads the entry from numba's disk cache: no compilation."""
    script = textwrap.dedent(
        """
        import sys, numpy as np
        sys.path[:0] = TESTS
        import sourcead, test_njit
        g = sourcead.grad(test_njit.rosenbrock).njit
        print(g(np.array([1.0, 2.0]))[0], sum(g.stats.cache_hits.values()), sum(g.stats.cache_misses.values()))
        """
    ).replace("TESTS", repr([str(ROOT / "tests"), str(ROOT / "tests" / "programs")]))
    env = {**_users_numba(), "SOURCEAD_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    value, hits, misses = second.stdout.split()
    assert value == first.stdout.split()[0]
    assert (int(hits), int(misses)) == (1, 0), second.stdout


def test_a_stale_numba_cache_of_a_caller_is_refused_not_run(tmp_path):
    """numba caches a caller of `g.njit` by the caller's file alone; after the differentiated
    function changes, its cached machine code names the old derivative's module. That import is
    refused with a message saying what to delete, never run against an old gradient."""
    (tmp_path / "model.py").write_text("def f(x):\n    return x[0] * x[0] * 3.0\n")
    (tmp_path / "caller.py").write_text(
        textwrap.dedent(
            """
            import numba, numpy as np, sourcead, model
            g = sourcead.grad(model.f).njit

            @numba.njit(cache=True)
            def caller(x):
                return g(x)[0]

            print(caller(np.array([1.0, 2.0])))
            """
        )
    )
    env = {**_users_numba(), "SOURCEAD_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)  # the caller's numba cache is the one beside it, deleted below
    run = [sys.executable, str(tmp_path / "caller.py")]
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert float(first.stdout) == 6.0
    (tmp_path / "model.py").write_text("def f(x):\n    return x[0] * x[0] * 5.0\n")
    second = subprocess.run(run, env=env, capture_output=True, text=True)
    assert second.returncode != 0 and "SourceADError" in second.stderr, second.stdout + second.stderr
    assert "Delete the caller's numba cache" in second.stderr
    for stale in (tmp_path / "__pycache__").glob("caller.*.nb*"):
        stale.unlink()
    third = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert float(third.stdout) == 10.0


def test_example_adam_in_numba():
    import bridge_functions

    out = bridge_functions.run_example("numba_adam.py")
    assert "max |x_numba - x_python| = 0.0e+00" in out, out


def test_threads_racing_for_njit_get_one_dispatcher():
    from concurrent.futures import ThreadPoolExecutor

    def cubic(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] ** 3 - x[i]
        return s

    g = sourcead.value_and_grad(cubic)
    x = np.linspace(-1.0, 1.0, 7)
    with ThreadPoolExecutor(8) as pool:
        entries = list(pool.map(lambda _: g.njit, range(8)))
        results = list(pool.map(lambda e: e(x), entries))
    assert all(e is entries[0] for e in entries)
    assert all(r[0] == results[0][0] and np.array_equal(r[1], results[0][1]) for r in results)
    assert_same(results[0], g(x))


def test_a_differentiable_function_is_callable_from_numba_through_njit():
    import bridge_functions as bf

    f = bf.decorated.njit

    @numba.njit
    def twice(x, k):
        return 2.0 * f(x, k)

    x = np.array([0.1, 0.2, 0.3])
    assert twice(x, 2.0) == 2.0 * bf.decorated(x, 2.0)
