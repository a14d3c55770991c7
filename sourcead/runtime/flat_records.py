"""`record_flat(tape, top, value)`: the store of an array's values onto a tape, as a loop.

Generated code records a row, a slice or a whole array by this call rather than by the slice store
`tape[top : top + value.size] = value.ravel()`: in a module with a `prange` loop numba compiles the
function with `parallel=True`, and its array analysis then checks the sizes of a slice store's two
sides at run time from what it inferred of them, which for a whole array rebound in a loop
(`u = u + 0.1 * x` under `for t in range(3)`) was wrong: `AssertionError: Sizes of tape.1, ...
do not match` on a correct store (issue 38, finding 5). A loop has no such check, and compiles
faster than the slice copy (see `runtime.reserve`).
"""

from __future__ import annotations

from numba.extending import register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["record_flat"]


@register_jitable
def record_flat(tape, top, value):
    """tape[top : top + value.size] = value's elements in C order (the caller reserved the room)."""
    flat = value.ravel()
    for k in range(flat.size):
        tape[top + k] = flat[k]
