"""An Adam optimiser written in numba around a sourcead gradient: `g.njit` is called from the
user's own `@numba.njit` loop, with no Python between steps.

The same loop in Python (the gradient `g(x)` plus NumPy updates) pays the interpreter and the
wrapper on every step; for a cheap gradient that is most of the time. Both loops run the same
generated gradient, so they arrive at the same point.
Run: ``python examples/numba_adam.py`` (a few seconds, most of it compiling once).
"""

import math
import time

import numba
import numpy as np

import sourcead


def rosenbrock(x):
    """The extended Rosenbrock function: a curved valley, minimum 0 at x = (1, ..., 1)."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


grad = sourcead.grad(rosenbrock)
grad_njit = grad.njit  # a numba dispatcher: a global, so numba code below can call it


@numba.njit  # not cache=True: numba would not notice when the gradient it calls changes
def adam_numba(x0, steps, lr, b1, b2, eps):
    x = x0.copy()
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t in range(1, steps + 1):
        g = grad_njit(x)  # sourcead's gradient, compiled into this loop
        for i in range(x.shape[0]):
            m[i] = b1 * m[i] + (1.0 - b1) * g[i]
            v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i]
            m_hat = m[i] / (1.0 - b1 ** float(t))  # float ** float: libm pow, as in Python
            v_hat = v[i] / (1.0 - b2 ** float(t))
            x[i] -= lr * m_hat / (math.sqrt(v_hat) + eps)
    return x


def adam_python(x0, steps, lr, b1, b2, eps):
    x = x0.copy()
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t in range(1, steps + 1):
        g = grad(x)
        m = b1 * m + (1.0 - b1) * g
        v = b2 * v + (1.0 - b2) * g * g
        m_hat = m / (1.0 - b1**t)
        v_hat = v / (1.0 - b2**t)
        x = x - lr * m_hat / (np.sqrt(v_hat) + eps)
    return x


def best_of(fn, *args, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return result, min(times)


def main():
    x0 = np.full(20, -1.0)
    settings = (20_000, 0.01, 0.9, 0.999, 1e-8)
    adam_numba(x0, 1, *settings[1:])  # compile once
    fast, t_numba = best_of(adam_numba, x0, *settings)
    slow, t_python = best_of(adam_python, x0, *settings)
    steps = settings[0]
    print(f"Adam, {steps} steps on the {x0.size}-D Rosenbrock function")
    print(f"  numba loop around g.njit: {t_numba * 1e3:8.1f} ms ({t_numba / steps * 1e6:.2f} us/step)")
    print(f"  Python loop around g:     {t_python * 1e3:8.1f} ms ({t_python / steps * 1e6:.2f} us/step)")
    print(f"  speed-up: {t_python / t_numba:.1f}x")
    print(f"  f(x) = {rosenbrock(fast):.3e}; max |x_numba - x_python| = {np.max(np.abs(fast - slow)):.1e}")
    assert np.allclose(fast, slow, rtol=1e-9, atol=1e-12)


if __name__ == "__main__":
    main()
