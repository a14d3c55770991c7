"""A zoo of user functions in the supported subset, and the registry that drives the numeric tests.

Each function is a plain module-level ``def``; sourcead reads its source, so keep every one
inside the subset the compiler accepts today (see ``Case`` for what the tests need to know).
A new entry in ``ZOO`` needs no new test code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import checkpointing
import findings
import helpers_other
import idioms
import numpy as np
import outsiders_calls
import outsiders_inplace
import outsiders_outputs
import outsiders_prange
import outsiders_rules
import outsiders_views
import stencils
import vectorized

import sourcead
from benchmarks import gradbench_workloads


@dataclass(frozen=True)
class Case:
    """One zoo function, how to make its arguments, and what to differentiate."""

    name: str  # unique, snake_case; also used for golden file names
    func: Callable
    # deterministic given the rng; points away from singularities (log, sqrt of positives, ...)
    make_args: Callable[[np.random.Generator], tuple]
    wrt: tuple[str, ...]  # float or float64-array arguments to differentiate w.r.t.
    scalar_output: bool  # True if func returns a float, so grad applies


# --- scalar functions of floats --------------------------------------------------------------


def poly2(x, y):
    t = 3.0 * x * x * y - 2.0 * x * y * y
    return t + x - 4.0 * y + 1.5


def math_mix(x, y):
    a = math.sin(x) * math.cos(y) - math.tan(0.5 * x)
    b = math.exp(0.3 * x) + math.log(y)
    c = math.sqrt(x * x + y * y)
    d = math.tanh(x - y)
    e = math.pow(y, 1.7) + math.pow(y, x) + abs(x - 2.0 * y)
    return a + b * c - d + e + -x


def logistic_map(r, y0):
    # r < 3 keeps the map on its stable branch, so 50 steps have a moderate derivative
    y = y0
    for _k in range(50):
        y = r * y * (1.0 - y)
    return y


def decay_steps(y0, rate, n_steps):
    # n_steps is an int argument that is only a loop bound, never differentiated
    y = y0
    dt = 0.05
    for _k in range(n_steps):
        y = y - dt * rate * y * y
    return y


# --- reductions over arrays ------------------------------------------------------------------


def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * y[i]
    return s


def product(x):
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
    return p


def index_weights(x):
    s = 0.0
    for i in range(x.shape[0]):
        w = float(i)
        s += (w + 1.0) * x[i] * x[i] - 0.5 * w * x[i]
    return s


def div_pow(x, y, a):
    # float exponents, a variable exponent, and division by an active denominator
    s = 0.0
    for i in range(x.shape[0]):
        q = x[i] ** 1.5 / (1.0 + y[i] ** 2.0)
        s += q + (x[i] / y[i]) ** 0.5 - x[i] ** a
    return s / a


def augmented_muldiv(x, y):
    p = 1.0
    s = 0.0
    for i in range(x.shape[0]):
        p *= x[i]
        p /= y[i]
        s += p
        s -= 0.25 * x[i] * y[i]
    s *= 2.0
    s /= float(x.shape[0])
    return s + p


def strided_pairs(x):
    # range with three arguments, np.empty as scratch, and len()
    t = np.empty(len(x))
    for i in range(len(x)):
        t[i] = math.exp(-x[i])
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        s += t[i] * x[i + 1]
    for i in range(1, len(x), 3):
        s -= t[i] * t[i]
    return s


# --- arrays written element by element, then read --------------------------------------------


def prefix_sums(x):
    c = np.zeros_like(x)
    c[0] = x[0]
    for i in range(1, x.shape[0]):
        c[i] = c[i - 1] + x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += c[i] * c[i]
    return s


def copy_modify(x):
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = y[i] * y[i] + 1.0
    for i in range(1, y.shape[0]):
        y[i] = y[i] * y[i - 1]
    s = 0.0
    for i in range(y.shape[0]):
        s += math.sin(y[i])
    return s


def least_squares(A, x, b):
    # 0.5 * sum_i (sum_j A[i, j] * x[j] - b[i]) ** 2, as a nested loop
    s = 0.0
    for i in range(A.shape[0]):
        r = -b[i]
        for j in range(A.shape[1]):
            r += A[i, j] * x[j]
        s += 0.5 * r * r
    return s


def heat_euler(u0, kappa):
    # explicit Euler for u_t = u_xx with fixed ends; v is scratch, copied back element by element
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros(n)
    for _step in range(20):
        for i in range(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = v[i]
    e = 0.0
    for i in range(n):
        e += u[i] * u[i]
    return e


# --- array and tuple outputs -----------------------------------------------------------------


def matvec(A, x):
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j]
    return y


def gram(X):
    n = X.shape[0]
    G = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(X.shape[1]):
                s += X[i, k] * X[j, k]
            G[i, j] = math.tanh(s)
    return G


def mean_and_centered(x):
    n = x.shape[0]
    m = 0.0
    for i in range(n):
        m += x[i]
    m /= float(n)
    y = np.empty(n)
    for i in range(n):
        y[i] = (x[i] - m) * math.exp(x[i])
    return m * m, y


def forward_substitution(L, b):
    # solve L x = b for lower-triangular L: the inner trip count depends on the outer index
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        r = b[i]
        for j in range(i):
            r -= L[i, j] * x[j]
        x[i] = r / L[i, i]
    return x


def elementwise_inplace(x, y):
    # augmented assignments on array elements that read the element they write
    z = x.copy()
    for i in range(z.shape[0]):
        z[i] *= y[i]
        z[i] /= 1.0 + y[i] * y[i]
        z[i] -= 0.5 * z[i] * z[i]
        z[i] += math.cos(z[i])
    return z


def repeated_updates(x, a):
    # every element is overwritten nonlinearly on each outer step
    y = x.copy()
    for _k in range(5):
        for j in range(y.shape[0]):
            y[j] = y[j] * a + math.sin(y[j])
    return y


def reversed_reads(x):
    # a temporary overwritten every iteration, and indices counting down
    n = len(x)
    s = 0.0
    for i in range(n):
        t = x[n - 1 - i]
        s = 0.9 * s + t * t * x[i]
    return s


def transpose_products(A):
    # a 2-D scratch array from np.zeros((n, m)), read at transposed indices
    n = A.shape[0]
    m = A.shape[1]
    B = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            B[i, j] = A[i, j] * A[j, i] + A[i, j]
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += B[i, j] * B[j, i] * float(i + j + 1)
    return s


def zero_trip_loops(x, n_extra):
    # with n_extra = 0 the middle loops run no iteration; tapes and reversed loops must cope
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    for _k in range(n_extra):
        s = s * x[0]
    for i in range(1, 1):
        s = s * x[i]
    for i in range(x.shape[0]):
        s = s * 0.5 + x[i]
    return s


# --- the registry ----------------------------------------------------------------------------


def _uniform(rng: np.random.Generator, low: float, high: float, shape=None):
    if shape is None:
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)


def _lower_triangular_system(rng: np.random.Generator):
    L = np.tril(rng.standard_normal((5, 5))) + 3.0 * np.eye(5)
    return L, rng.standard_normal(5)


def _heat_initial(rng: np.random.Generator):
    grid = np.linspace(0.0, 1.0, 16)
    u0 = np.sin(math.pi * grid) + 0.1 * rng.standard_normal(16)
    return u0, _uniform(rng, 0.2, 0.3)


# --- control flow ----------------------------------------------------------------------------


def branches(x, y):
    # if/elif/else on values that carry derivatives, inside and outside a loop
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            s += x[i] * y
        elif x[i] > -0.5:
            s -= math.sin(x[i]) * y * y
        else:
            s += 2.0 * x[i]
    if s > 0.0:
        s = s * s
    return s


def choose_min_max(x, y):
    # conditional expressions, min, max and abs of active values
    s = 0.0
    for i in range(x.shape[0]):
        a = x[i] * y if x[i] > 0.0 else x[i] - y
        s += max(a, 0.1 * a) + min(x[i], y) + abs(a - 0.3)
    return s


def newton_sqrt(a):
    # a while loop with a data-dependent trip count
    x = a
    while abs(x * x - a) > 1e-13 * a:
        x = 0.5 * (x + a / x)
    return x


def logistic_long(r, x0):
    x = x0
    for _k in range(1000):
        x = r * x * (1.0 - x)
    return x


def first_passage(x, limit):
    # break out of a loop, and return early from inside a loop
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
        if s > limit:
            break
    t = 0.0
    for i in range(x.shape[0]):
        t += math.exp(0.1 * x[i])
        if t > 2.0 * limit:
            return s * t
    return s + t


def skip_negatives(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        s += math.sqrt(x[i] + 1.0) * x[i]
    return s


def backwards_strides(x):
    # negative steps, strides, bounds computed in the function
    n = x.shape[0]
    s = 0.0
    for i in range(n - 1, -1, -1):
        s = 0.5 * s + x[i] * x[i]
    last = n - 2
    for i in range(last, 0, -2):
        s += x[i] * s
    for i in range(1, n, 3):
        s -= x[i]
    return s


def swap_scalars(a, b):
    for _k in range(5):
        a, b = b, a * b + 0.5
        a, b = b, a
    return a * b + a


def periodic_stencil(u0, k, steps):
    # periodic neighbours computed from the loop counter: recomputed in the reverse sweep, not taped
    n = u0.shape[0]
    u = u0.copy()
    un = np.empty(n)
    for t in range(steps):
        for i in range(n):
            ip = i + 1
            if ip == n:
                ip = 0
            im = i - 1
            if im < 0:
                im = n - 1
            un[i] = u[i] + k * (u[ip] - 2.0 * u[i] + u[im]) - 0.02 * u[i] * u[i] * u[i]
        u, un = un, u
    return np.sum(u * u)


def wrapped_neighbours(x, w):
    # an index wrapped by the array's own size, and one from a triangular counter: both recomputed
    s = 0.0
    for i in range(x.shape[0]):
        j = (i + 1) % x.shape[0]
        for k in range(i, len(x)):
            m = (k * k) % len(x)
            s += w * x[i] * x[j] * x[m]
    return s


def index_after_loop(x):
    # an index the loop computes first, but read after the loop too: it keeps its records
    n = x.shape[0]
    s = 0.0
    j = 0
    for i in range(n):
        j = (i * 3) % n
        s += x[j] * x[i]
    return s + x[j] * x[j]


def shifting_offset(x):
    # the inner loop's index depends on `off`, which the outer loop changes: it keeps its records
    n = x.shape[0]
    off = 1
    s = 0.0
    for t in range(3):
        for i in range(n):
            j = (i + off) % n
            s += x[i] * x[j] * (t + 1)
        off = off + 2
    return s


def nearest_centroid(points, centroids):
    # differences re-read from arrays nothing writes: recomputed in the reverse sweep, not taped
    total = 0.0
    for i in range(points.shape[0]):
        best = math.inf
        for c in range(centroids.shape[0]):
            d2 = 0.0
            for j in range(points.shape[1]):
                t = points[i, j] - centroids[c, j]
                d2 += t * t
            if d2 < best:
                best = d2
        total += best
    return total


def loop_variable_after_loop(x, w):
    # `j` after its loop is its last value, read in the next iteration of the outer loop and after
    # both: the reversed inner loop ran j backwards and left it at its first value (a wrong
    # gradient, no error); now `j` is an ordinary variable the loop assigns, recorded where needed
    s = 0.0
    j = 0
    for i in range(x.shape[0] - 2):
        s += x[j] * x[j] * w
        for j in range(i, i + 3):
            s += x[j] * x[i]
    for k in range(4):
        s += math.sin(x[k] * w)
    return s + x[j] * x[k]


def reassigned_in_prefix(a, x):
    # a value the loop computes first, then overwrites: `t * t` and `a[k]` read the values before
    # the overwrites, so recomputed the reverse sweep would see the last ones (a wrong gradient,
    # no error): the prefix ends before an overwrite of a value read since
    n = a.shape[0]
    s = 0.0
    for i in range(n - 1):
        t = a[i] * 1.5
        t = t * t
        k = i
        u = a[k] * x[k]
        k = k + 1
        s += t * x[i] + u * a[k] * a[k]
    return s


def pairwise_steps(p0, v0, dt, n_steps):
    # pair forces from positions the step then moves: each pair's differences, distance and
    # weight are computed again from the positions (restored per step: three records per body,
    # not five per pair), and `d` is reused by the energy loop
    n = p0.shape[0]
    p = p0.copy()
    v = v0.copy()
    for _step in range(n_steps):
        for i in range(n):
            f = 0.0
            for j in range(n):
                d = p[j] - p[i]
                r = math.sqrt(d * d + 0.1)
                w = d / (r * r * r)
                f += w
            v[i] += dt * f
        for i in range(n):
            p[i] += dt * v[i]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = p[j] - p[i]
            e += math.sqrt(d * d + 0.1) + v[i] * v[j]
    return e


def periodic_reread(u0, k, steps):
    # the periodic index is recomputed, `c = u[i]` stays a record: re-read, it would have the
    # step's writes into `un` recorded instead, as many and in as many loops
    n = u0.shape[0]
    u = u0.copy()
    un = np.empty(n)
    for _t in range(steps):
        for i in range(n):
            ip = i + 1
            if ip == n:
                ip = 0
            c = u[i]
            un[i] = c + k * (u[ip] - c) - 0.1 * c * c * c
        u, un = un, u
    return np.sum(u * u)


def crossed_writes(x):
    # `B[j, k]` and `B[k, j]` with k = 3j mod n: iterations 1 and 3 write the same two elements, so
    # the loop reverses descending (the loop variable is not at one position in both writes); run
    # ascending, the gradient was wrong, with no error
    n = x.shape[0]
    B = np.zeros((n, n))
    s = 0.0
    for j in range(n):
        k = (3 * j) % n
        B[j, k] = x[j] * x[k]
        B[k, j] = x[j] + 2.0 * x[k] * x[j]
    for a in range(n):
        for b in range(n):
            s += B[a, b] * B[a, b] * (a + 1)
    return s


def heat_swap(u0, kappa, n_steps):
    # explicit Euler with two buffers that exchange roles every step
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros(n)
    for _step in range(n_steps):
        v[0] = u[0]
        v[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return 0.5 * s


def while_in_for(x):
    # a while loop nested in a for loop, trip counts differ per element
    s = 0.0
    for i in range(x.shape[0]):
        y = x[i]
        while y > 1.0:
            y = 0.5 * y + 0.05 * x[i]
        s += y * y
    return s


# --- calls between user functions ------------------------------------------------------------


def _sq_norm(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def _rotate(a, b, angle):
    c = math.cos(angle)
    d = math.sin(angle)
    return c * a - d * b, d * a + c * b


@sourcead.differentiable
def _logistic(t):
    return 1.0 / (1.0 + math.exp(-t))


def calls_helpers(x, y):
    # a plain helper, a tuple-returning helper inside a loop, a decorated helper
    s = _sq_norm(x)
    a, b = 0.0, y
    for i in range(x.shape[0]):
        a, b = _rotate(a + x[i], b, 0.3)
    return s * _logistic(a) + b


def calls_across_modules(x, w):
    # a helper in another module, which calls a numba-compiled helper inside a loop
    return helpers_other.weighted(x, w) + w * w


def constant_loop(x, w):
    # the loop over w only builds a constant: it leaves no trace in the adjoint
    norm = 0.0
    for i in range(w.shape[0]):
        norm += w[i] * w[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i]) / norm
    return s


def wrapped_lines(x, y):
    # expressions wrapped over lines by a formatter, with a comment inside
    s = 0.0
    for i in range(x.shape[0]):
        s += (
            x[i] * y  # the linear part
            + math.sin(
                x[i],
            )
            * y
        )
    return s


def calls_a_procedure(x, c):
    # a helper that only writes into an array argument, called as a statement
    y = np.zeros_like(x)
    helpers_other.fill_scaled(y, x, c)
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i]
    return s


ZOO: list[Case] = [
    Case("poly2", poly2, lambda rng: (_uniform(rng, -2, 2), _uniform(rng, -2, 2)), ("x", "y"), True),
    Case(
        "math_mix",
        math_mix,
        lambda rng: (_uniform(rng, 0.5, 1.0), _uniform(rng, 1.5, 2.0)),
        ("x", "y"),
        True,
    ),
    Case(
        "logistic_map",
        logistic_map,
        lambda rng: (_uniform(rng, 2.5, 2.8), _uniform(rng, 0.2, 0.8)),
        ("r", "y0"),
        True,
    ),
    Case(
        "decay_steps",
        decay_steps,
        lambda rng: (_uniform(rng, 0.5, 1.5), _uniform(rng, 0.5, 1.0), 30),
        ("y0", "rate"),
        True,
    ),
    Case("sum_squares", sum_squares, lambda rng: (rng.standard_normal(9),), ("x",), True),
    Case("dot", dot, lambda rng: (rng.standard_normal(7), rng.standard_normal(7)), ("x", "y"), True),
    Case("product", product, lambda rng: (_uniform(rng, 0.5, 1.5, 8),), ("x",), True),
    Case("index_weights", index_weights, lambda rng: (rng.standard_normal(6),), ("x",), True),
    Case(
        "div_pow",
        div_pow,
        lambda rng: (
            _uniform(rng, 0.5, 2.0, 6),
            _uniform(rng, 0.5, 2.0, 6),
            _uniform(rng, 1.2, 2.5),
        ),
        ("x", "y", "a"),
        True,
    ),
    Case(
        "augmented_muldiv",
        augmented_muldiv,
        lambda rng: (_uniform(rng, 0.8, 1.2, 7), _uniform(rng, 0.8, 1.2, 7)),
        ("x", "y"),
        True,
    ),
    Case("strided_pairs", strided_pairs, lambda rng: (rng.standard_normal(11),), ("x",), True),
    Case("prefix_sums", prefix_sums, lambda rng: (rng.standard_normal(8),), ("x",), True),
    Case("copy_modify", copy_modify, lambda rng: (_uniform(rng, -1, 1, 6),), ("x",), True),
    Case(
        "least_squares",
        least_squares,
        lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal(5)),
        ("A", "x", "b"),
        True,
    ),
    Case("heat_euler", heat_euler, _heat_initial, ("u0", "kappa"), True),
    Case(
        "matvec",
        matvec,
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3)),
        ("A", "x"),
        False,
    ),
    Case("gram", gram, lambda rng: (0.5 * rng.standard_normal((3, 4)),), ("X",), False),
    Case("mean_and_centered", mean_and_centered, lambda rng: (rng.standard_normal(5),), ("x",), False),
    Case(
        "forward_substitution",
        forward_substitution,
        _lower_triangular_system,
        ("L", "b"),
        False,
    ),
    Case(
        "elementwise_inplace",
        elementwise_inplace,
        lambda rng: (rng.standard_normal(6), rng.standard_normal(6)),
        ("x", "y"),
        False,
    ),
    Case(
        "repeated_updates",
        repeated_updates,
        lambda rng: (rng.standard_normal(4), _uniform(rng, 0.5, 0.9)),
        ("x", "a"),
        False,
    ),
    Case("reversed_reads", reversed_reads, lambda rng: (rng.standard_normal(7),), ("x",), True),
    Case(
        "transpose_products",
        transpose_products,
        lambda rng: (rng.standard_normal((4, 4)),),
        ("A",),
        True,
    ),
    Case(
        "zero_trip_loops",
        zero_trip_loops,
        lambda rng: (rng.standard_normal(5), 0),
        ("x",),
        True,
    ),
    Case("branches", branches, lambda rng: (rng.uniform(-1.5, 1.5, 9), _uniform(rng, 0.5, 1.5)), ("x", "y"), True),
    Case(
        "choose_min_max",
        choose_min_max,
        lambda rng: (rng.uniform(-1.0, 1.0, 7), _uniform(rng, 0.2, 0.8)),
        ("x", "y"),
        True,
    ),
    Case("newton_sqrt", newton_sqrt, lambda rng: (_uniform(rng, 2.0, 5.0),), ("a",), True),
    Case(
        "logistic_long",
        logistic_long,
        lambda rng: (_uniform(rng, 2.6, 2.8), _uniform(rng, 0.3, 0.6)),
        ("r", "x0"),
        True,
    ),
    Case("first_passage", first_passage, lambda rng: (rng.standard_normal(12), 3.0), ("x",), True),
    Case("skip_negatives", skip_negatives, lambda rng: (rng.standard_normal(9),), ("x",), True),
    Case("backwards_strides", backwards_strides, lambda rng: (0.5 * rng.standard_normal(10),), ("x",), True),
    Case(
        "swap_scalars", swap_scalars, lambda rng: (_uniform(rng, 0.5, 0.9), _uniform(rng, 0.5, 0.9)), ("a", "b"), True
    ),
    Case("periodic_stencil", periodic_stencil, lambda rng: (rng.standard_normal(9), 0.2, 6), ("u0", "k"), True),
    Case("wrapped_neighbours", wrapped_neighbours, lambda rng: (rng.standard_normal(6), 0.7), ("x", "w"), True),
    Case("index_after_loop", index_after_loop, lambda rng: (rng.standard_normal(7),), ("x",), True),
    Case("shifting_offset", shifting_offset, lambda rng: (rng.standard_normal(7),), ("x",), True),
    # LU with partial pivoting (the benchmark's own function): row swaps and triangular nests, whose
    # records the tape reserves per step of k (the nest's trip counts are known there)
    Case("lu_logdet_pivoting", gradbench_workloads.lu_logdet, lambda rng: (rng.standard_normal((6, 6)),), ("A",), True),
    # a `while True:` ended by its `break`: records reserved once per 64 iterations, the break ending both loops
    Case(
        "particle_while_break",
        gradbench_workloads.particle_loss,
        lambda rng: (rng.uniform(0.0, 0.5, 3), 0.05),
        ("w",),
        True,
    ),
    Case(
        "nearest_centroid",
        nearest_centroid,
        lambda rng: (rng.standard_normal((7, 3)), rng.standard_normal((4, 3))),
        ("points", "centroids"),
        True,
    ),
    Case(
        "loop_variable_after_loop",
        loop_variable_after_loop,
        lambda rng: (rng.standard_normal(7), 0.8),
        ("x", "w"),
        True,
    ),
    Case("heat_swap", heat_swap, lambda rng: (rng.standard_normal(12), 0.2, 15), ("u0", "kappa"), True),
    Case(
        "reassigned_in_prefix",
        reassigned_in_prefix,
        lambda rng: (rng.standard_normal(6), rng.standard_normal(6)),
        ("a", "x"),
        True,
    ),
    Case("crossed_writes", crossed_writes, lambda rng: (rng.standard_normal(8),), ("x",), True),
    Case("periodic_reread", periodic_reread, lambda rng: (rng.standard_normal(7), 0.3, 4), ("u0",), True),
    Case(
        "pairwise_steps",
        pairwise_steps,
        lambda rng: (rng.standard_normal(5), 0.1 * rng.standard_normal(5), 0.05, 3),
        ("p0", "v0"),
        True,
    ),
    # a loop that runs no iteration between loops that record (its records count as 0, not -1)
    Case(
        "empty_loop_between_records",
        idioms.empty_loop_between_records,
        lambda rng: (rng.standard_normal(6), 1),
        ("x",),
        True,
    ),
    Case(
        "full_loop_between_records",
        idioms.empty_loop_between_records,
        lambda rng: (rng.standard_normal(6), 5),
        ("x",),
        True,
    ),
    # a `# sourcead: checkpoint` loop: snapshots and replays instead of records (checkpoint.py)
    Case("heat_marked", checkpointing.heat_marked, lambda rng: (rng.standard_normal(12), 0.2, 15), ("u0", "k"), True),
    # RK4's stages, filled by each step before it reads them: snapshots of y alone (coverage.py)
    Case("rk4_marked", checkpointing.rk4_stages, lambda rng: (0.5 + 0.2 * rng.random(7), 11), ("x",), True),
    Case(
        "parallel_steps_marked",
        checkpointing.parallel_steps,
        lambda rng: (rng.standard_normal(30), 0.15, 9),
        ("u0", "k"),
        True,
    ),
    # online checkpointing: a marked `while` loop whose condition needs a call
    Case(
        "heat_until_marked",
        checkpointing.heat_until,
        lambda rng: (rng.standard_normal(12), 0.2, 0.3, 40),
        ("u0", "k"),
        True,
    ),
    # nested marked loops: the inner loop checkpointed inside each replayed outer step
    Case(
        "nested_marked", checkpointing.nested_steps, lambda rng: (rng.standard_normal(10), 0.2, 3, 4), ("u0", "k"), True
    ),
    Case("while_in_for", while_in_for, lambda rng: (rng.uniform(0.2, 6.0, 6),), ("x",), True),
    Case(
        "calls_helpers", calls_helpers, lambda rng: (rng.standard_normal(5), _uniform(rng, 0.5, 1.5)), ("x", "y"), True
    ),
    Case(
        "calls_across_modules",
        calls_across_modules,
        lambda rng: (rng.uniform(0.2, 3.0, 6), _uniform(rng, 0.5, 1.5)),
        ("x", "w"),
        True,
    ),
    Case("constant_loop", constant_loop, lambda rng: (rng.standard_normal(5), rng.standard_normal(4)), ("x",), True),
    # whole-array NumPy (kinds of the free parameters come from the arguments)
    Case(
        "gaussian_loglik",
        vectorized.gaussian_loglik,
        lambda rng: (rng.standard_normal(7), 0.2, _uniform(rng, 0.8, 1.5)),
        ("x", "mu", "sigma"),
        True,
    ),
    Case("logsumexp_vec", vectorized.logsumexp, lambda rng: (rng.standard_normal(8),), ("x",), True),
    Case(
        "softplus_mean",
        vectorized.softplus_mean,
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3), 0.3),
        ("x", "w", "b"),
        True,
    ),
    Case("centered_squares", vectorized.centered_squares, lambda rng: (rng.standard_normal(6),), ("x",), True),
    Case(
        "elementwise_map",
        vectorized.elementwise_map,
        lambda rng: (rng.standard_normal(5), rng.standard_normal(5)),
        ("x", "y"),
        False,
    ),
    Case(
        "wrapped_lines", wrapped_lines, lambda rng: (rng.standard_normal(5), _uniform(rng, 0.5, 1.5)), ("x", "y"), True
    ),
    Case("calls_a_procedure", calls_a_procedure, lambda rng: (rng.standard_normal(5), 0.7), ("x", "c"), True),
    Case(
        "least_squares_vec",
        vectorized.least_squares,
        lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal(5)),
        ("A", "x", "b"),
        True,
    ),
    Case(
        "mlp_layer",
        vectorized.mlp_layer,
        lambda rng: (
            rng.standard_normal((4, 3)),
            rng.standard_normal(3),
            rng.standard_normal(4),
            rng.standard_normal(4),
        ),
        ("W", "x", "b", "v"),
        True,
    ),
    Case(
        "logistic_regression",
        vectorized.logistic_regression,
        lambda rng: (rng.standard_normal(3), rng.standard_normal((6, 3)), np.sign(rng.standard_normal(6))),
        ("w",),
        True,
    ),
    Case(
        "relu_norm",
        vectorized.relu_norm,
        lambda rng: (rng.uniform(0.1, 1.0, 7) * rng.choice([-1.0, 1.0], 7), 0.05),
        ("x", "t"),
        True,
    ),
    Case(
        "softmax_cross_entropy",
        vectorized.softmax_cross_entropy,
        lambda rng: (rng.standard_normal(6), 2),
        ("logits",),
        True,
    ),
    Case(
        "finite_differences", vectorized.finite_differences, lambda rng: (rng.standard_normal(9), 0.1), ("x", "h"), True
    ),
    Case("slice_update", vectorized.slice_update, lambda rng: (rng.standard_normal(9),), ("x",), True),
    Case(
        "column_products",
        vectorized.column_products,
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(4)),
        ("A", "v"),
        True,
    ),
    Case(
        "linear_algebra_mix",
        vectorized.linear_algebra_mix,
        lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal(3)),
        ("A", "x", "y"),
        True,
    ),
    Case(
        "axis_reductions",
        vectorized.axis_reductions,
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3)),
        ("X", "w"),
        True,
    ),
    Case(
        "selections",
        vectorized.selections,
        lambda rng: (np.array([-0.8, -0.31, 0.05, 0.41, 0.66, 1.23, 0.97]), -0.5, _uniform(rng, 0.5, 1.5)),
        ("x", "lo", "y"),
        True,
    ),
    Case(
        "reshaped",
        vectorized.reshaped,
        lambda rng: (rng.standard_normal(6), rng.standard_normal((4, 3))),
        ("x", "W"),
        True,
    ),
    Case(
        "softplus_regression",
        vectorized.softplus_regression,
        lambda rng: (rng.standard_normal(3), rng.standard_normal((6, 3)), rng.uniform(0.0, 1.0, 6), 0.1),
        ("w", "lam"),
        True,
    ),
]

# the constructs issue 11 found wrong, crashing or wrongly rejected (findings.py)
_EDGES = np.array([[0, 1], [1, 2], [3, 4], [4, 0], [2, 2]])
ZOO += [
    Case(
        "accumulate_constants",
        findings.accumulate_constants,
        lambda rng: (_uniform(rng, 1.0, 2.0), rng.standard_normal(3), 2),
        ("p", "y0"),
        True,
    ),
    Case(
        "three_way_min_max",
        findings.three_way_min_max,
        lambda rng: (_uniform(rng, 1.1, 1.3), _uniform(rng, 0.4, 0.6), _uniform(rng, 1.9, 2.1)),
        ("a", "b", "c"),
        True,
    ),
    Case(
        "tuple_values", findings.tuple_values, lambda rng: (_uniform(rng, 1, 2), _uniform(rng, 1, 2)), ("a", "b"), True
    ),
    Case(
        "tuple_helpers",
        findings.tuple_helpers,
        lambda rng: (_uniform(rng, 1, 2), _uniform(rng, 1, 2)),
        ("p", "q"),
        True,
    ),
    Case(
        "accumulated_then_restored",
        findings.accumulated_then_restored,
        lambda rng: (rng.standard_normal(5), 0.7),
        ("x", "w"),
        True,
    ),
    Case(
        "selected_times_array",
        findings.selected_times_array,
        lambda rng: (0.7, rng.standard_normal((3, 4))),
        ("r", "B"),
        True,
    ),
    Case("evaluation_order", findings.evaluation_order, lambda rng: (rng.standard_normal(3),), ("x0",), True),
    Case(
        "recurrent_rows",
        findings.recurrent_rows,
        lambda rng: (rng.standard_normal((4, 3)), 0.3 * rng.standard_normal((3, 2)), rng.standard_normal(2)),
        ("inputs", "W", "h0"),
        True,
    ),
    Case(
        "records_after_loop",
        findings.records_after_loop,
        lambda rng: (0.3 * rng.standard_normal(5), _uniform(rng, 0.5, 0.8)),
        ("x", "a"),
        True,
    ),
    Case(
        "generated_looking_names",
        findings.generated_looking_names,
        lambda rng: tuple(_uniform(rng, 0.2, 1.5) for _ in range(4)),
        ("x", "x_bar", "x_dot", "tape"),
        True,
    ),
    Case("infinities", findings.infinities, lambda rng: (rng.standard_normal(5),), ("x",), True),
    Case(
        "flat_branch",
        findings.flat_branch,
        lambda rng: (_uniform(rng, -0.6, -0.3), _uniform(rng, 0.5, 1.5)),
        ("v", "w"),
        True,
    ),
    Case(
        "edge_sums",
        findings.edge_sums,
        lambda rng: (rng.standard_normal(5), _EDGES.copy(), rng.standard_normal(5)),
        ("x", "weights"),
        True,
    ),
    Case(
        "store_a_float",
        findings.store_a_float,
        lambda rng: (rng.standard_normal(3), _uniform(rng, 0.5, 1)),
        ("y0", "p"),
        True,
    ),
    Case(
        "broadcasting_rules",
        findings.broadcasting_rules,
        lambda rng: (rng.standard_normal((3, 4)), _uniform(rng, 0.2, 1.0, 4), _uniform(rng, 1.1, 1.5)),
        ("A", "x", "p"),
        True,
    ),
    Case(
        "widened_tangent",
        findings.widened_tangent,
        lambda rng: (_uniform(rng, 0.5, 1), rng.standard_normal(4), rng.standard_normal((3, 4))),
        ("v",),
        True,
    ),
    Case("returned_rename", findings.returned_rename, lambda rng: (rng.standard_normal(5), 4), ("x",), False),
    Case(
        "lowered_in_context",
        findings.lowered_in_context,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, 4)),
        ("X", "x"),
        True,
    ),
    Case(
        "pruned_branch",
        findings.pruned_branch,
        lambda rng: (rng.standard_normal(3), rng.standard_normal(2)),
        ("xs",),
        True,
    ),
    Case(
        "argument_by_reference",
        findings.argument_by_reference,
        lambda rng: (rng.standard_normal((3, 4)), _uniform(rng, 0.5, 1.0)),
        ("K", "a"),
        True,
    ),
    Case(
        "shifted_slice_in_parallel",
        findings.shifted_slice_in_parallel,
        lambda rng: (rng.standard_normal(4000), _uniform(rng, 0.5, 1.5)),
        ("y0", "a"),
        True,
    ),
    Case(
        "tangent_of_a_new_array",
        findings.tangent_of_a_new_array,
        lambda rng: (rng.standard_normal(3),),
        ("data0",),
        True,
    ),
    Case(
        "trip_count_of_a_difference",
        findings.trip_count_of_a_difference,
        lambda rng: (_uniform(rng, 0.5, 0.9), _uniform(rng, 0.5, 1.5), rng.uniform(0.0, 1.0, 5)),
        ("c", "h"),
        True,
    ),
    Case(
        "last_prefix_value",
        findings.last_prefix_value,
        lambda rng: (rng.standard_normal(6), _uniform(rng, 0.5, 1.5)),
        ("a", "w"),
        True,
    ),
    Case(
        "unchosen_infinite_partial",
        findings.unchosen_infinite_partial,
        lambda rng: (rng.standard_normal(3), _uniform(rng, 0.5, 1.5)),
        ("y", "x"),
        True,
    ),
    Case(
        "whole_arrays_under_max",
        findings.whole_arrays_under_max,
        lambda rng: (rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)),
        ("a", "v"),
        True,
    ),
    Case(
        "index_before_its_loop",
        findings.index_before_its_loop,
        lambda rng: (rng.standard_normal(7), _uniform(rng, 0.5, 1.5)),
        ("x", "w"),
        True,
    ),
    Case(
        "checkpointed_array_result",
        findings.checkpointed_array_result,
        lambda rng: (rng.standard_normal(7), _uniform(rng, 0.5, 1.5)),
        ("data", "c"),
        False,
    ),
    Case(
        "parallel_slots_in_a_marked_loop",
        findings.parallel_slots_in_a_marked_loop,
        lambda rng: (rng.standard_normal(12), 0.2, 7),
        ("u0", "kappa"),
        True,
    ),
    Case(
        "shape_in_index",
        findings.shape_in_index,
        lambda rng: (_uniform(rng, 0.2, 2.8, 2), rng.standard_normal((3, 2))),
        ("A",),
        True,
    ),
    Case(
        "untyped_branch",
        findings.untyped_branch,
        lambda rng: (_uniform(rng, 0.2, 0.6), _uniform(rng, 1, 2)),
        ("a", "b"),
        True,
    ),
]

# the idioms numba users write first (idioms.py)
ZOO += [
    Case(
        "loop_over_elements",
        idioms.loop_over_elements,
        lambda rng: (rng.standard_normal(5), rng.standard_normal(5)),
        ("x", "w"),
        True,
    ),
    Case(
        "loop_over_pairs",
        idioms.loop_over_pairs,
        lambda rng: (rng.standard_normal(4), rng.standard_normal(5)),
        ("x", "y"),
        True,
    ),
    Case(
        "loop_over_rows",
        idioms.loop_over_rows,
        lambda rng: (rng.standard_normal((3, 4)), rng.standard_normal(4)),
        ("A", "w"),
        True,
    ),
    Case(
        "ufunc_names",
        idioms.ufunc_names,
        lambda rng: (_uniform(rng, 0.5, 1.5, 4), _uniform(rng, 0.5, 1.5, 4)),
        ("x", "y"),
        True,
    ),
    Case(
        "special_functions",
        idioms.special_functions,
        lambda rng: (_uniform(rng, -0.5, 0.5, 4), rng.integers(0, 5, 4).astype(np.float64)),
        ("x",),
        True,
    ),
    Case(
        "new_axes",
        idioms.new_axes,
        lambda rng: (rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal((3, 4))),
        ("x", "y", "A"),
        True,
    ),
    Case(
        "elements_of_values",
        idioms.elements_of_values,
        lambda rng: (rng.standard_normal((3, 3)), rng.standard_normal(3)),
        ("A", "x"),
        True,
    ),
    Case(
        "defaults_and_constants",
        idioms.defaults_and_constants,
        lambda rng: (rng.standard_normal(4),),
        ("x",),
        True,
    ),
    Case(
        "reductions_and_statistics",
        idioms.reductions_and_statistics,
        lambda rng: (rng.standard_normal((3, 4)), rng.standard_normal(5)),
        ("X", "x"),
        True,
    ),
    Case(
        "rows_as_arrays",
        idioms.rows_as_arrays,
        lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal((2, 3)), rng.standard_normal(3)),
        ("points", "centroids", "w"),
        True,
    ),
    Case(
        "rows_in_prange",
        idioms.rows_in_prange,
        lambda rng: (
            rng.standard_normal((3, 3)),
            rng.standard_normal((3, 2)),
            np.array([[0, 1], [1, 0], [2, 2], [0, 0]]),
        ),
        ("cams", "X"),
        True,
    ),
]

# stencils at constant offsets, whose adjoints are gathered (stencils.py, gather.py)
ZOO += [
    Case("wide_stencil", stencils.wide_stencil, lambda rng: (rng.standard_normal(11), 0.2, 4), ("u0", "c"), True),
    Case("five_point", stencils.five_point, lambda rng: (rng.standard_normal((6, 7)), 0.15, 3), ("u0", "kappa"), True),
    Case("one_sided", stencils.one_sided, lambda rng: (rng.standard_normal(8), 0.7, 1), ("x", "w"), True),
    Case("short_range", stencils.short_range, lambda rng: (rng.standard_normal(5), 0.6), ("x", "k"), True),
    Case("rosenbrock_chain", stencils.rosenbrock, lambda rng: (rng.uniform(-1.0, 1.0, 7),), ("x",), True),
    Case("marked_stencil", stencils.marked_stencil, lambda rng: (rng.standard_normal(7), 0.4), ("x", "c"), True),
    Case(
        "laplacian_scalar",
        stencils.laplacian_scalar,
        lambda rng: (rng.standard_normal((5, 6)), 0.15, 2),
        ("u0", "kappa"),
        True,
    ),
    Case(
        "rows_in_prange_stencil",
        stencils.rows_in_prange,
        lambda rng: (rng.standard_normal((6, 5)), 0.15, 3),
        ("u0", "kappa"),
        True,
    ),
    Case("written_twice", stencils.written_twice, lambda rng: (rng.standard_normal(6), 0.8), ("x", "a"), True),
    Case("ring", stencils.ring, lambda rng: (rng.standard_normal(6), 0.3, 3), ("x", "k"), True),
    Case("ring_in_prange", stencils.ring_in_prange, lambda rng: (rng.standard_normal(6), 0.3, 3), ("x", "k"), True),
    Case("ring_product", stencils.ring_product, lambda rng: (rng.standard_normal(5), 0.7), ("x", "k"), True),
    Case(
        "ring_rows_in_prange",
        stencils.ring_rows_in_prange,
        lambda rng: (rng.standard_normal((5, 4)), 0.15, 3),
        ("u0", "kappa"),
        True,
    ),
    Case(
        "modulo_reaction",
        stencils.modulo_reaction,
        lambda rng: (rng.standard_normal((5, 4)), rng.standard_normal((5, 4)), 0.04, 3),
        ("u0", "v0", "feed"),
        True,
    ),
    Case("scalar_sums", stencils.scalar_sums, lambda rng: (rng.standard_normal(7), 0.9, 0.3, 4), ("x", "a", "b"), True),
]

# issue 38, in-place updates of whole arrays and slices (outsiders_inplace.py)
ZOO += [
    Case(
        "add_inplace_copied",
        outsiders_inplace.add_inplace_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, (3, 4))),
        ("C0", "B"),
        True,
    ),
    Case(
        "through_helper_copied",
        outsiders_inplace.through_helper_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, (3, 4))),
        ("C0", "B"),
        True,
    ),
    Case(
        "two_helper_levels_copied",
        outsiders_inplace.two_helper_levels_copied,
        lambda rng: (_uniform(rng, 0.2, 0.6, (3, 4)), _uniform(rng, 0.2, 0.6, (3, 4))),
        ("C0", "B"),
        True,
    ),
    Case(
        "every_operator_copied",
        outsiders_inplace.every_operator_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, 5), _uniform(rng, 0.5, 1.5, 5), _uniform(rng, 0.5, 1.0)),
        ("x0", "y", "a"),
        True,
    ),
    Case(
        "reads_its_target_copied",
        outsiders_inplace.reads_its_target_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 2)), _uniform(rng, 0.5, 1.5, (3, 2))),
        ("C0", "B"),
        True,
    ),
    Case(
        "local_arrays",
        outsiders_inplace.local_arrays,
        lambda rng: (_uniform(rng, 0.5, 1.5, 4), _uniform(rng, 0.5, 1.5, 4)),
        ("x", "y"),
        True,
    ),
    Case(
        "helper_returns_it_copied",
        outsiders_inplace.helper_returns_it_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, 4), _uniform(rng, 0.5, 1.5, 4)),
        ("x0", "y"),
        True,
    ),
    Case(
        "float_parameters",
        outsiders_inplace.float_parameters,
        lambda rng: (_uniform(rng, 0.5, 1.5, 4),),
        ("x",),
        True,
    ),
    Case(
        "rebound_in_helper",
        outsiders_inplace.rebound_in_helper,
        lambda rng: (_uniform(rng, 0.5, 1.5, (2, 3)),),
        ("C",),
        True,
    ),
    Case(
        "slices_inplace_copied",
        outsiders_inplace.slices_inplace_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, 6), _uniform(rng, 0.5, 1.5, 6), _uniform(rng, 0.4, 0.8)),
        ("x0", "y", "a"),
        True,
    ),
    Case(
        "rows_and_columns_copied",
        outsiders_inplace.rows_and_columns_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, 4), _uniform(rng, 0.2, 0.6)),
        ("A0", "b", "a"),
        True,
    ),
    Case(
        "broadcast_updates_copied",
        outsiders_inplace.broadcast_updates_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, 4), _uniform(rng, 0.1, 0.4)),
        ("A0", "b", "a"),
        True,
    ),
    Case(
        "rows_in_helpers_copied",
        outsiders_inplace.rows_in_helpers_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (3, 4)), _uniform(rng, 0.5, 1.5, 3)),
        ("A0", "s"),
        True,
    ),
    Case(
        "in_time_loop_copied",
        outsiders_inplace.in_time_loop_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, 5), _uniform(rng, 0.5, 1.5, 5), _uniform(rng, 0.01, 0.1)),
        ("u0", "a", "c"),
        True,
    ),
    Case(
        "prange_rows_copied",
        outsiders_inplace.prange_rows_copied,
        lambda rng: (_uniform(rng, 0.5, 1.5, (4, 3)), _uniform(rng, 0.5, 1.5, 3)),
        ("A0", "x"),
        True,
    ),
    Case(
        "trmm_copied",
        outsiders_inplace.trmm_copied,
        lambda rng: (_uniform(rng, 0.5, 1.0), _uniform(rng, 0.5, 1.5, (3, 3)), _uniform(rng, 0.5, 1.5, (3, 4))),
        ("alpha", "A", "B0"),
        True,
    ),
    Case(
        "symm_copied",
        outsiders_inplace.symm_copied,
        lambda rng: (
            _uniform(rng, 0.5, 1.0),
            _uniform(rng, 0.5, 1.0),
            _uniform(rng, 0.5, 1.5, (3, 4)),
            _uniform(rng, 0.5, 1.5, (3, 3)),
            _uniform(rng, 0.5, 1.5, (3, 4)),
        ),
        ("alpha", "beta", "C0", "A", "B"),
        True,
    ),
    Case(
        "swapped_buffers",
        outsiders_inplace.swapped_buffers,
        lambda rng: (_uniform(rng, 0.5, 1.5, 5), _uniform(rng, 0.5, 0.9)),
        ("x0", "a"),
        True,
    ),
]


# issue 38, written arguments rebound or swapped: outputs follow the caller's memory (outsiders_outputs.py);
# the programs whose caller's arrays are written (extra outputs) are checked by test_outsiders_outputs.py
ZOO += [
    Case("rebind_then_write", outsiders_outputs.rebind_then_write, lambda rng: (0.5 + rng.random(5),), ("x",), True),
    Case(
        "swap_then_write_other",
        outsiders_outputs.swap_then_write_other,
        lambda rng: (0.5 + rng.random(5),),
        ("x",),
        True,
    ),
]


# issue 38, helpers' fresh arrays and loop rows, then written (outsiders_views.py)
ZOO += [
    Case(
        "view_argument_dead_before_a_swap",
        outsiders_views.view_argument_dead_before_a_swap,
        lambda rng: (rng.standard_normal((3, 4)), 0.7),
        ("A0", "a"),
        True,
    ),
    Case(
        "helper_fresh_then_written",
        outsiders_views.helper_fresh_then_written,
        lambda rng: (rng.standard_normal(5),),
        ("x",),
        True,
    ),
    Case(
        "helper_pair_then_written",
        outsiders_views.helper_pair_then_written,
        lambda rng: (rng.standard_normal(5),),
        ("x",),
        True,
    ),
    Case(
        "helpers_two_levels_then_written",
        outsiders_views.helpers_two_levels_then_written,
        lambda rng: (rng.standard_normal(5),),
        ("x",),
        True,
    ),
    Case(
        "helper_fresh_in_loop_then_written",
        outsiders_views.helper_fresh_in_loop_then_written,
        lambda rng: (rng.standard_normal(5),),
        ("x",),
        True,
    ),
    Case(
        "rows_read_then_written",
        outsiders_views.rows_read_then_written,
        lambda rng: (rng.standard_normal((4, 3)),),
        ("A",),
        True,
    ),
    Case(
        "enumerated_rows_then_written",
        outsiders_views.enumerated_rows_then_written,
        lambda rng: (rng.standard_normal((4, 3)),),
        ("A",),
        True,
    ),
    Case(
        "zipped_rows_then_written",
        outsiders_views.zipped_rows_then_written,
        lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal((3, 3))),
        ("P", "Q"),
        True,
    ),
    Case(
        "rows_read_in_time_loop_then_written",
        outsiders_views.rows_read_in_time_loop_then_written,
        lambda rng: (rng.standard_normal((4, 3)),),
        ("A",),
        True,
    ),
    Case(
        "helper_rows_in_loop_then_written",
        outsiders_views.helper_rows_in_loop_then_written,
        lambda rng: (rng.standard_normal((4, 3)),),
        ("A",),
        True,
    ),
    Case(
        "rows_written_once_read",
        outsiders_views.rows_written_once_read,
        lambda rng: (rng.standard_normal((4, 3)),),
        ("A",),
        True,
    ),
    Case(
        "prange_rows_then_written",
        outsiders_views.prange_rows_then_written,
        lambda rng: (rng.standard_normal((5, 3)),),
        ("A",),
        True,
    ),
]


# issue 38, odd calls (outsiders_calls.py)
ZOO += [
    Case(
        "big_endian_gather",
        outsiders_calls.gather_squares,
        lambda rng: (rng.standard_normal(6), np.array([0, 2, 2, 5, 1], dtype=">i8")),
        ("x",),
        True,
    ),
    Case(
        "float32_weights",
        outsiders_calls.weighted_squares,
        lambda rng: (rng.standard_normal(5), rng.uniform(0.5, 2.0, 5).astype(np.float32)),
        ("x",),
        True,
    ),
]


# issue 38, prange loops that race, and prange beside whole-array records (outsiders_prange.py)
ZOO += [
    Case(
        "prange_beside_whole_record",
        outsiders_prange.prange_beside_whole_record,
        lambda rng: (rng.standard_normal(5), 0.7, 4),
        ("x", "b"),
        True,
    ),
    Case(
        "prange_histogram",
        outsiders_prange.prange_histogram,
        lambda rng: (rng.standard_normal(40), rng.integers(0, 3, size=40), 3),
        ("x",),
        True,
    ),
    Case("prange_product", outsiders_prange.prange_product, lambda rng: (rng.uniform(0.5, 1.5, 30),), ("x",), True),
    Case(
        "prange_running_sum", outsiders_prange.prange_running_sum, lambda rng: (rng.standard_normal(30),), ("x",), True
    ),
    Case("prange_recurrence", outsiders_prange.prange_recurrence, lambda rng: (rng.standard_normal(30),), ("x",), True),
    Case("prange_last_value", outsiders_prange.prange_last_value, lambda rng: (rng.standard_normal(30),), ("x",), True),
]


# issue 38, norms at zero along axes, scalars into rows (outsiders_rules.py)
ZOO += [
    Case("norms_of_rows_at_zero", outsiders_rules.norms_of_rows_at_zero,
         lambda rng: (outsiders_rules.zero_row_and_column(rng),), ("B",), False),
    Case("norms_of_columns_at_zero", outsiders_rules.norms_of_columns_at_zero,
         lambda rng: (outsiders_rules.zero_row_and_column(rng),), ("B",), False),
    Case("norms_of_a_zero_vector", outsiders_rules.norms_of_a_zero_vector,
         lambda rng: (np.zeros(4), _uniform(rng, 0.5, 1.0)), ("x", "y"), False),
    Case("scalars_into_rows", outsiders_rules.scalars_into_rows,
         lambda rng: (rng.standard_normal(5), _uniform(rng, 0.5, 1.0)), ("x", "s"), True),
    Case("scalars_into_rows_prange", outsiders_rules.scalars_into_rows_prange,
         lambda rng: (rng.standard_normal(6), _uniform(rng, 0.5, 1.0)), ("x", "w"), True),
    Case("scalars_into_3d", outsiders_rules.scalars_into_3d, lambda rng: (rng.standard_normal(4),), ("x",), True),
    Case("rows_into_rows", outsiders_rules.rows_into_rows,
         lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3)), ("A", "v"), True),
    Case("products_into_rows", outsiders_rules.products_into_rows,
         lambda rng: (rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((3, 1))),
         ("A", "x", "v"), True),
    Case("fdtd_rows", outsiders_rules.fdtd_rows,
         lambda rng: (rng.standard_normal(3), *(rng.standard_normal((4, 5)) for _ in range(3))),
         ("fict", "ex0", "ey0", "hz0"), False),
]  # fmt: skip


# Zoo functions second order refuses, with a positioned error: np.prod, math.lgamma and np.sort of a
# value carrying a derivative (NO_SECOND_ORDER), and a slice read as a view of an array the same
# statement writes (the forward code's view, which reverse mode does not support yet)
NO_HVP_PRIMITIVE = ("linear_algebra_mix", "reshaped", "special_functions", "reductions_and_statistics")
# Known wrong, nan: second order of a min whose operand not chosen has an infinite partial. Its
# forward code selects with an `if`, and reverse mode over it multiplies the 0.0 adjoint of the
# statement `t2 = acc / t0` (read only in the branch not taken) by its infinite partial: 0 * inf
# across statements, which first-order reverse mode shares where a user writes the `if` (within one
# expression a selection's condition wraps whole contributions: linearize.adjoint)
NAN_ACROSS_STATEMENTS = ("unchosen_infinite_partial",)
# Refused: second order of an update of a slice that reads a slice of the same array (`x[1:] *= 0.5`,
# `x[1:] += x[:-1]`): the forward code binds the slice read to a temporary, a view of the array it writes
NO_HVP = (*NO_HVP_PRIMITIVE, "shifted_slice_in_parallel", "slices_inplace_copied", *NAN_ACROSS_STATEMENTS)
