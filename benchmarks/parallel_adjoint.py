"""The adjoint of a prange loop: its speedup with 2 threads over 1, and gradient / primal.

    python -m benchmarks.parallel_adjoint

The workload maps an expensive per-element body (an inner recurrence of 200 steps, with a
shared parameter) over 20,000 elements with `numba.prange`; its adjoint is a prange loop in
which every iteration replays its own body on its own tape. Medians of repeated runs, after
warm-up, in one process.
"""

from __future__ import annotations

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


def _median_time(func, *args) -> float:
    func(*args)
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def parallel_report() -> str:
    x = np.linspace(-1.0, 1.0, N)
    w = 0.8
    primal = numba.njit(parallel=True)(mapped_recurrence)
    gradient = sourcead.grad(mapped_recurrence, wrt=("x", "w"))
    previous = numba.get_num_threads()
    rows = {}
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            rows[threads] = (_median_time(primal, x, w), _median_time(gradient, x, w))
    finally:
        numba.set_num_threads(previous)
    lines = [
        "## prange adjoint: threads",
        "",
        f"`mapped_recurrence`: {N} elements, a {STEPS}-step recurrence each, wrt x and a shared w; "
        f"medians of {REPEATS} runs.",
        "",
        "| threads | primal (parallel=True) | gradient | gradient / primal |",
        "|--:|--:|--:|--:|",
    ]
    for threads, (p, g) in rows.items():
        lines.append(f"| {threads} | {p * 1e3:.2f} ms | {g * 1e3:.2f} ms | {g / p:.2f} |")
    if 2 in rows:
        lines += ["", f"Adjoint speedup, 2 threads over 1: **{rows[1][1] / rows[2][1]:.2f}** (goal: at least 1.8)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(parallel_report())
