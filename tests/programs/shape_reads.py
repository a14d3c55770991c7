"""Arrays the reverse sweep reads only for their shape (tests/test_shape_reads.py): where their
element writes are dead, and the shapes of code where they must stay."""

import numpy as np
from numba import prange


# ---- dead: the forward sweep computes these arrays only for their adjoint's zero ----------------
def csr_rows(A_row, A_col, A_val, x):
    """spmv as NPBench writes it: y's rows only give y_bar's shape."""
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i] : A_row[i + 1]]
        vals = A_val[A_row[i] : A_row[i + 1]]
        y[i] = vals @ x[cols]
    return np.sum(y)


def two_buffers(A0, B0, steps):
    """A linear stencil whose two buffers read each other: neither is read but for its shape."""
    A = A0.copy()
    B = B0.copy()
    for _ in range(steps):
        B[1:-1] = 0.5 * (A[:-2] + A[2:])
        A[1:-1] = 0.25 * (B[:-2] + B[1:-1] + B[2:])
    return np.sum(A) + 2.0 * np.sum(B)


def rows_in_prange(X, w):
    """Each row's value in a prange loop, summed: y's elements only give y_bar's shape."""
    n = X.shape[0]
    y = np.zeros(n)
    for i in prange(n):
        y[i] = w[i] * np.sum(np.sin(X[i]))
    return np.sum(y)


def shaped_in_time_loop(u0, c, steps):
    """A time loop whose scratch array reaches the result only linearly (through `s`): its
    adjoint reads y's shape, the step's record is u."""
    u = u0.copy()
    y = np.empty(u.size)
    s = 0.0
    for _ in range(steps):
        for i in range(u.size):
            y[i] = c * np.sin(u[i])
        s = s + np.sum(y)
        u = np.sin(u) * c
    return s + np.sum(u * u)


# ---- kept: something reads the values --------------------------------------------------------
def squares_read_after(x):
    """y's values are read by the product after the loop (its adjoint reads y)."""
    y = np.empty(x.size)
    for i in range(x.size):
        y[i] = x[i] * x[i]
    return np.sum(y * x)


def read_through_view(x):
    """y's values are read through a view of it, and through a name bound to it."""
    y = np.zeros(x.size)
    for i in range(x.size):
        y[i] = np.sin(x[i])
    v = y[1:]
    z = y
    return np.sum(v * v) + np.sum(z * z * z)


def read_in_loop(x, steps):
    """A scratch array written and read again each step."""
    s = 0.0
    y = np.empty(x.size)
    for _ in range(steps):
        for i in range(x.size):
            y[i] = np.cos(x[i] + s)
        s = s + np.sum(y * y)
    return s


def element_read_in_prange(X, w):
    """A prange loop writes y's elements, and the next loop reads them nonlinearly."""
    n = X.shape[0]
    y = np.empty(n)
    for i in prange(n):
        y[i] = w[i] * np.sum(np.sin(X[i]))
    total = 0.0
    for i in range(n):
        total += y[i] * y[i]
    return total


def returned_array(x):
    """y is the result: its values are returned (vjp)."""
    y = np.empty(x.size)
    for i in range(x.size):
        y[i] = x[i] * x[i]
    return y


def scratch_in_time_loop(u0, c, steps):
    """A time loop with a fresh scratch array per step, its values read by the next line."""
    u = u0.copy()
    for _ in range(steps):
        t = np.empty(u.size)
        for i in range(u.size):
            t[i] = c * np.sin(u[i])
        u = u + 0.1 * t * t
    return np.sum(u * u)


def scratch_feeds_state(u0, c, steps):
    """y's values make the next state (kept), though the sum's adjoint reads only y's shape."""
    u = u0.copy()
    y = np.empty(u.size)
    for _ in range(steps):
        for i in range(u.size):
            y[i] = c * u[i]
        u = np.sin(u) + y
    return np.sum(u)


def shared_adjoint_in_prange(X, w):
    """Every iteration adds into w_bar, and its adjoint reads w's shape from w_bar: the iterations
    add into their chunk's row of w_bar, so w_bar itself is no prange reduction numba would
    refuse to see read."""
    n = X.shape[0]
    y = np.zeros(n)
    for i in prange(n):
        y[i] = np.sum(X[i] * w)
    return np.sum(y * y)


# ---- recorded: shape-only reads record the shape, not the values --------------------------------
def shape_changes_each_step(x0, y, steps):
    """g's adjoint reads g only for its shape, and that shape changes after the first step (x0 of
    one element broadcast against y): the tape holds g's shapes, not its values."""
    x = x0.copy()
    for _ in range(steps):
        g = np.sin(x)
        x = x - 0.1 * g + y * x
    return np.sum(x * x)
