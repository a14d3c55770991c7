"""Benchmark workloads: loop-style functions in the subset sourcead supports today.

Each is a plain module-level ``def`` (sourcead reads its source) with deterministic inputs.
A new entry in ``WORKLOADS`` is picked up by ``python -m benchmarks.run`` with no other change.

``overwritten(*args)`` counts, for one call, the assignments that replace a value the program
held before: a scalar assigned again (``+=`` included; its first binding and ``for`` counters
excluded) or an array element written when it already held a value (from an argument, an
allocation or an earlier write). Rebinding array names (``u, v = v, u``) moves no value.
``needed(*args)`` counts the overwritten values that the adjoint reads afterwards: the least a
tape can hold if nothing is recomputed. Both are analytic; ``counts`` states the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from examples.heat import example_args as heat_args
from examples.heat import heat_loss


@dataclass(frozen=True)
class Workload:
    """One function to time, its inputs and what to differentiate."""

    name: str
    func: Callable
    make_args: Callable[[], tuple]  # deterministic: same arguments in every process
    wrt: tuple[str, ...]
    size: str  # human-readable problem size for the table
    overwritten: Callable[..., int] | None = None  # overwritten values in one call (see above)
    needed: Callable[..., int] | None = None  # of those, the ones the adjoint reads
    counts: str = ""  # the two formulas, for the tape table's notes


def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def logsumexp_loop(x):
    # no max-shift (that needs a branch): inputs are kept in [-1, 1]
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        s += math.exp(x[i])
    q = 0.0
    for i in range(n):
        q += x[i] * x[i]
    return math.log(s) + 0.5 * q / float(n)


def logistic_map(r, x0):
    # r = 3.2 sits on the stable 2-cycle, so 1000 steps keep a finite, meaningful derivative
    x = x0
    for _k in range(1000):
        x = r * x * (1.0 - x)
    return x


def dense_tanh(W, x):
    s = 0.0
    for i in range(W.shape[0]):
        a = 0.0
        for j in range(W.shape[1]):
            a += W[i, j] * x[j]
        s += math.tanh(a)
    return s


def heat_while(u0, kappa, n_steps):
    # heat_swap as a while loop: the compiler does not know its step count (online checkpointing)
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros(n)
    step = 0
    while step < n_steps:
        v[0] = u[0]
        v[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
        step += 1
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return 0.5 * s


def heat_swap(u0, kappa, n_steps):
    # explicit Euler with two buffers that exchange roles every step (as tests/programs/zoo.py)
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


def recurrence(r, x0, n_steps):
    # the logistic map with the step count as an argument; r = 3.2: stable 2-cycle
    x = x0
    for _k in range(n_steps):
        x = r * x * (1.0 - x)
    return x


def newton_sqrt_sum(x):
    # a while loop per element, its trip count depends on the data
    s = 0.0
    for i in range(x.shape[0]):
        a = x[i]
        y = a
        while abs(y * y - a) > 1e-13 * a:
            y = 0.5 * (y + a / y)
        s += y
    return s


def first_passage(x, limit):
    # a loop left by break, and a loop left by an early return (as tests/programs/zoo.py)
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


# NPBench-style kernels (issue 40, item 4): row dot products in loops, matrix-vector products
# under np.sum, a linear stencil; written as NPBench's numba versions write them


def trisolv(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - np.dot(L[i, :i], x[:i])) / L[i, i]
    return np.sum(x)


def cholesky(A0):
    A = A0.copy()
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.sum(A)


def lu(A0):
    A = A0.copy()
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return np.sum(A)


def atax(A, x):
    return np.sum((A @ x) @ A)


def bicg(A, p, r):
    return np.sum(r @ A) + np.sum(A @ p)


def jacobi_1d(TSTEPS, A0, B0):
    A = A0.copy()
    B = B0.copy()
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return np.sum(A) + np.sum(B)


def _spd(n):
    m = np.random.default_rng(40).standard_normal((n, n))
    return (m @ m.T + n * np.eye(n),)


def _lower(n):
    rng = np.random.default_rng(40)
    return np.tril(rng.standard_normal((n, n))) + n * np.eye(n), rng.standard_normal(n)  # well conditioned


def _matrix_vectors(m, n, k):
    rng = np.random.default_rng(40)
    return (rng.standard_normal((m, n)), *(rng.standard_normal(size) for size in (n, m)[:k]))


def _heat_swap_args(n_points=400, n_steps=3000):
    u0, kappa, _ = heat_args(n_points)
    return u0, kappa, n_steps


def _newton_trips(x):
    """Newton steps of each element (the primal's while loop, in plain Python)."""
    trips = []
    for a in x.tolist():
        y, k = a, 0
        while abs(y * y - a) > 1e-13 * a:
            y, k = 0.5 * (y + a / y), k + 1
        trips.append(k)
    return trips


def _passage_trips(x, limit):
    """Iterations run by first_passage's two loops (each counts the one that leaves)."""
    s = np.cumsum(x * x)
    t = np.cumsum(np.exp(0.1 * x))
    k1 = int(np.argmax(s > limit)) + 1 if s[-1] > limit else x.shape[0]
    k2 = int(np.argmax(t > 2.0 * limit)) + 1 if t[-1] > 2.0 * limit else x.shape[0]
    return k1, k2


def _vector(n):
    return (np.sin(0.37 * np.arange(n)),)


def _dense_args(m=128, n=128):
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    W = np.cos(0.11 * i + 0.07 * j) / math.sqrt(n)
    x = np.sin(0.23 * np.arange(n))
    return W, x


def _passage_args(n=100_000, limit=20_000.0):
    # mean x**2 is ~1/2: the first loop breaks near i = 40 000, the second returns near the same
    return np.sin(0.37 * np.arange(n)), limit


WORKLOADS = (
    Workload(
        "heat",
        heat_loss,
        heat_args,
        ("u0", "kappa"),
        "200 points x 200 steps",
        # every step writes v[1:n-1] (over the previous step's) and copies it back over u[1:n-1];
        # the adjoint reads the old u (kappa's partial), never the old v; s += runs n times
        overwritten=lambda u0, kappa, steps: 2 * steps * (u0.shape[0] - 2) + u0.shape[0],
        needed=lambda u0, kappa, steps: steps * (u0.shape[0] - 2),
        counts="2 * steps * (n-2) + n  /  steps * (n-2): the old u under the copy-back",
    ),
    Workload(
        "heat_swap",
        heat_swap,
        _heat_swap_args,
        ("u0", "kappa"),
        "400 points x 3000 steps",
        # each step writes all n elements of v, which held the state two steps back (zeros at
        # step 0); the adjoint of step k reads state k, so the states 0 .. steps-2 are needed
        overwritten=lambda u0, kappa, steps: steps * u0.shape[0] + u0.shape[0],
        needed=lambda u0, kappa, steps: (steps - 1) * u0.shape[0],
        counts="steps * n + n (s)  /  (steps-1) * n: the states 0..steps-2, not the zeros",
    ),
    Workload(
        "heat_swap_u0",
        heat_swap,
        _heat_swap_args,
        ("u0",),
        "400 points x 3000 steps",
        # the same writes; with kappa constant the stencil is linear in u: its adjoint reads no u
        overwritten=lambda u0, kappa, steps: steps * u0.shape[0] + u0.shape[0],
        needed=lambda u0, kappa, steps: 0,
        counts="steps * n + n  /  0: linear in u, the adjoint reads only kappa",
    ),
    Workload(
        "sum_squares",
        sum_squares,
        lambda: _vector(100_000),
        ("x",),
        "n = 100000",
        overwritten=lambda x: x.shape[0],
        needed=lambda x: 0,
        counts="n (s +=)  /  0: the adjoint of s += x[i]**2 reads x, not s",
    ),
    Workload(
        "logsumexp",
        logsumexp_loop,
        lambda: _vector(100_000),
        ("x",),
        "n = 100000",
        overwritten=lambda x: 2 * x.shape[0],
        needed=lambda x: 0,
        counts="2n (s +=, q +=)  /  0: only the final s and q are read",
    ),
    Workload(
        "logistic_map",
        logistic_map,
        lambda: (3.2, 0.3),
        ("r", "x0"),
        "1000 steps",
        overwritten=lambda r, x0: 1000,
        needed=lambda r, x0: 1000,
        counts="steps  /  steps: each step's adjoint reads the x it replaces",
    ),
    Workload(
        "recurrence",
        recurrence,
        lambda: (3.2, 0.3, 1000),
        ("r", "x0"),
        "1000 steps",
        overwritten=lambda r, x0, steps: steps,
        needed=lambda r, x0, steps: steps,
        counts="steps  /  steps: each step's adjoint reads the x it replaces",
    ),
    Workload(
        "recurrence_100k",
        recurrence,
        lambda: (3.2, 0.3, 100_000),
        ("r", "x0"),
        "100000 steps",
        overwritten=lambda r, x0, steps: steps,
        needed=lambda r, x0, steps: steps,
        counts="steps  /  steps",
    ),
    Workload(
        "dense_tanh",
        dense_tanh,
        _dense_args,
        ("W", "x"),
        "128 x 128",
        # a = 0.0 rebinds a (m-1 times), a += (m*n), s += (m); tanh's adjoint reads each a
        overwritten=lambda W, x: W.size + 2 * W.shape[0] - 1,
        needed=lambda W, x: W.shape[0] - 1,
        counts="m*n + 2m - 1  /  m-1: the a of every row but the last",
    ),
    Workload(
        "newton_sqrt",
        newton_sqrt_sum,
        lambda: (np.linspace(0.5, 4.0, 10_000),),
        ("x",),
        "10000 while loops",
        # T = total Newton steps (about 5 per element, counted by _newton_trips); a and y are
        # rebound per element, y per step, s += per element; the adjoint reads the old y of each
        # step and a of every element but the last
        overwritten=lambda x: sum(_newton_trips(x)) + 3 * x.shape[0] - 2,
        needed=lambda x: sum(_newton_trips(x)) + sum(k > 0 for k in _newton_trips(x)[:-1]),
        counts="T + 3n - 2  /  T + n - 1 (T: Newton steps in all, counted)",
    ),
    Workload(
        "first_passage",
        first_passage,
        _passage_args,
        ("x",),
        "n = 100000, break / return",
        # k1, k2: iterations of the two loops (from cumulative sums); s += and t += once each;
        # the adjoint reads only the final s and t, which nothing overwrites
        overwritten=lambda x, limit: sum(_passage_trips(x, limit)),
        needed=lambda x, limit: 0,
        counts="k1 + k2 (iterations run)  /  0",
    ),
    Workload("trisolv", trisolv, lambda: _lower(1000), ("L", "b"), "1000 x 1000"),
    Workload("cholesky", cholesky, lambda: _spd(150), ("A0",), "150 x 150"),
    Workload("lu", lu, lambda: _spd(150), ("A0",), "150 x 150"),
    Workload("atax", atax, lambda: _matrix_vectors(900, 1000, 1), ("A", "x"), "900 x 1000"),
    Workload("bicg", bicg, lambda: _matrix_vectors(900, 1000, 2), ("A", "p", "r"), "900 x 1000"),
    Workload(
        "jacobi_1d",
        jacobi_1d,
        lambda: (200, *np.random.default_rng(40).standard_normal((2, 1000))),
        ("A0", "B0"),
        "1000 points x 200 steps",
    ),
)

BY_NAME = {w.name: w for w in WORKLOADS}
