"""The adjoint of a prange loop: its speedup with 2 threads over 1, and gradient / primal.

    python -m benchmarks.parallel_adjoint

Five workloads. `mapped_recurrence` maps an expensive per-element body (an inner recurrence of 200
steps, with a shared parameter) over 20,000 elements with `numba.prange`; its adjoint is a prange
loop in which every iteration replays its own body on its own tape. `periodic_diffusion`, a 2-D
heat equation on a periodic grid (320 x 320, 100 steps, rows in parallel, neighbours by the
`ip = i + 1; if ip == n: ip = 0` idiom): its ring indices keep the shape contract complete (no
bounds checks, so the module compiles parallel) and its adjoint gathers them;
`periodic_diffusion_modulo` is the same written with `u[(i + 1) % n, j]`, which `rings.py` turns
into the idiom; `weights_modulo` is issue 40's held-out workload, weights `w[k % 8]` in a prange
loop (a sufficient fact, tested per call); `gather_neighbours` reads `x[idx[k] - 1]`, which no
shape bounds: the call probes its values in one pass first. Medians of repeated runs, after warm-up, in one process.
"""

from __future__ import annotations

import json
import math
import time

import numba
import numpy as np
from numba import prange

import sourcead

N, STEPS, REPEATS = 20_000, 200, 7


def mapped_recurrence(x, w):
    out = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        z = x[i]
        for _k in range(STEPS):
            z = math.sin(z) * w + math.cos(z * w)
        out[i] = z
    s = 0.0
    for i in range(x.shape[0]):
        s += out[i] * out[i]
    return s


def periodic_diffusion(u0, kappa, steps):
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = np.empty((n, m))
    for _t in range(steps):
        for i in prange(n):
            ip = i + 1
            if ip == n:
                ip = 0
            im = i - 1
            if im < 0:
                im = n - 1
            for j in range(m):
                jp = j + 1
                if jp == m:
                    jp = 0
                jm = j - 1
                if jm < 0:
                    jm = m - 1
                v[i, j] = u[i, j] + kappa * (u[ip, j] + u[im, j] + u[i, jp] + u[i, jm] - 4.0 * u[i, j])
        u, v = v, u
    return 0.5 * np.sum(u * u)


def periodic_diffusion_modulo(u0, kappa, steps):
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = np.empty((n, m))
    for _t in range(steps):
        for i in prange(n):
            for j in range(m):
                north, south = u[(i - 1) % n, j], u[(i + 1) % n, j]
                west, east = u[i, (j - 1) % m], u[i, (j + 1) % m]
                v[i, j] = u[i, j] + kappa * (north + south + west + east - 4.0 * u[i, j])
        u, v = v, u
    return 0.5 * np.sum(u * u)


def weights_modulo(x, w):
    # the held-out workload of issue 40: a weight picked by `k % 8` in a prange loop
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        k = 5 * i + 3
        z = x[i]
        for _r in range(8):
            z = math.sin(z * w[k % 8]) + w[(k + _r) % 8]
        out[i] = z
    return np.sum(out * out)


def gather_neighbours(x, idx):
    # neighbours of elements picked by an int array: `idx[k] - 1` no shape bounds (a probe)
    s = 0.0
    for k in prange(idx.shape[0]):
        a, b = x[idx[k] - 1], x[idx[k] + 1]
        s += math.sin(a * b) + math.cos(a - b) * math.exp(-a * a)
    return s


def _median_time(func, *args) -> float:
    func(*args)
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _rows(func, wrt, args) -> dict[int, tuple[float, float]]:
    """Primal (parallel=True) and gradient times on 1 and 2 threads."""
    primal = numba.njit(parallel=True)(func)
    gradient = sourcead.grad(func, wrt=wrt)
    previous = numba.get_num_threads()
    rows = {}
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            rows[threads] = (_median_time(primal, *args), _median_time(gradient, *args))
    finally:
        numba.set_num_threads(previous)
    return rows


def _checks(contract: dict) -> str:
    """What the call does about bounds, from the gradient's contract."""
    if not contract["complete"]:
        return "bounds-checked, compiled serially"
    probes = sum(1 for fact in contract["sufficient"] if fact.get("probe"))
    facts = len(contract["sufficient"]) - probes
    tested = [f"{facts} sufficient fact(s) tested per call"] if facts else []
    tested += [f"{probes} index(es) probed per call (one serial pass)"] if probes else []
    return "no bounds checks" + (f" where {' and '.join(tested)} pass" if tested else "")


def parallel_report() -> str:
    from sourcead.pipeline.driver import generate

    workloads = [
        ("mapped_recurrence", f"{N} elements, a {STEPS}-step recurrence each, wrt x and a shared w",
         mapped_recurrence, ("x", "w"), (np.linspace(-1.0, 1.0, N), 0.8)),
        ("periodic_diffusion", "320 x 320 periodic grid, 100 steps, rows in prange, wrt u0 and kappa",
         periodic_diffusion, ("u0", "kappa"), (np.random.default_rng(1).random((320, 320)), 0.1, 100)),
        ("periodic_diffusion_modulo", "the same, neighbours written `u[(i + 1) % n, j]`",
         periodic_diffusion_modulo, ("u0", "kappa"), (np.random.default_rng(1).random((320, 320)), 0.1, 100)),
        ("weights_modulo", f"{N * 50} elements, weights `w[k % 8]`, wrt x and w",
         weights_modulo, ("x", "w"), (np.linspace(-1.0, 1.0, N * 50), np.linspace(0.5, 1.5, 8))),
        ("gather_neighbours", f"{N * 50} picks `x[idx[k] - 1]`, `x[idx[k] + 1]` of {N} elements, wrt x",
         gather_neighbours, ("x",), (np.linspace(-1.0, 1.0, N),
                                     np.random.default_rng(2).integers(-N + 1, N - 1, N * 50))),
    ]  # fmt: skip
    lines = ["## prange adjoint: threads", ""]
    for name, what, func, wrt, args in workloads:
        checks = _checks(json.loads(generate(func, "reverse", wrt).contract))
        lines += [
            f"`{name}`: {what}; {checks}; medians of {REPEATS} runs.",
            "",
            "| threads | primal (parallel=True) | gradient | gradient / primal |",
            "|--:|--:|--:|--:|",
        ]
        rows = _rows(func, wrt, args)
        for threads, (p, g) in rows.items():
            lines.append(f"| {threads} | {p * 1e3:.2f} ms | {g * 1e3:.2f} ms | {g / p:.2f} |")
        if 2 in rows:
            lines += ["", f"Adjoint speedup, 2 threads over 1: **{rows[1][1] / rows[2][1]:.2f}** (goal: at least 1.8)."]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(parallel_report())
