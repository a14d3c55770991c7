"""The GradBench evals written vectorised in JAX and PyTorch, for the "GradBench evals" section.

``jax_peer(name, args)`` and ``torch_peer(name, args)`` take the tool's decoded arguments of eval
``name`` and give ``(primal, derivative, peer_args)``: callables that return only when their
result exists (JAX: ``block_until_ready``; PyTorch on CPU is synchronous), the derivative a tuple
of arrays in the order of the tool's output; or a string saying why there is no such peer. JAX
and PyTorch are imported inside, so this module imports without them (the ImportError is the
caller's note)."""

from __future__ import annotations

import numpy as np

NOT_WRITTEN = "not written (long to write vectorised)"


def lower_indices(d: int):
    """Row and column of each entry of gmm's l (the strict lower part, column by column)."""
    rows, cols = [], []
    for c in range(d):
        for r in range(c + 1, d):
            rows.append(r)
            cols.append(c)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def jax_peer(name: str, args):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def wait(fn):
        def run(*a):
            return jax.block_until_ready(fn(*a))

        return run

    if name == "hello":
        square = jax.jit(lambda x: x * x)
        return wait(square), wait(jax.jit(lambda x: (jax.grad(lambda y: y * y)(x),))), (jnp.float64(args[0]),)
    if name == "llsq":
        x, n = args
        t = np.linspace(-1.0, 1.0, n)
        powers = jnp.asarray(t[:, None] ** np.arange(x.shape[0])[None, :])
        s = jnp.asarray(np.sign(t))

        def llsq(x, powers, s):
            r = s - powers @ x
            return 0.5 * jnp.sum(r * r)

        grad = jax.grad(llsq)
        return wait(jax.jit(llsq)), wait(jax.jit(lambda *a: (grad(*a),))), (jnp.asarray(x), powers, s)
    if name == "lse":

        def lse(x):
            a = jnp.max(x)
            return a + jnp.log(jnp.sum(jnp.exp(x - a)))

        grad = jax.grad(lse)
        return wait(jax.jit(lse)), wait(jax.jit(lambda x: (grad(x),))), (jnp.asarray(args[0]),)
    if name == "det":
        A, ell = args

        def det(A):
            return jnp.linalg.det(A.reshape(ell, ell))

        grad = jax.grad(det)
        return wait(jax.jit(det)), wait(jax.jit(lambda A: (grad(A),))), (jnp.asarray(A),)
    if name == "ode":
        x, s = args
        h = 2.0 / s

        def f(x, y):
            return jnp.concatenate((x[:1], x[1:] * y[:-1]))

        def solve(x):
            def step(_, y):
                k1 = f(x, y)
                k2 = f(x, y + h * k1 / 2.0)
                k3 = f(x, y + h * k2 / 2.0)
                k4 = f(x, y + h * k3)
                return y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0

            return jax.lax.fori_loop(0, s, step, jnp.zeros_like(x))

        grad = jax.grad(lambda x: solve(x)[-1])
        return wait(jax.jit(solve)), wait(jax.jit(lambda x: (grad(x),))), (jnp.asarray(x),)
    if name == "gmm":
        alpha, mu, q, lower, x, gamma, m, constant = args
        k, d = mu.shape
        rows, cols = lower_indices(d)

        def gmm(alpha, mu, q, lower, x):
            factor = jnp.zeros((k, d, d)).at[:, rows, cols].set(lower)
            factor = factor + jax.vmap(jnp.diag)(jnp.exp(q))
            diff = x[:, None, :] - mu[None, :, :]  # n, k, d
            s = jnp.einsum("krc,nkc->nkr", factor, diff)
            main = alpha[None, :] + jnp.sum(q, axis=1)[None, :] - 0.5 * jnp.sum(s * s, axis=2)
            total = jnp.sum(jax.scipy.special.logsumexp(main, axis=1))
            total -= x.shape[0] * jax.scipy.special.logsumexp(alpha)
            frobenius = jnp.sum(jnp.exp(q) ** 2, axis=1) + jnp.sum(lower * lower, axis=1)
            prior = jnp.sum(0.5 * gamma * gamma * frobenius - m * jnp.sum(q, axis=1))
            return total - prior + constant

        grad = jax.grad(gmm, argnums=(0, 1, 2, 3))
        peer_args = tuple(jnp.asarray(a) for a in (alpha, mu, q, lower, x))
        return wait(jax.jit(gmm)), wait(jax.jit(grad)), peer_args
    if name == "kmeans":

        def cost(points, centroids):
            d2 = jnp.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
            return jnp.sum(jnp.min(d2, axis=1))

        grad = jax.grad(cost, argnums=1)

        def direction(points, centroids):
            g, hv = jax.jvp(lambda c: grad(points, c), (centroids,), (jnp.ones_like(centroids),))
            return (g / hv,)

        return wait(jax.jit(cost)), wait(jax.jit(direction)), tuple(jnp.asarray(a) for a in args)
    if name == "lstm":
        main_params, extra_params, state, sequence = args
        layers = main_params.shape[0] // 2
        b = sequence.shape[1]

        def objective(main_params, extra_params, state, sequence):
            def step(st, pair):
                now, nxt = pair
                x = now * extra_params[0]
                new = []
                for layer in range(layers):
                    w, bias = main_params[2 * layer], main_params[2 * layer + 1]
                    h, cell = st[2 * layer], st[2 * layer + 1]
                    forget = jax.nn.sigmoid(x * w[:b] + bias[:b])
                    ingate = jax.nn.sigmoid(h * w[b : 2 * b] + bias[b : 2 * b])
                    outgate = jax.nn.sigmoid(x * w[2 * b : 3 * b] + bias[2 * b : 3 * b])
                    change = jnp.tanh(h * w[3 * b :] + bias[3 * b :])
                    cell = cell * forget + ingate * change
                    h = outgate * jnp.tanh(cell)
                    new.extend((h, cell))
                    x = h
                ypred = x * extra_params[1] + extra_params[2]
                lse = jnp.log(2.0 + jnp.sum(jnp.exp(ypred)))
                return jnp.stack(new), jnp.sum(nxt * (ypred - lse))

            _, terms = jax.lax.scan(step, state, (sequence[:-1], sequence[1:]))
            return -jnp.sum(terms) / ((sequence.shape[0] - 1) * b)

        grad = jax.grad(objective, argnums=(0, 1))
        return wait(jax.jit(objective)), wait(jax.jit(grad)), tuple(jnp.asarray(a) for a in args)
    return NOT_WRITTEN


