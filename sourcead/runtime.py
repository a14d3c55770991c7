"""Helpers that generated code calls: typed tapes that grow by doubling, reversed ranges.

They are `register_jitable`: plain Python when the generated code runs with `jit=False`,
compiled into the caller when it runs under numba.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable


@register_jitable
def reserve(tape, capacity):
    """`tape` with room for at least `capacity` entries (copied into a larger array if needed)."""
    if capacity <= tape.shape[0]:
        return tape
    bigger = np.empty(max(capacity, 2 * tape.shape[0]), tape.dtype)
    for k in range(tape.shape[0]):  # a loop: numba compiles a slice copy here 20x slower (2 s)
        bigger[k] = tape[k]
    return bigger


@register_jitable
def last_index(start, stop, step):
    """The last value of range(start, stop, step) (step > 0), or start - 1 for an empty range."""
    count = len(range(start, stop, step))
    return start + (count - 1) * step


@register_jitable
def add_rows_1d(total, rows):
    """total += the sum over threads of rows[t, :n] (rows are padded beyond n)."""
    for t in range(rows.shape[0]):
        for j in range(total.shape[0]):
            total[j] += rows[t, j]


@register_jitable
def add_rows_2d(total, rows):
    """total += the sum over threads of rows[t, :, :m] (rows are padded beyond m)."""
    for t in range(rows.shape[0]):
        for i in range(total.shape[0]):
            for j in range(total.shape[1]):
                total[i, j] += rows[t, i, j]
