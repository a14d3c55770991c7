"""A loop kernel inside a PyTorch model, trained with torch.optim: `sourcead.torch.function`.

The model maps features to a signal with a linear layer (PyTorch), then runs it through a
learned recurrence, y[t] = a*y[t-1] + b*tanh(u[t]) (a sourcead kernel: one loop, 4 000 steps),
and scores it against a target. Gradients flow through the kernel's generated adjoint into
both the recurrence's parameters and the linear layer. Written in PyTorch alone, the recurrence
is 4 000 small tensor operations per forward pass and as many in backward.
Run: ``python examples/torch_train.py`` (a few seconds).
"""

import math
import time

import numpy as np
import torch

import sourcead.torch


def filter_loss(u, theta, target):
    """Mean squared error of the recurrence y[t] = a*y[t-1] + b*tanh(u[t]) against the target."""
    a = theta[0]
    b = theta[1]
    y = 0.0
    s = 0.0
    for t in range(u.shape[0]):
        y = a * y + b * math.tanh(u[t])
        s += (y - target[t]) ** 2
    return s / u.shape[0]


def filter_loss_torch(u, theta, target):
    """The same loss in PyTorch operations, for comparison."""
    y = torch.zeros((), dtype=u.dtype)
    s = torch.zeros((), dtype=u.dtype)
    for t in range(u.shape[0]):
        y = theta[0] * y + theta[1] * torch.tanh(u[t])
        s = s + (y - target[t]) ** 2
    return s / u.shape[0]


kernel = sourcead.torch.function(filter_loss, wrt=(0, 1))  # differentiable in u and theta


class Model(torch.nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = torch.nn.Linear(n_features, 1, dtype=torch.float64)
        self.theta = torch.nn.Parameter(torch.tensor([0.5, 0.5], dtype=torch.float64))

    def forward(self, features, target, loss=kernel):
        u = self.linear(features).squeeze(-1)
        return loss(u, self.theta, target)


def make_data(n_steps=4000, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((n_steps, n_features))
    u = features @ np.array([0.8, -0.5, 0.3, 0.1]) + 0.2
    target = np.zeros(n_steps)
    y = 0.0
    for t in range(n_steps):
        y = 0.9 * y + 0.4 * math.tanh(u[t])
        target[t] = y
    return torch.from_numpy(features), torch.from_numpy(target)


def main():
    torch.manual_seed(0)
    features, target = make_data()
    model = Model(features.shape[1])
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    steps = 300
    for step in range(steps):
        if step == 1:  # the first step compiled the kernel (or loaded it from the disk cache)
            start = time.perf_counter()
        opt.zero_grad()
        loss = model(features, target)
        loss.backward()
        opt.step()
        if step in (0, steps - 1):
            print(f"step {step:3d}: loss {loss.item():.3e}")
    per_step = (time.perf_counter() - start) / (steps - 1)
    a, b = model.theta.detach().numpy()
    print(f"learned a = {a:.3f}, b = {b:.3f} (data made with 0.9, 0.4)")
    # the same training step with the recurrence in PyTorch operations
    start = time.perf_counter()
    opt.zero_grad()
    model(features, target, loss=filter_loss_torch).backward()
    per_step_torch = time.perf_counter() - start
    print(f"training step: {per_step * 1e3:.2f} ms with the sourcead kernel,")
    ratio = per_step_torch / per_step
    print(f"               {per_step_torch * 1e3:.0f} ms with the recurrence in PyTorch ({ratio:.0f}x)")
    assert loss.item() < 1e-3


if __name__ == "__main__":
    main()
