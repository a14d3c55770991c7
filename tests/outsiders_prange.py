"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numpy as np
from numba import prange


# finding 5: the prange loop made numba compile the gradient with parallel=True, and its array
# analysis then failed the tape's record of the whole array `u` (`tape[top : top + u.size] =
# u.ravel()`) with a bare `AssertionError: Sizes of tape.1, $350call.33 do not match`
def prange_beside_whole_record(x, b, n):
    s = 0.0
    for i in prange(n):
        s += b
    u = x + 0.0
    for t in range(3):
        u = u + 0.1 * x
    return s + np.sum(u * u)
