"""Whole-array NumPy code differentiated by sourcead: gradient / primal for an MLP layer and a
logsumexp, written vectorized (the numba primal is the same function compiled by numba).

    python -m benchmarks.vectorized
"""

from __future__ import annotations

import time

import numba
import numpy as np

import sourcead

REPEATS = 7


def mlp_layer(W, x, b, v):
    h = np.tanh(W @ x + b)
    return np.dot(v, h)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


# The dense workloads of the peer suite (`benchmarks/pairs.py`), written vectorized for sourcead too:
# matrix products go to BLAS through numba's np.dot.


def logistic_np(w, X, y, lam):
    z = X @ w
    return np.mean(np.log1p(np.exp(z)) - y * z) + 0.5 * lam * np.sum(w * w)


def lsq_np(x, A, b):
    r = A @ x - b
    return 0.5 * np.sum(r * r)


def mlp_np(W1, b1, w2, b2, X, y):
    out = np.tanh(X @ W1 + b1) @ w2 + b2
    return np.mean((out - y) ** 2)


def _median(func, args, inner: int) -> float:
    func(*args)
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(inner):
            func(*args)
        samples.append((time.perf_counter() - start) / inner)
    return float(np.median(samples))


def vectorized_report() -> str:
    rng = np.random.default_rng(0)
    cases = [
        ("mlp_layer", mlp_layer, (rng.standard_normal((512, 256)), rng.standard_normal(256),
                                  rng.standard_normal(512), rng.standard_normal(512)), ("W", "x", "b"), "512 x 256"),
        ("logsumexp", logsumexp, (rng.standard_normal(100_000),), ("x",), "n = 100000"),
    ]  # fmt: skip
    from benchmarks import pairs

    cases += [
        ("logistic (pairs, vectorized)", logistic_np, pairs._logistic_args(), ("w",), "300000 x 50"),
        ("least_squares (pairs, vectorized)", lsq_np, pairs._lsq_args(), ("x",), "A: 12000 x 2000"),
        ("mlp (pairs, vectorized)", mlp_np, pairs._mlp_args(), ("W1", "b1", "w2", "b2"), "8192 x 32 -> 64 -> 1"),
    ]
    lines = [
        "## Vectorized NumPy",
        "",
        f"Whole-array code (matrix products, elementwise functions, reductions); medians of {REPEATS} batches.",
        "",
        "| workload | size | wrt | numba primal | sourcead gradient | gradient / primal |",
        "|---|---|---|--:|--:|--:|",
    ]
    for name, func, args, wrt, size in cases:
        primal = numba.njit(func)
        gradient = sourcead.grad(func, wrt=wrt)
        inner = 20 if args[0].size < 10_000 and len(args) < 3 else 2
        p, g = _median(primal, args, inner), _median(gradient, args, inner)
        lines.append(f"| {name} | {size} | {', '.join(wrt)} | {p * 1e6:.1f} µs | {g * 1e6:.1f} µs | {g / p:.2f} |")
    lines += [
        "",
        "The `pairs` rows are the dense workloads of the comparison below, written with `@` and NumPy",
        "reductions instead of loops (same sizes and inputs): compare their gradient times with the",
        "loop versions' and with JAX's there.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(vectorized_report())
