"""The constructs that issue 11 found silently wrong, crashing or wrongly rejected, one function each.

Each is a zoo entry (`zoo.py`): golden files pin its generated code, the numeric tests check it
against finite differences, by the dot-product test, and compiled against plain Python. The
comment above each says what went wrong before.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# --- 1: an accumulation of a constant reset the target's adjoint ------------------------------


def accumulate_constants(p, y0, n):
    # s += 1.0 zeroed s_bar; so did y[i] += 1.0 and s += n with an int
    y = y0.copy()
    s = p * 2.0
    s += 1.0
    s += n
    s -= 0.5
    for i in range(y.shape[0]):
        y[i] = y[i] * p
        y[i] += 1.0
    return s * y[0] + y[1]


# --- 2: max and min of three arguments --------------------------------------------------------


def three_way_min_max(a, b, c):
    # only the first two arguments were differentiated (an IndexError with all three in wrt)
    return max(a, b, c) + min(a * b, b, c - 1.0) + max(a, 0.1, 5.0 * c)


# --- 3: tuples of values carrying derivatives -------------------------------------------------


def tuple_values(a, b):
    # p = (a * a, b) was a constant: the gradient was (0, 0)
    p = (a * a, b)
    q = p
    u, v = q
    r = (p[1], p[0] + u * v)
    return p[0] * p[1] + r[-1] - len(r)


# --- 4: functions returning tuples, with computed arguments -----------------------------------


def _swap(a, b):
    return b, a


def _pair(a, b):
    return a * 2.0, a + b


def _sq(z):
    return z * z


def tuple_helpers(p, q):
    # u, v = swap(u, v) assigned the results one by one; pair(p if p > 0 else q, 2.0) gave (0, 0);
    # pair(sq(p), q) raised NameError
    u, v = p, q * 3.0
    u, v = _swap(u, v)
    a, b = _pair(p if p > 0.0 else q, 2.0)
    c, d = _pair(_sq(p), q)
    return u * v + u + a * b + c * d


# --- 5: Python's evaluation order around a call that writes an array ---------------------------


def _writes_first(a):
    a[0] = 5.0
    return a[1]


def evaluation_order(x0):
    # the helper was inlined before x[0] was read: 7.0 instead of 3.0 at x = (1, 2, 3)
    x = x0.copy()
    y = x[0] * 1.0 + _writes_first(x)
    return y * x[2] + x[0]


# --- 6: a row written with an array value inside a loop ----------------------------------------


def recurrent_rows(inputs, W, h0):
    # the reverse mode returned zeros (jvp was right)
    n = inputs.shape[0]
    h = np.zeros((n + 1, h0.shape[0]))
    h[0] = h0
    for t in range(n):
        h[t + 1] = np.tanh(np.dot(inputs[t], W) + h[t])
    return np.sum(h[n] * h[n])


# --- 8: records after a loop (the tape was reserved to the loop's records only) ----------------


def records_after_loop(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * a + x[i]
    t = s
    s = s * s
    t = t + s
    s = math.sin(s)
    t = t * s
    s = s * a
    t = t + s
    s = s * t
    t = t * a
    s = math.cos(s) + t
    return s + t


# --- 9: user names that look like generated ones ------------------------------------------------


def generated_looking_names(x, x_bar, x_dot, tape):
    # duplicate arguments, and the wrong adjoint for x when the user has x_bar
    top = 0.0
    t0 = x * x_bar
    value = t0 + x_dot * tape
    for i in range(3):
        top = top + value * 0.5
    reserve = top * x
    return reserve + t0


# --- 10, 11: infinities, NaN, and singular points ---------------------------------------------


def infinities(x):
    # np.inf raised a libcst error; min with an inf start is the usual way to write a minimum
    best = np.inf
    worst = -math.inf
    for i in range(x.shape[0]):
        best = min(best, x[i] * x[i])
        worst = max(worst, x[i])
    if best == math.inf or np.isnan(worst):
        return np.nan
    return best * math.pi + worst


def flat_branch(v, w):
    # sqrt(max(v, 0.0)) raised ZeroDivisionError at v < 0, where the derivative is 0
    return math.sqrt(max(v, 0.0)) + w * math.sqrt(max(-v, 0.0))


# --- 12: integer index arrays read into locals -------------------------------------------------


def edge_sums(x, edges, weights):
    # a = edges[e, 0] was typed as a float and taped on the float tape
    y = np.zeros(x.shape[0])
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        y[a] += weights[e] * x[b] * x[b]
        a = b
        y[a] += x[a]
    return np.sum(y * y)


# --- 13: a float stored into an array element ---------------------------------------------------


def store_a_float(y0, p):
    # x[0] = p made p an array ("argument `p` must be a NumPy array, got float")
    y = y0.copy()
    y[0] = p
    y[1] += p * p
    return y[0] * 2.0 + y[1]


# --- 14: whole-array rules on arrays of different ndims, abs, powers, modulo ---------------------


def broadcasting_rules(A, x, p):
    # np.sum(A * x) failed in numba; np.abs(array), (1 + x * x) ** p and 3.0 % array raised TypeError
    # (abs(array) is now a positioned rejection that says np.abs: numba has no abs() of arrays)
    return np.sum(A * x) + np.sum(np.abs(x)) + np.sum((1.0 + x * x) ** p) + np.sum(3.0 % (x + 2.0)) + np.sum(A + x)


# --- 15: a branch numba could not type -------------------------------------------------------------


def _maybe_double(a, b):
    if (0.3 if b > b else b) < b:
        return b * 2.0
    return a


def untyped_branch(a, b):
    # numba: "Unsupported assignment encountered: Undefined"
    return _maybe_double(a, b) + _maybe_double(b, a) * a


# --- 16: the random-program generator, after the redesign ------------------------------------------


def widened_tangent(v, base, X):
    # jvp: the tangent of base + v (base a constant array, v a float) was v_dot, once, not once per
    # element, so np.sum(base + v) had the derivative 1 instead of len(base)
    row = np.sum(X * v, axis=-2)
    return np.sum(base + v) + np.sum(v - base * 2.0) + np.sum(row + base[0])


def returned_rename(x, n):
    # `result = y` before `return result` was refused as two names for one array; a size from an
    # int parameter was guessed a float
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * x[i]
    result = y
    return result


# --- 17: a call rewritten into an expression, in an expression that binds tighter -----------------


def lowered_in_context(X, x):
    # np.mean(X, axis=0) ** 2 became np.sum(X, axis=0) / X.shape[0] ** 2: the rewrite of a call was
    # not parenthesized (a wrong value and gradient, no error)
    return (
        np.sum(np.mean(X, axis=0) ** 2)
        + np.sum(np.subtract(x, 1.0) ** 2)
        + 2.0 ** np.negative(x[0])
        + np.sum(np.add(x, x) / np.multiply(x, 2.0) ** 2)
        + math.cbrt(x[1] + 2.0) ** 2
    )


# --- 18: the last 5,000-program run --------------------------------------------------------------


def dead_overflow(a1, y):
    # vjp gave nan: p's last value is never read on the way to a result, but its adjoint code still
    # multiplied the zero adjoint by a partial that had overflowed to inf (0 * inf)
    p = 0.0
    a1[0] += p
    for i in range(a1.shape[0]):
        for _ in range(y.shape[0]):
            p = np.power(1.0 + p * p, a1[i] + 3.0)  # overflows to inf (NumPy: a warning, no error)
    return np.sum(a1 * y[: a1.shape[0]])


def pruned_branch(xs, v1):
    # numba pruned `if t > 0.25` (t = 0.0) and with it every assignment of a variable the branch's
    # adjoint reads: "Type of variable 'choice' cannot be determined"
    t = 0.0
    b = xs[0] * v1[0]
    if t > 0.25:
        choice = b
        b = b + math.copysign(b, choice)
    return b * xs[1]


def _decrement(res, a, src):
    res[0, 0] -= res[1, 1] * a
    return src[1, 1] + a


def argument_by_reference(K, a):
    # Python passes K by reference: the inner call's write is seen by the outer call's first
    # argument; it was copied (snapshot) before the inner call ran, so the outer call wrote the copy
    M = K.copy()
    M[0, 1] = _decrement(M, _decrement(M, a, M), M)
    return M[0, 0] * M[0, 1]


def shape_in_index(x, A):
    # grad(f, wrt="A") refused A as "a 2-D integer array": its shape in index arithmetic made the
    # type guess call it an int array, and wrt was checked against that guess
    i2 = math.floor(x[0]) % A.shape[0]
    return A[i2, 0] * x[1] + np.mean(A / (1.0 + A * A))


def shifted_slice_in_parallel(y0, a):
    # compiled with parallel=True, numba also ran the whole-array statement as a parallel loop that
    # wrote y while reading it: another thread's y[k + 1] was already the new value (a wrong value
    # with jit=True only); only prange loops run in parallel now
    y = y0.copy()
    y[:-1] = (y[1:] - y[:-1]) * a
    s = 0.0
    for i in numba.prange(y.shape[0]):
        s += y[i] * y[i]
    return s


def tangent_of_a_new_array(data0):
    # `r = data * 1.0` is a new array, but its tangent was data_dot itself: the later write into
    # data's tangent changed r's too (jvp wrong)
    data = data0.copy()
    r = data * 1.0
    for i in range(1, 0, -1):
        data[i] = 1.0
    return r[1] * data[0] + r[2]


def trip_count_of_a_difference(c, h, coef):
    # the records of this nest were reserved as `len(coef) - 1 * (1 + len(coef))` (a missing
    # parenthesis), and `len(coef) - 1` was taken for a size (never negative): the tape overflowed
    lo = 0.0
    for j in range(len(coef) - 1):
        for k in range(len(coef)):
            if k > 1:
                break
            if coef[k] > 0.5:
                lo = lo * c + h
            c = c * 0.9
    return lo


def checkpointed_array_result(data, c):
    # a marked loop writes the array it returns: the reverse sweep restores the loop's entry state
    # into that buffer, and the value returned was that buffer (np.empty's contents; fuzz 14:111)
    acc = np.empty(data.shape[0])
    # sourcead: checkpoint
    for i in range(data.shape[0]):
        acc[i] = c * data[i] if data[i] > 0.0 else math.sin(data[i])
    return acc


def parallel_slots_in_a_marked_loop(u0, kappa, n_steps):
    # parallel_kernels.heat_steps with its time loop marked: the prange loop records the old values
    # it overwrites in its own slots of the tape, and did so even in the checkpointed loop's forward
    # sweep and replays, which record nothing and never set the slot offset (fuzz 15:377, 15:631)
    n = u0.shape[0]
    u = u0.copy()
    v = u0.copy()
    # sourcead: checkpoint
    for _step in range(n_steps):
        for i in numba.prange(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i] * float(i)
    return s


# --- 23: fuzz seed 21 ------------------------------------------------------------------------------


def selected_times_array(r, B):
    # numba refused the vjp: hypot's partial `(t1 / t2 if t2 != 0.0 else 0.0)` took the array factor
    # -sin(B[1, :]) inside, an array in one branch and 0.0 in the other; and the jvp: B[0] * y_dot
    # went inside y_dot's conditional the same way
    y = math.hypot(r, 2.0 * r)
    return math.hypot(r, np.sum(np.cos(B[1, :]))) + np.sum(y * B[0])


def accumulated_then_restored(x, w):
    # fuzz seed 26: the loop accumulating into s records s's old value at every iteration (t's
    # adjoint reads s as it was before the loop); reversed in the loop's own order, the restores
    # left s at its value before the last iteration, not the first
    s = w
    t = s * s
    for i in range(x.shape[0]):
        s += x[i]
    return t + s * 2.0


# --- 24: fuzz seed 26 ------------------------------------------------------------------------------
# swap_undo_in_pruned_branch: the reverse sweep undoes the swap `acc, tmp = tmp, acc` of the inlined
# helper (constants both), but only adjoint reads got typed placeholders: numba, pruning the branch
# that assigns them, could not type the undo ("Type of variable 'mix1_acc_1' cannot be determined")


def _swap_mix(arr):
    tmp = 0.0
    for k in range(arr.shape[0]):
        tmp += math.sqrt(1.0 + tmp * tmp)
    i = 0
    for i in range(arr.shape[0]):
        idx0 = (i + 2) % arr.shape[0]  # noqa: F841 (as the fuzzer wrote it)
        acc = 0.5 * arr[0] + arr[i]
        tmp += acc * arr[i]
        it = 0
        while it < 2:
            it += 1
            acc, tmp = tmp, acc
    return ((tmp - tmp) - (2.0 ** math.sin(arr[arr.shape[0] - 1 - i]))) + ((1.0 * tmp) * arr[arr.shape[0] - 1 - i])


def swap_undo_in_pruned_branch(xs, u):
    n = len(xs)
    lo = 0.5
    s = 0.0
    out = np.zeros(n)
    z = np.zeros(n)
    xs[n // 2] -= math.exp(math.sin(z[0] + 0.1))
    k = xs.shape[0] // 2
    if k % 2 == 0:
        prod = xs[0] * min(((k * 1.0) / (1.0 + u * u)), _swap_mix(z))  # noqa: F841 (as the fuzzer wrote it)
    elif ((u - s) > -0.5) or ((xs[k - 1] / (1.0 + out[k] * out[k])) >= u):
        i = 0
        for i in range(k, len(out)):
            for j in range(i):
                pos = (j + 2) % out.shape[0]  # noqa: F841 (as the fuzzer wrote it)
                q = xs[k - 1] - z[k + 1]
                u += q * q
                break
                acc = u * 1.0 + _swap_mix(z)  # noqa: F841 (as the fuzzer wrote it)
    elif (s + s) > 0.5:
        if math.tanh(u) > 1.0:
            return out
    elif (np.sum(np.arctan(out)) >= out.sum()) and ((0.75 - xs[k]) >= -0.5):
        for i in range(n):
            for j in range(xs.shape[0]):
                s += np.expm1(np.cos(lo / 3.0))
    else:
        lo += np.sum(np.clip(out, -1.0, 1.0))
    for i in range(n):
        lo += z[i]
    return np.exp(-xs * xs)


def bound_in_pruned_branch(x, c):
    # fuzz seed 29: `stop = x.shape[0]` (hoisted by normalize) is assigned only in a branch numba
    # prunes (`3.0 < 0.5`); the reversed loop reads it again, and numba could not type it
    s = c * x[0]
    if (x[1] > -10.0) and (3.0 < 0.5):
        for i in range(x.shape[0]):
            s += x[i] * x[i]
            x[i] /= 3.0
    return s + x[1] * c


def offset_in_pruned_branch(x, c):
    # a recomputed prefix reads `off`, assigned only in a branch numba prunes (`3.0 < 0.5`): the
    # reversed loop reads it again, and numba could not type it
    s = c * x[0]
    if (x[1] > -10.0) and (3.0 < 0.5):
        off = 1
        for i in range(3):
            j = (i + off) % 3
            s += x[j] * x[i] * c
    return s + x[1] * c


def sine_of_a_power(x, r):
    # fuzz seed 75: jit=False ran math.pow as NumPy's power, one ulp from the C library's at
    # pow(11.4752..., 13.5788...) ~ 2.5e14, and the sine of that moves by 0.03 per ulp
    return math.sin(math.pow(1.0 + x * x, r))


def last_prefix_value(a, w):
    # fuzz 92:100: the loop's body is a prefix its reversal computes again (`i = i_loop`, for the
    # read of `i` after the loop, then `best = a[i // 2]`), and its iterations ran in the loop's own
    # order; but `best` is read after the loop, so the adjoint that enters from there belongs to the
    # last iteration alone (the first one took it: a_bar[0] instead of a_bar[2])
    best = 0.5
    i = 0
    for i in range(a.shape[0]):
        best = a[i // 2]
        w -= 3.0
    return best * best + w + a[i]


def unchosen_infinite_partial(y, x):
    # fuzz 96:27: `acc` stays inf (its loop runs no iteration), so min picks x; the operand not
    # chosen has an infinite partial in y, and reverse mode multiplied it by the selection's 0.0
    # adjoint: 0 * inf, a nan gradient where forward mode and finite differences give 0
    acc = math.inf
    for i in range(y.shape[0], y.shape[0]):
        acc = y[i]
    return min(acc / (1.0 + y[0] * y[0]), x) + x


def whole_arrays_under_max(a, v, d):
    # fuzz 102:63: an array leaf below a float `max`; its contribution is an array, and the
    # selection's condition wrapped it as `(g if m else 0.0)`, which numba cannot type (an array
    # and a float joined): the reverse sweep did not compile
    return max(a[0] * a[0], np.linalg.norm(np.outer(v, d)) + np.sum(a * d)) + v[1]


def index_before_its_loop(x, w):
    # fuzz 97:295: `x[i + 1]` is read before a loop that counts with `i`; the reverse sweep read `i`
    # again after reversing that loop, which left it at the loop's last value (an index out of
    # range there; here, where the loop is shorter, a silently wrong element)
    i = 1
    s = x[i + 1] * w
    for i in range(x.shape[0] - 3):
        s += x[i] * x[i]
    return s


# --- known wrong: a zero adjoint times a partial that is not finite, across statements ----------
# Reverse mode multiplies an adjoint that is exactly 0.0 at run time (a branch not taken, a value
# overwritten before any result reads it) by a partial that is inf or nan (0 * inf = nan), where
# forward mode and finite differences give 0. Within one expression a selection's condition wraps
# whole contributions (linearize.adjoint); across statements it does not yet. test_fuzz.py holds
# them as strict expected failures until it does.


def unchosen_across_statements(j0, K, data):
    # fuzz 0:1560 (shrunk): tanh(inf * k) has the partial inf * 0 = nan; max picks 1.0
    z = np.inf
    d = math.tanh(z * K[j0, j0])
    return max(d * data[1], 1.0)


def overwritten_after_overflow(buf, f_bar, r):
    # fuzz 0:1970 (shrunk): w grows until 2.0 ** w overflows; sm's adjoint is 0 once sm = 2.0
    sm = 0.0
    w = np.zeros(f_bar.shape[0])
    for _i in range(buf.shape[0]):
        w[0] = r
        for j in range(1, w.shape[0]):
            w[j] = (1.0 + 1.0) ** w[j // 2]
        sm -= w[1]
        for j in range(1, w.shape[0]):
            z = w[j]
            r += z
            sm = 2.0
    return sm