def torch_peer(name: str, args):
    import torch

    def derivative(fn, n_wrt):
        def run(*a):
            leaves = [t.detach().requires_grad_(True) if i < n_wrt else t for i, t in enumerate(a)]
            return torch.autograd.grad(fn(*leaves), leaves[:n_wrt])

        return run

    def primal(fn):
        def run(*a):
            with torch.no_grad():
                return fn(*a)

        return run

    if name == "llsq":
        x, n = args
        t = np.linspace(-1.0, 1.0, n)
        powers = torch.from_numpy(t[:, None] ** np.arange(x.shape[0])[None, :])
        s = torch.from_numpy(np.sign(t))

        def llsq(x, powers, s):
            r = s - powers @ x
            return 0.5 * torch.sum(r * r)

        return primal(llsq), derivative(llsq, 1), (torch.from_numpy(x), powers, s)
    if name == "lse":

        def lse(x):
            a = torch.max(x)
            return a + torch.log(torch.sum(torch.exp(x - a)))

        return primal(lse), derivative(lse, 1), (torch.from_numpy(args[0]),)
    if name == "det":
        A, ell = args

        def det(A):
            return torch.linalg.det(A.reshape(ell, ell))

        return primal(det), derivative(det, 1), (torch.from_numpy(A),)
    if name == "kmeans":

        def cost(centroids, points):
            d2 = torch.sum((points[:, None, :] - centroids[None, :, :]) ** 2, dim=2)
            return torch.sum(torch.min(d2, dim=1).values)

        def direction(centroids, points):
            g, hv = torch.func.jvp(
                lambda c: torch.func.grad(cost)(c, points), (centroids,), (torch.ones_like(centroids),)
            )
            return (g / hv,)

        points, centroids = (torch.from_numpy(a) for a in args)
        return primal(cost), direction, (centroids, points)
    if name == "ode":
        x, s = args
        h = 2.0 / s

        def f(x, y):
            return torch.cat((x[:1], x[1:] * y[:-1]))

        def solve(x):
            y = torch.zeros_like(x)
            for _ in range(s):
                k1 = f(x, y)
                k2 = f(x, y + h * k1 / 2.0)
                k3 = f(x, y + h * k2 / 2.0)
                k4 = f(x, y + h * k3)
                y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
            return y

        return primal(solve), derivative(lambda x: solve(x)[-1], 1), (torch.from_numpy(x),)
    if name == "gmm":
        alpha, mu, q, lower, x, gamma, m, constant = args
        k, d = mu.shape
        rows, cols = (torch.from_numpy(index) for index in lower_indices(d))

        def gmm(alpha, mu, q, lower, x):
            factor = torch.zeros((k, d, d), dtype=torch.float64)
            factor[:, rows, cols] = lower
            factor = factor + torch.diag_embed(torch.exp(q))
            diff = x[:, None, :] - mu[None, :, :]
            s = torch.einsum("krc,nkc->nkr", factor, diff)
            main = alpha[None, :] + torch.sum(q, dim=1)[None, :] - 0.5 * torch.sum(s * s, dim=2)
            total = torch.sum(torch.logsumexp(main, dim=1)) - x.shape[0] * torch.logsumexp(alpha, dim=0)
            frobenius = torch.sum(torch.exp(q) ** 2, dim=1) + torch.sum(lower * lower, dim=1)
            prior = torch.sum(0.5 * gamma * gamma * frobenius - m * torch.sum(q, dim=1))
            return total - prior + constant

        peer_args = tuple(torch.from_numpy(a) for a in (alpha, mu, q, lower, x))
        return primal(gmm), derivative(gmm, 4), peer_args
    if name == "lstm":
        main_params, extra_params, state, sequence = args
        layers = main_params.shape[0] // 2
        b = sequence.shape[1]

        def objective(main_params, extra_params, state, sequence):
            st = list(state)
            total = 0.0
            for t in range(sequence.shape[0] - 1):
                x = sequence[t] * extra_params[0]
                for layer in range(layers):
                    w, bias = main_params[2 * layer], main_params[2 * layer + 1]
                    h, cell = st[2 * layer], st[2 * layer + 1]
                    forget = torch.sigmoid(x * w[:b] + bias[:b])
                    ingate = torch.sigmoid(h * w[b : 2 * b] + bias[b : 2 * b])
                    outgate = torch.sigmoid(x * w[2 * b : 3 * b] + bias[2 * b : 3 * b])
                    change = torch.tanh(h * w[3 * b :] + bias[3 * b :])
                    cell = cell * forget + ingate * change
                    h = outgate * torch.tanh(cell)
                    st[2 * layer], st[2 * layer + 1] = h, cell
                    x = h
                ypred = x * extra_params[1] + extra_params[2]
                lse = torch.log(2.0 + torch.sum(torch.exp(ypred)))
                total = total + torch.sum(sequence[t + 1] * (ypred - lse))
            return -total / ((sequence.shape[0] - 1) * b)

        return primal(objective), derivative(objective, 2), tuple(torch.from_numpy(a) for a in args)
    if name == "hello":
        return "not written (a scalar)"
    return NOT_WRITTEN
