"""Runtime helpers of the records: `reserve` grows a typed tape by doubling, `last_index` is the
last value of a range (where a reversed loop starts), `snapshot` the value of an argument now (a
copy of an array a later call may write into). Plain Python with `jit=False`, compiled into the
caller under numba.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .lowered import empty_tape

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["reserve", "last_index", "snapshot"]


@register_jitable
def reserve(tape, capacity):
    """`tape` with room for at least `capacity` entries (copied into a larger array if needed)."""
    if capacity <= tape.shape[0]:
        return tape
    doubled = 2 * tape.shape[0]
    # not max(): numba would compile its overload for the pair, 0.06-0.08 s of a cold first call
    bigger = empty_tape(tape, capacity if capacity > doubled else doubled)
    for k in range(tape.shape[0]):  # a loop: numba compiles a slice copy here 20x slower (2 s)
        bigger[k] = tape[k]
    return bigger


@register_jitable
def last_index(start, stop, step):
    """The last value of range(start, stop, step) (step > 0), or start - 1 for an empty range."""
    count = len(range(start, stop, step))
    return start + (count - 1) * step


def snapshot(x):
    """The value of x now: a copy of an array (a later call may write into it), a number as it is."""
    return x.copy() if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x
