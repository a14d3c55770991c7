"""sourcead.torch.function: a torch.autograd.Function whose backward is the generated adjoint."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import bridge_functions as bf
import numpy as np
import pytest

import sourcead

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="PyTorch is an extra: pip install 'sourcead[torch]'"
)


def test_import_sourcead_imports_no_framework():
    code = "import sourcead, sys; assert 'torch' not in sys.modules and 'jax' not in sys.modules, sys.modules.keys()"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_framework_names_the_extra():
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['jax'] = None\n"
        "import sourcead\n"
        "for name in ('torch', 'jax'):\n"
        "    try:\n"
        "        getattr(sourcead, name)\n"
        "    except sourcead.SourceADError as e:\n"
        "        print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "pip install 'sourcead[torch]'" in out and "pip install 'sourcead[jax]'" in out, out


@pytest.fixture(scope="module")
def torch():
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is an extra: pip install 'sourcead[torch]'")
    import torch

    return torch


@pytest.fixture(scope="module")
def data(torch):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    return torch.from_numpy(X), torch.from_numpy(y)


@needs_torch
def test_gradcheck_float_result(torch, data):
    import sourcead.torch as st

    X, y = data
    F = st.function(bf.loss, wrt=(0, 3))
    w = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64, requires_grad=True)
    lam = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(F, (w, X, y, lam))


@needs_torch
def test_gradcheck_tuple_of_array_and_float(torch):
    import sourcead.torch as st

    F = st.function(bf.squares, wrt=(0, 1))
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    c = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(F, (x, c))
    y, cc = F(x, c)
    assert y.shape == (3,) and cc.shape == () and y.dtype == torch.float64


@needs_torch
def test_gradients_are_sourcead_s(torch, data):
    import sourcead.torch as st

    X, y = data
    w = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64, requires_grad=True)
    lam = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    out = st.function(bf.loss, wrt=(0, 3))(w, X, y, lam)
    (3.0 * out).backward()
    gw, glam = sourcead.grad(bf.loss, wrt=(0, 3))(w.detach().numpy(), X.numpy(), y.numpy(), 0.7)
    np.testing.assert_array_equal(w.grad.numpy(), 3.0 * gw)
    assert lam.grad.item() == 3.0 * glam
    assert out.item() == bf.loss(w.detach().numpy(), X.numpy(), y.numpy(), 0.7)


@needs_torch
def test_training_loop_with_torch_optim(torch, data):
    import sourcead.torch as st

    X, y = data
    F = st.function(bf.loss, wrt=0)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.05)
    for _ in range(400):
        opt.zero_grad()
        loss = F(w, X, y, 0.5)
        loss.backward()
        opt.step()
    # ridge regression: the minimum solves (X'X + lam I) w = X'y
    Xn, yn = X.numpy(), y.numpy()
    exact = np.linalg.solve(Xn.T @ Xn + 0.5 * np.eye(3), Xn.T @ yn)
    np.testing.assert_allclose(w.detach().numpy(), exact, atol=1e-6)


@needs_torch
def test_tensors_that_need_no_grad_get_no_adjoint_work(torch, data):
    import sourcead.torch as st

    X, y = data
    F = st.function(bf.loss, wrt=(0, 3))
    w = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64, requires_grad=True)
    lam = torch.tensor(0.7, dtype=torch.float64)  # no grad wanted
    F(w, X, y, lam).backward()
    assert set(F._bridge._vjps) == {(0, 3), (0,)}  # a vjp with respect to w alone did the work
    assert "lam_bar" not in F._bridge._vjps[(0,)].source
    assert lam.grad is None and w.grad is not None
    with torch.no_grad():  # no gradient wanted at all: the compiled primal alone
        value = F(w, X, y, lam)
    assert value.item() == bf.loss(w.detach().numpy(), X.numpy(), y.numpy(), 0.7)
    assert set(F._bridge._vjps) == {(0, 3), (0,)}


@needs_torch
def test_ints_and_plain_values_pass_through(torch, data):
    import sourcead.torch as st

    X, y = data
    w = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64, requires_grad=True)
    F = st.function(bf.shard_loss, wrt=0)
    F(w, X.numpy(), y, 5, torch.tensor(25)).backward()  # a NumPy array, an int, a 0-d int tensor
    expected = sourcead.grad(bf.shard_loss)(w.detach().numpy(), X.numpy(), y.numpy(), 5, 25)
    np.testing.assert_array_equal(w.grad.numpy(), expected)


@needs_torch
def test_refusals(torch, data):
    import sourcead.torch as st

    X, y = data
    F = st.function(bf.loss, wrt=0)
    with pytest.raises(sourcead.SourceADError, match="torch.float32 tensor; sourcead differentiates float64 only"):
        F(torch.zeros(3, dtype=torch.float32), X, y, 0.1)
    with pytest.raises(sourcead.SourceADError, match="`X` of loss requires grad, but it is not in wrt"):
        F(torch.zeros(3, dtype=torch.float64), X.clone().requires_grad_(), y, 0.1)
    with pytest.raises(sourcead.SourceADError, match="writes into its argument `out`"):
        st.function(bf.writes)
    with pytest.raises(sourcead.SourceADError, match="takes 4 arguments"):
        F(torch.zeros(3, dtype=torch.float64), X, y)


@needs_torch
def test_results_never_alias_inputs(torch):
    import passthrough

    import sourcead.torch as st

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = st.function(passthrough.ident)(x)
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


@needs_torch
def test_example_trains(torch):
    out = bf.run_example("torch_train.py")
    assert "learned a = 0.900, b = 0.400" in out, out
