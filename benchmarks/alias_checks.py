"""Cost of the run-time memory-overlap checks, per call, on small inputs.

    python -m benchmarks.alias_checks

A function that writes into one array argument has every call checked for overlap between that
argument and the other array arguments (`np.may_share_memory`, then `np.shares_memory` when the
bounds overlap). Measured: the check alone, for disjoint and for interleaved (same buffer,
disjoint elements) arguments, and its share of a whole small gradient call.
"""

from __future__ import annotations

import time

import numpy as np

import sourcead
from sourcead.build.arguments import check_overlap as _check_overlap

REPEATS, CALLS = 7, 20_000


def scale_into(x, buf):
    s = 0.0
    for i in range(x.shape[0]):
        buf[i] = 2.0 * x[i]
    for i in range(x.shape[0]):
        s += buf[i] * x[i]
    return s


def _per_call(func, *args) -> float:
    func(*args)
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS):
            func(*args)
        samples.append((time.perf_counter() - start) / CALLS)
    return float(np.median(samples))


def alias_report() -> str:
    gradient = sourcead.grad(scale_into, wrt="x")
    variant = gradient._default
    x, buf = np.linspace(0.0, 1.0, 8), np.zeros(8)
    base = np.linspace(0.0, 1.0, 16)
    interleaved = (base[::2], base[1::2])
    check_disjoint = _per_call(_check_overlap, variant, (x, buf))
    check_interleaved = _per_call(_check_overlap, variant, interleaved)
    call = _per_call(gradient, x, buf)
    return (
        "\n".join(
            [
                "## Run-time overlap checks",
                "",
                f"`scale_into` (writes into `buf`), 8 elements; medians of {REPEATS} x {CALLS} calls.",
                "",
                "| what | per call |",
                "|---|--:|",
                f"| check, separate arrays | {check_disjoint * 1e6:.2f} µs |",
                f"| check, interleaved views of one buffer | {check_interleaved * 1e6:.2f} µs |",
                f"| whole gradient call (check included) | {call * 1e6:.2f} µs |",
                "",
                f"The check is {100 * check_disjoint / call:.0f}% of a small gradient call "
                "(functions that write no argument are not checked at all).",
            ]
        )
        + "\n"
    )


if __name__ == "__main__":
    print(alias_report())
