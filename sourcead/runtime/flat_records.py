"""`record_flat(tape, top, value)`: the store of an array's values onto a tape, as a loop, and
`restore_flat(tape, top, target)` the load back into the row or slice they came from.

Generated code records a row, a slice or a whole array by this call rather than by the slice store
`tape[top : top + value.size] = value.ravel()`: in a module with a `prange` loop numba compiles the
function with `parallel=True`, and its array analysis then checks the sizes of a slice store's two
sides at run time from what it inferred of them, which for a whole array rebound in a loop
(`u = u + 0.1 * x` under `for t in range(3)`) was wrong: `AssertionError: Sizes of tape.1, ...
do not match` on a correct store (issue 38, finding 5). A loop has no such check, and compiles
faster than the slice copy (see `runtime.reserve`).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["record_flat", "restore_flat"]


@register_jitable
def record_flat(tape, top, value):
    """tape[top : top + value.size] = value's elements in C order (the caller reserved the room)."""
    flat = value.ravel()
    for k in range(flat.size):
        tape[top + k] = flat[k]


@register_jitable
def restore_flat(tape, top, target):
    """target's elements, in C order, = tape[top : top + target.size]: a recorded row or slice
    restored in place. The line it stands for, `target = tape[top : top + target.size].reshape(
    target.shape)`, is a slice assigned from an array, which numba lowers inline as an overlap test,
    a copy and a loop nest: one more body for LLVM's passes per restore (adi's gradient has 12)."""
    k = top
    for index in np.ndindex(target.shape):
        target[index] = tape[k]
        k += 1
