"""How generated modules are handed to numba (`build/jit.py`): whole-array statements lowered
with branch-free broadcast indices, for their own compile only, and `parallel=` only where the
module has prange loops."""

from __future__ import annotations

import numba
import numpy as np
from numba.core import event
from numba.np import arrayobj, npyimpl
from numeric import assert_close

import sourcead
from sourcead.build import jit


def smooth(u, kappa):
    v = u.copy()
    v[1:-1] = u[1:-1] + kappa * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(v * v)


def rows(X, w):
    s = 0.0
    for i in numba.prange(X.shape[0]):
        s += np.sum(X[i] * w) ** 2
    return s


def spread(X, r, c):
    """Whole-array statements whose operands broadcast: r along rows, c along columns."""
    Y = X * r + c * X
    return np.sum(Y * (X - r) + c)


class _Lowering(event.Listener):
    """Which numba index lowering was in force when each compile started."""

    def __init__(self):
        self.seen = []
        self.errors = []

    def on_start(self, ev):
        self.seen.append((ev.data["dispatcher"].py_func.__name__, npyimpl._ArrayIndexingHelper.update_indices))
        self.errors.append((ev.data["dispatcher"].py_func.__name__, arrayobj.raise_with_shape_context))

    def on_end(self, ev):
        pass


def _central(f, args, k, h=1e-6):
    """Central differences of f with respect to the array args[k], element by element."""
    x = args[k]
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k][i] += h
        minus[k][i] -= h
        out[i] = (f(*plus) - f(*minus)) / (2 * h)
    return out


def test_generated_code_compiles_with_branch_free_broadcast_indices_and_only_it(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(tmp_path))  # a cold compile, not numba's disk cache
    numbas = npyimpl._ArrayIndexingHelper.update_indices
    listener = _Lowering()
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((4, 5)), rng.standard_normal((1, 5)), rng.standard_normal((4, 1)))
    g = sourcead.grad(spread, wrt=(0, 1, 2))
    with event.install_listener("numba:compile", listener):
        grads = g(*args)
    assert npyimpl._ArrayIndexingHelper.update_indices is numbas  # the user's functions: numba's own
    assert ("spread_grad", jit._branch_free_indices) in listener.seen
    for k in range(3):  # broadcast operands (length-1 axes) are right under it: central differences
        assert_close(grads[k], _central(spread, args, k), rtol=1e-6, atol=1e-8)
    assert_close(sourcead.grad(spread, wrt=(0, 1, 2), jit=False)(*args), grads, rtol=1e-12, atol=1e-12)


def test_parallel_only_where_the_module_has_prange():
    serial = sourcead.grad(smooth, wrt=(0, 1))._default.call
    assert serial.targetoptions.get("parallel") in (None, False)
    threaded = sourcead.grad(rows, wrt=(0, 1))._default.call
    options = threaded.targetoptions.get("parallel")
    assert options not in (None, False)


def scatter(v, starts):
    """A slice assigned from an array in the adjoint (`v_bar[a:b] += ...`), not in the primal."""
    y = np.zeros(starts.shape[0] - 1)
    for i in range(starts.shape[0] - 1):
        y[i] = np.sum(v[starts[i] : starts[i + 1]] ** 2)
    return np.sum(y * y)


def test_generated_code_raises_numbas_plain_slice_shape_error_and_only_it(monkeypatch, tmp_path):
    """numba's shape message for a slice assignment (an f-string of both shapes, about 2 s to
    compile) is swapped for its generic target's plain one during a generated module's compile
    only; a user's function compiled next gets numba's own; the derivative is right."""
    monkeypatch.setenv("SOURCEAD_CACHE_DIR", str(tmp_path))
    numbas = arrayobj.raise_with_shape_context
    listener = _Lowering()
    rng = np.random.default_rng(11)
    v, starts = rng.standard_normal(7), np.array([0, 2, 5, 7])

    def user(a, b):
        a[1:3] = b
        return a

    with event.install_listener("numba:compile", listener):
        (grad,) = sourcead.grad(scatter, wrt=(0,))(v, starts)
        numba.njit(user)(np.zeros(4), np.ones(2))
    assert arrayobj.raise_with_shape_context is numbas
    assert ("scatter_grad", jit._slice_shape_error) in listener.errors
    assert ("user", numbas) in listener.errors
    fd = np.array([(scatter(v + 1e-6 * e, starts) - scatter(v - 1e-6 * e, starts)) / 2e-6 for e in np.eye(7)])
    assert_close(grad, fd, rtol=1e-6, atol=1e-8)
    assert_close(sourcead.grad(scatter, wrt=(0,), jit=False)(v, starts), (grad,), rtol=1e-12, atol=1e-12)
