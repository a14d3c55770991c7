"""sourcead.jax.function: pure_callback with custom_vjp (reverse) or custom_jvp (forward), under
jax.jit, jax.grad and jax.vmap, checked by jax.test_util.check_grads and against sourcead.grad."""

from __future__ import annotations

import importlib.util
import re

import bridge_functions as bf
import numpy as np
import pytest

import sourcead

if importlib.util.find_spec("jax") is None:
    pytest.skip("JAX is an extra: pip install 'sourcead[jax]'", allow_module_level=True)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import sourcead.jax as sj  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((25, 3)), rng.standard_normal(25)


def test_value_and_gradients_are_sourcead_s(data):
    w, X, y = data
    F = sj.function(bf.loss, wrt=(0, 3))
    assert float(F(w, X, y, 0.3)) == bf.loss(w, X, y, 0.3)
    gw, glam = jax.grad(F, argnums=(0, 3))(jnp.asarray(w), X, y, 0.3)
    ew, elam = sourcead.grad(bf.loss, wrt=(0, 3))(w, X, y, 0.3)
    np.testing.assert_array_equal(np.asarray(gw), ew)
    assert float(glam) == elam


def test_under_jit_grad_and_vmap(data):
    w, X, y = data
    F = sj.function(bf.loss, wrt=0)
    g = sourcead.grad(bf.loss)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(F))(w, X, y, 0.3)), g(w, X, y, 0.3))
    W = np.random.default_rng(1).standard_normal((4, 3))
    batched = jax.jit(jax.vmap(jax.grad(F), in_axes=(0, None, None, None)))(W, X, y, 0.3)
    np.testing.assert_array_equal(np.asarray(batched), np.stack([g(wk, X, y, 0.3) for wk in W]))
    values = jax.vmap(F, in_axes=(0, None, None, None))(W, X, y, 0.3)
    np.testing.assert_allclose(np.asarray(values), [bf.loss(wk, X, y, 0.3) for wk in W], rtol=1e-14)


def test_check_grads_reverse(data):
    w, X, y = data
    F = sj.function(bf.loss, wrt=(0, 3))
    check_grads(lambda w, lam: F(w, X, y, lam), (w, 0.3), order=1, modes=["rev"])
    G = sj.function(bf.squares, wrt=(0, 1), out_shape=lambda x, c: (x.shape, ()))
    check_grads(G, (np.array([0.4, -1.0, 2.0]), 1.5), order=1, modes=["rev"])


def test_check_grads_forward_and_jacfwd():
    x = np.array([0.4, -1.0, 2.0])
    G = sj.function(bf.squares, wrt=(0, 1), mode="forward", out_shape=lambda x, c: (x.shape, ()))
    check_grads(G, (x, 1.5), order=1, modes=["fwd"])
    jac = jax.jacfwd(G)(x, 1.5)[0]
    np.testing.assert_allclose(np.asarray(jac), np.diag(2.0 * 1.5 * x), rtol=1e-14)
    value, tangent = jax.jit(lambda t: jax.jvp(G, (x, 1.5), (t, 0.0)))(np.ones(3))
    np.testing.assert_allclose(np.asarray(tangent[0]), 2.0 * 1.5 * x, rtol=1e-14)


def test_only_the_differentiated_subset_gets_adjoint_work(data):
    w, X, y = data
    F = sj.function(bf.loss, wrt=(0, 3))
    jax.grad(F, argnums=0)(w, X, y, 0.3)
    assert (0,) in F._bridge._vjps and "lam_bar" not in F._bridge._vjps[(0,)].source


def test_ints_pass_through_also_under_jit(data):
    w, X, y = data
    F = sj.function(bf.shard_loss, wrt=0)
    got = jax.jit(jax.grad(F))(w, X, y, 5, 20)
    np.testing.assert_array_equal(np.asarray(got), sourcead.grad(bf.shard_loss)(w, X, y, 5, 20))


def test_refusals(data):
    w, X, y = data
    F = sj.function(bf.loss, wrt=0)
    with pytest.raises(sourcead.SourceADError, match="`X`, which is not in wrt"):
        jax.grad(F, argnums=1)(w, X, y, 0.3)
    with pytest.raises(sourcead.SourceADError, match="float32; sourcead differentiates float64 only"):
        F(w.astype(np.float32), X, y, 0.3)
    with pytest.raises(sourcead.SourceADError, match="needs out_shape="):
        sj.function(bf.squares, wrt=0)
    with pytest.raises(sourcead.SourceADError, match="writes into its argument `out`"):
        sj.function(bf.writes)
    with pytest.raises(sourcead.SourceADError, match="mode must be"):
        sj.function(bf.loss, mode="both")


def test_example_runs():
    out = bf.run_example("jax_grad.py")
    assert "check_grads: passed" in out, out
    period = float(re.search(r"fitted period ([0-9.]+)", out).group(1))
    assert abs(period - 7.3) < 0.01, out
