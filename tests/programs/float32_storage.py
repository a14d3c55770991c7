"""Programs that store into float32 arrays (`dtype=np.float32`), as NPBench's conv2d does.

tests/test_float32.py runs each as written and as its float64 twin: the same module with `np`
swapped for a namespace whose `float32` is `float64` (`twin_numpy`).
"""

import numpy as np
from numba import prange


def straight(x, w):
    a = np.empty(x.shape, dtype=np.float32)
    a[:] = np.sin(x) * w
    b = np.zeros_like(x, dtype=np.float32)
    b[1:] = a[1:] * a[:-1]
    return np.sum(b * x) + np.sum(a) * 0.1


def in_loops(x):
    n = x.shape[0]
    acc = np.zeros(n, dtype=np.float32)
    for i in range(n):
        acc[i] = x[i] * x[i]
        if i > 0:
            acc[i] += 0.5 * acc[i - 1]
    out = np.full(n, 2.0, dtype=np.float32)
    for i in range(1, n):
        out[i] = out[i - 1] * 0.3 + np.cos(acc[i])
    return np.sum(out * x)


def parallel(x, w):
    n = x.shape[0]
    out = np.empty(n, dtype=np.float32)
    for i in prange(n):
        out[i] = np.tanh(x[i] * w[i]) + x[i]
    return np.sum(out * out)


def smooth32(u):
    v = np.empty_like(u, dtype=np.float32)
    v[0] = u[0]
    v[-1] = u[-1]
    v[1:-1] = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
    return v


def returns_float32(u, c):
    v = smooth32(u)
    w = smooth32(v * c)
    return np.sum(w * w) + np.sum(np.exp(v))


def dtype_of_storage(x):
    a = np.ones(x.shape[0], dtype=np.float32)
    a[:] = x * 3.0
    b = np.empty(x.shape[0], dtype=a.dtype)
    b[:] = a * a
    c = np.full_like(a, np.sum(x * x))  # float32 too: like `a`
    return np.sum(b) + np.sum(c * x)


def mixed_scalars(x):
    """`a * 0.1` is float32 in NumPy (a Python float does not promote) and float64 under numba."""
    a = np.empty(x.shape[0], dtype=np.float32)
    a[:] = x
    s = a * 0.1
    return np.sum(s * x) + a[0] * x[1]


def conv2d(input, weights):
    K = weights.shape[0]
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_in = input.shape[3]
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            inp = input[:, i : i + K, j : j + K, :].copy()
            output[:, i, j, :] = np.sum(
                np.sum(
                    np.sum(np.reshape(inp, (N, K, K, C_in, 1)) * np.reshape(weights, (1, K, K, C_in, C_out)), axis=1),
                    axis=1,
                ),
                axis=1,
            )
    return output


def conv_bias_tanh(input, weights, bias):
    y = np.tanh(conv2d(input, weights) + bias)
    return np.sum(y * y)


# refused: each `# refused` line is where the error points
def half(x):
    a = np.zeros(x.shape[0], dtype=np.float16)  # refused
    return np.sum(a * x)


def complex_storage(x):
    a = np.zeros_like(x, dtype=np.complex128)  # refused
    return np.sum(a * x)


def int32_storage(x):
    a = np.empty(x.shape[0], dtype=np.int32)  # refused
    return np.sum(a * x)


def half_by_name(x):
    a = np.full(x.shape[0], 1.0, dtype="float16")  # refused
    return np.sum(a * x)


def astype32(x):
    return np.sum(x.astype(np.float32))  # refused


def scalar32(x):
    return np.float32(x[0]) * x[1]  # refused


# a variable bound again at the top level with another number of dimensions (NPBench's lenet)
def rebound_ndim(x, w):
    y = np.tanh(x * 2.0)
    y = np.reshape(y, (x.shape[0] * x.shape[1],))
    y = np.sum(y * w)
    return y * y


def rebound_in_loop(x):
    y = np.sin(x)
    for _ in range(2):
        y = np.sum(y)  # refused
    return y
