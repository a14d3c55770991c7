"""Programs that call a prepared value_and_grad, vjp or hvp inside a differentiated function (issue 42)."""

import numpy as np
from numba import prange

import sourcead as ad


def potential(x, q):
    return q * np.sum(x * x * x * x) / 4.0 + q * q * np.sum(np.sin(x))


def field(x, q):
    """An array result: what a vjp pulls a cotangent back through."""
    return q * np.sin(x) * x + x * x


def make(jit):
    """The prepared inner derivatives, with numba or without."""
    return {
        "vg": ad.value_and_grad(potential, wrt=0, jit=jit),
        "vf": ad.vjp(field, wrt=0, jit=jit),
        "h": ad.hvp(potential, wrt=0, jit=jit),
    }


vg = ad.value_and_grad(potential, wrt=0)
vf = ad.vjp(field, wrt=0)
h = ad.hvp(potential, wrt=0)
vg_py = ad.value_and_grad(potential, wrt=0, jit=False)
vf_py = ad.vjp(field, wrt=0, jit=False)
h_py = ad.hvp(potential, wrt=0, jit=False)


def with_vg(x0, q, dt, steps):
    x = x0.copy()
    e = 0.0
    for _ in range(steps):
        value, g = vg(x, q)
        x = x - dt * g
        e = e + value
    return np.sum(x * x) + e


def with_vf(x0, q, dt, steps):
    x = x0.copy()
    for _ in range(steps):
        y, g = vf(x, q, cotangent=x)
        x = x - dt * g + 0.1 * dt * y
    return np.sum(x * x)


def with_h(x0, q, dt, steps):
    """Newton-like steps: the Hessian of the potential along the current velocity."""
    x = x0.copy()
    v = x0 * 0.5
    for _ in range(steps):
        v = v - dt * h(x, q, tangents=v)
        x = x + dt * v
    return np.sum(x * x)


def with_vg_py(x0, q, dt, steps):
    x = x0.copy()
    e = 0.0
    for _ in range(steps):
        value, g = vg_py(x, q)
        x = x - dt * g
        e = e + value
    return np.sum(x * x) + e


def with_vf_py(x0, q, dt, steps):
    x = x0.copy()
    for _ in range(steps):
        y, g = vf_py(x, q, cotangent=x)
        x = x - dt * g + 0.1 * dt * y
    return np.sum(x * x)


def with_h_py(x0, q, dt, steps):
    x = x0.copy()
    v = x0 * 0.5
    for _ in range(steps):
        v = v - dt * h_py(x, q, tangents=v)
        x = x + dt * v
    return np.sum(x * x)


def rows_h(X, q):
    """Each row its own inner hvp, in parallel."""
    n = X.shape[0]
    e = np.zeros(n)
    for i in prange(n):
        hv = h(X[i], q, tangents=X[i])
        e[i] = np.sum(hv * hv)
    return np.sum(e)


def rows_vf(X, q):
    n = X.shape[0]
    e = np.zeros(n)
    for i in prange(n):
        y, g = vf(X[i], q, cotangent=X[i])
        e[i] = np.sum(g * g) + np.sum(y)
    return np.sum(e)


def rows_vf_njit(X, q):
    """The same through `.njit` (whose default variant, called from Python, takes x as a float:
    only the differentiated code calls it, with the kinds of its call)."""
    n = X.shape[0]
    e = np.zeros(n)
    for i in prange(n):
        y, g = vf.njit(X[i], q, cotangent=X[i])
        e[i] = np.sum(g * g) + np.sum(y)
    return np.sum(e)


def rows_vg(X, q):
    n = X.shape[0]
    e = np.zeros(n)
    for i in prange(n):
        value, g = vg(X[i], q)
        e[i] = np.sum(g * g) + value
    return np.sum(e)


# refused, each at the user's line (tests/test_nested_kinds.py)
cube_vf = ad.vjp(potential, wrt=0, jit=False)
jac = ad.jacobian(field, wrt=0, jit=False)
vg_pair = ad.value_and_grad(potential, wrt=(0, 1), jit=False)


def bad_keyword(x):
    value, g = cube_vf(x, 0.5, cotangent=1.0, scale=2.0)
    return np.sum(g)


def missing_cotangent(x):
    value, g = cube_vf(x, 0.5)
    return np.sum(g)


def python_inner(x):
    value, g = vg_py(x, 0.5)
    return np.sum(g * g)


def calls_a_jacobian(x):
    return np.sum(jac(x, 0.5))


def calls_a_pair(x):
    value, grads = vg_pair(x, 0.5)
    return value


def selfish(x, q):
    value, g = own(x, q)
    return value + np.sum(g)


own = vg_py  # the test rebinds it to selfish's own value_and_grad


def pair(x, q):
    return x * q, np.sum(x)


vf_pair = ad.vjp(pair, wrt=0, jit=False)


def calls_a_tuple_vjp(x):
    value, g = vf_pair(x, 0.5, cotangent=(x, 1.0))
    return np.sum(g)


def calls_a_tuple_vjp_by_name(x):
    c = (x, 1.0)
    value, g = vf_pair(x, 0.5, cotangent=c)
    return np.sum(g)
