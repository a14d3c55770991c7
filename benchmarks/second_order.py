"""Second order and Jacobians (issue 14): ``python -m benchmarks.second_order``.

* hvp / grad: the time of a Hessian-vector product in units of a gradient, on bench workloads
  (goal: at most 3);
* a 16-column Jacobian: one batched call (``jacobian(mode="forward")``: the 16 unit tangents in
  one vector-mode sweep) against 16 separate ``jvp`` calls from Python (goal: 4x faster);
* a dense 100 x 100 Hessian (``hessian``: 100 hvps in one batched call) in units of a gradient
  (goal: at most 40 gradients).

Medians of timed batches after a warm-up call, in one process.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np

import sourcead
from benchmarks.workloads import BY_NAME

HVP_WORKLOADS = ("heat", "logsumexp", "logistic_map", "dense_tanh", "newton_sqrt", "heat_swap")


def median_seconds(fn, *args, repeats=7, batch_seconds=0.05, **kwargs) -> float:
    fn(*args, **kwargs)
    start = time.perf_counter()
    fn(*args, **kwargs)
    number = max(1, int(batch_seconds / max(time.perf_counter() - start, 1e-7)))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args, **kwargs)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def reaction(u, k):
    """A reaction-diffusion map R^n -> R^n: 40 explicit steps on a ring."""
    n = u.shape[0]
    v = u.copy()
    w = np.zeros(n)
    for _step in range(40):
        for i in range(n):
            left = v[(i - 1) % n]
            right = v[(i + 1) % n]
            w[i] = v[i] + 0.1 * (left - 2.0 * v[i] + right) + 0.01 * k * math.sin(v[i])
        for i in range(n):
            v[i] = w[i]
    return v


def ridge_tanh(x, A):
    """A dense non-quadratic objective of 100 variables: sum_i tanh(A x)_i^2 + |x|^4 / 4."""
    m, d = A.shape
    total = 0.0
    for i in range(m):
        z = 0.0
        for j in range(d):
            z += A[i, j] * x[j]
        t = math.tanh(z)
        total += t * t
    q = 0.0
    for j in range(d):
        q += x[j] * x[j]
    return total + 0.25 * q * q


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 0.1 else f"{seconds * 1e3:.1f} ms"


def hvp_rows() -> list[str]:
    lines = ["| workload | size | grad | hvp | hvp / grad |", "|---|---|--:|--:|--:|"]
    for name in HVP_WORKLOADS:
        w = BY_NAME[name]
        args = w.make_args()
        g, h = sourcead.grad(w.func, wrt=w.wrt), sourcead.hvp(w.func, wrt=w.wrt)
        pos = [list(w.func.__code__.co_varnames).index(n) for n in w.wrt]
        rng = np.random.default_rng(0)
        v = tuple(rng.standard_normal(np.shape(args[p])) if np.ndim(args[p]) else 0.5 for p in pos)
        t_g = median_seconds(g, *args)
        t_h = median_seconds(h, *args, tangents=v)
        lines.append(f"| {name} | {w.size} | {_ms(t_g)} | {_ms(t_h)} | {t_h / t_g:.2f} |")
    return lines


def jacobian_rows() -> list[str]:
    lines = [
        "| map | 16 separate jvp calls | one batched jacobian | speed-up |",
        "|---|--:|--:|--:|",
    ]
    rng = np.random.default_rng(1)
    for n in (16,):
        u, k = rng.uniform(-1, 1, n), 0.7
        jf, jac = sourcead.jvp(reaction, wrt="u"), sourcead.jacobian(reaction, wrt="u", mode="forward")
        eye = np.eye(n)

        def separate(u, k, jf=jf, eye=eye):
            return np.stack([jf(u, k, tangents=eye[j])[1] for j in range(eye.shape[0])], axis=-1)

        np.testing.assert_allclose(separate(u, k), jac(u, k), rtol=1e-12, atol=1e-14)
        t_sep, t_jac = median_seconds(separate, u, k), median_seconds(jac, u, k)
        lines.append(f"| reaction, {n} -> {n}, 40 steps | {_ms(t_sep)} | {_ms(t_jac)} | {t_sep / t_jac:.2f}x |")
    return lines


def hessian_rows() -> list[str]:
    rng = np.random.default_rng(2)
    x, A = 0.1 * rng.standard_normal(100), rng.standard_normal((200, 100)) / 10.0
    g, H = sourcead.grad(ridge_tanh), sourcead.hessian(ridge_tanh)
    t_g, t_H = median_seconds(g, x, A), median_seconds(H, x, A)
    dense = H(x, A)
    fd = np.stack([(g(x + 1e-6 * e, A) - g(x - 1e-6 * e, A)) / 2e-6 for e in np.eye(100)], axis=1)
    error = float(np.max(np.abs(dense - fd)) / np.max(np.abs(dense)))
    return [
        "| objective | gradient | dense Hessian (100 hvps, batched) | in gradients | vs FD of grad |",
        "|---|--:|--:|--:|--:|",
        f"| ridge_tanh, 100 variables, 200 x 100 | {_ms(t_g)} | {_ms(t_H)} | {t_H / t_g:.1f} | {error:.1e} |",
    ]


def second_order_report() -> str:
    lines = ["## Second order and Jacobians", "", "Hessian-vector products (goal: hvp / grad at most 3):", ""]
    lines += hvp_rows()
    lines += ["", "A 16-column Jacobian (goal: batched at least 4x faster than 16 jvp calls):", ""]
    lines += jacobian_rows()
    lines += ["", "A dense 100 x 100 Hessian (goal: at most 40 gradients):", ""]
    lines += hessian_rows()
    lines += [
        "",
        "The Jacobian is one vector-mode sweep carrying the 16 tangents; the Hessian is 100 hvps looped "
        "over in compiled code (one sweep each: second order has no vector mode yet).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(second_order_report())
