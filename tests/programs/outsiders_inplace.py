"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numba
import numpy as np

# --- an augmented assignment to a whole array updated it by rebinding the name -----------------
# `C += B` became an accumulation into a new C: the caller's C kept its old value (a wrong
# derivative of C's final state, dC = 0 below) and a helper's `C *= 1.2` never reached the caller
# (a wrong value). NPBench's gemver, mvt, trmm and symm are written this way.


def add_inplace(C, B):
    # grad wrt C was 0 (expected 1)
    C += B
    return np.sum(C * C)


def _scale_then_add(C, B):
    C *= 1.2
    C += B


def through_helper(C, B):
    # the value was sum(C) of the caller's unchanged C; dC = 1 (expected 1.2), dB = 0 (expected 1)
    _scale_then_add(C, B)
    return np.sum(C * B)


def _twice(C, B):
    _scale_then_add(C, B)
    C -= 0.5 * B
    _scale_then_add(C, C)  # the same array for both parameters: `C += C` doubles it


def two_helper_levels(C, B):
    _twice(C, B)
    return np.sum(np.sin(C))


def every_operator(x, y, a):
    # scalar and array right-hand sides, each operator on the whole argument
    x += y
    x -= 0.5 * a
    x *= y
    x /= 1.0 + y * y
    x **= 2.0
    x += a
    x *= a
    x /= 1.5
    x **= 1.5
    return np.sum(x)


def _grow(C, B):
    C += C * B


def reads_its_target(C, B):
    # the right-hand side reads the array it updates, in a helper and in the function
    _grow(C, B)
    C -= 0.1 * C**2
    C *= C
    return np.sum(C)


def local_arrays(x, y):
    # a local's own array: updating it in place or rebinding it is the same, and x is untouched
    u = x * 2.0
    u += y
    u *= u
    v = np.zeros_like(x)
    v -= u
    v /= 1.0 + x * x
    return np.sum(v) + np.sum(x)


def _returns_updated(u, w):
    u += w
    return u


def helper_returns_it(x, y):
    # the helper returns the caller's array it updated: one array under both names
    z = _returns_updated(x, y)
    return np.sum(z * x)


def _bump(s, x):
    s += np.sum(x)
    s *= 2.0
    return s


def float_parameters(x):
    # a float parameter updated in a helper is the helper's own: the caller's s keeps its value
    s = 1.5
    t = _bump(s, x)
    return s * t + _bump(t, x * x)


def _fresh_then_update(C):
    C = C * 2.0
    C += 1.0
    return C


def rebound_in_helper(C):
    # the helper makes a new array first: its update leaves the caller's C alone
    D = _fresh_then_update(C)
    return np.sum(D * C)


def _bump_all(v, C):
    C += 1.0
    return v * 2.0


def element_before_update(A):
    # the element passed to the helper is the value it had at the call, before the helper updates A
    r = _bump_all(A[0, 0], A)
    return r + np.sum(A * A)


# --- slices, rows and columns (these were right: each the same as the whole-array spelling) -------


def slices_inplace(x, y, a):
    # x[1:] += x[:-1] reads what it writes, overlapping: NumPy reads the right side first;
    # a float added to a slice had an array for its adjoint (grad failed converting it to a float)
    x[:] += y
    x[1:] += x[:-1]
    x[1:] -= 0.5 * a
    x[1:] *= 0.5
    x[:-1] -= y[1:] * x[1:]
    x[::2] /= 2.0
    x[2:] **= 2.0
    return np.sum(np.sin(x))


def rows_and_columns(A, b, a):
    for i in range(A.shape[0]):
        A[i] += b
        A[i] *= A[i]
        A[i] += a
    for j in range(A.shape[1]):
        A[:, j] -= b[j] * A[:, 0]
        A[:, j] /= 2.0
    A[1] **= 2.0
    return np.sum(A)


def _scale_rows(A, s):
    for i in range(A.shape[0]):
        A[i] *= s[i]


def rows_in_helpers(A, s):
    _scale_rows(A, s)
    A += 1.0
    _scale_rows(A, s * s)
    return np.sum(A * A)


# --- loops and prange ----------------------------------------------------------------------


def in_time_loop(u, a, c):
    # u's final state is an output too (the caller's array)
    for _t in range(4):
        u += 0.1 * (a - u * u)
        u *= 0.95
        u -= c
    return np.sum(u)


def broadcast_updates(A, b, a):
    # a row and a float broadcast over the whole 2-D array
    A += b
    A *= b
    A -= a
    A /= 1.0 + b * b
    return np.sum(A * A)


def prange_rows(A, x):
    for i in numba.prange(A.shape[0]):
        A[i] += x * A[i]
        A[i] *= 0.5
    A += 1.0
    return np.sum(A * A)


# --- NPBench's kernels as written (github spcl/npbench), each with a float objective ------------


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x
    return np.sum(w * w)


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A
    return np.sum(x1 * x2)


def trmm(alpha, A, B):
    # B's final state was B before `B *= alpha`
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha
    return np.sum(B * B)


def symm(alpha, beta, C, A, B):
    temp2 = np.empty(C.shape[1])
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return np.sum(C * C)


# --- zoo entries: each program above that writes its arguments, run on copies of them --------------
# (the zoo's functions leave their arguments alone); the caller then reads what the program wrote,
# as a helper's caller does. test_outsiders_inplace.py checks the programs themselves, whose written
# arguments are outputs.


def add_inplace_copied(C0, B):
    C = C0.copy()
    return add_inplace(C, B) + np.sum(np.sin(C))


def through_helper_copied(C0, B):
    C = C0.copy()
    return through_helper(C, B) + np.sum(np.sin(C))


def two_helper_levels_copied(C0, B):
    C = C0.copy()
    return two_helper_levels(C, B) + np.sum(np.sin(C))


def every_operator_copied(x0, y, a):
    x = x0.copy()
    return every_operator(x, y, a) + np.sum(np.sin(x))


def reads_its_target_copied(C0, B):
    C = C0.copy()
    return reads_its_target(C, B) + np.sum(np.sin(C))


def helper_returns_it_copied(x0, y):
    x = x0.copy()
    return helper_returns_it(x, y) + np.sum(np.sin(x))


def slices_inplace_copied(x0, y, a):
    x = x0.copy()
    return slices_inplace(x, y, a) + np.sum(np.sin(x))


def rows_and_columns_copied(A0, b, a):
    A = A0.copy()
    return rows_and_columns(A, b, a) + np.sum(np.sin(A))


def broadcast_updates_copied(A0, b, a):
    A = A0.copy()
    return broadcast_updates(A, b, a) + np.sum(np.sin(A))


def rows_in_helpers_copied(A0, s):
    A = A0.copy()
    return rows_in_helpers(A, s) + np.sum(np.sin(A))


def in_time_loop_copied(u0, a, c):
    u = u0.copy()
    return in_time_loop(u, a, c) + np.sum(np.sin(u))


def prange_rows_copied(A0, x):
    A = A0.copy()
    return prange_rows(A, x) + np.sum(np.sin(A))


def trmm_copied(alpha, A, B0):
    B = B0.copy()
    return trmm(alpha, A, B) + np.sum(np.sin(B))


def symm_copied(alpha, beta, C0, A, B):
    C = C0.copy()
    return symm(alpha, beta, C, A, B) + np.sum(np.sin(C))


def swapped_buffers(x0, a):
    # after a swap `u` names the other buffer: its update is one of that array's elements
    u = x0.copy()
    v = np.zeros_like(x0)
    for _t in range(3):
        v[:] = a * u
        u, v = v, u
        u += 0.1 * x0
        v *= 0.5
    return np.sum(u * u) + np.sum(v)


# --- refused at the user's line (test_outsiders_inplace.py), not zoo entries --------------------
# each was a silently wrong value or derivative before: the update never reached the other name


def update_through_second_name(C, B):
    D = C
    D += B  # refused: second name
    return np.sum(C * C)


def update_through_row(A, b):
    r = A[0]
    r += b  # refused: row
    return np.sum(A * A)


def update_loop_rows(A, b):
    for row in A:
        row += b  # refused: loop row
    return np.sum(A * A)


def _add_to(r, b):
    r += b


def update_row_in_helper(A, b):
    for i in range(A.shape[0]):
        _add_to(A[i], b)  # refused: row in helper
    return np.sum(A * A)


def _update_then_rebind(C):
    C += 1.0
    C = C * 2.0
    return C


def helper_rebinds_after_update(C):
    D = _update_then_rebind(C)  # refused: rebinds
    return np.sum(D * C)


def floats_into_ints(x):
    k = np.arange(x.shape[0])
    k *= 2.5  # refused: ints
    return np.sum(x * k)


def argument_in_prange(C, B):
    for _i in numba.prange(3):
        C += B  # refused: prange
    return np.sum(C)


# fuzz seed 0, programs 92 and 327 (after the areas merged): an argument written, then rebound,
# then an argument updated in place by a helper; following the written outputs again after the
# in-place lowering made a copy that kinds had not typed (a crash, or a float for an array's tangent)
def _scale(C, c):
    C *= c


def written_rebound_then_scaled(coef, data, W):
    coef[1] = 0.75 * W[0, 0]
    coef = coef * 2.0
    _scale(data, W[0, 1])
    return np.sum(coef * coef) + np.sum(data * W[1])
