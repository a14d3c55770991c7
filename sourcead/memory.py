"""The memory of tapes: `empty_tape(like, size)` allocates a tape, `advise_huge_pages(array)` asks
Linux to back a large array with 2 MiB pages (`madvise(MADV_HUGEPAGE)`).

Both are lowered straight to LLVM IR under numba rather than written as jitted helpers, so they
add nothing to a cold first call: numba compiles every overload a helper calls as a function of
its own, and `reserve`'s `np.empty(size, tape.dtype)` alone cost 0.2 s per tape dtype (a reverse
sweep has two: floats and ints). In plain Python (`jit=False`) they are NumPy's.

Huge pages, because a tape that grows to tens of megabytes is a fresh allocation on every call
(glibc hands blocks that large back to the kernel when they are freed), and the kernel faults it
in one 4 KiB page at a time: on particle's 35 MB tape the faults took longer than the writes.
NumPy gives its own allocations of 4 MiB and more the same advice; numba's arrays do not get it.
Elsewhere than Linux the advice is not given. libc's `madvise` is resolved when the code is loaded,
so the functions that call it stay in numba's on-disk cache (a ctypes pointer would not).
"""

from __future__ import annotations

import os
import sys

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_new_ref
from numba.extending import lower_builtin, type_callable
from numba.np.arrayobj import _empty_nd_impl, make_array

# NumPy's threshold for the same advice (numpy/_core/src/multiarray/alloc.c)
HUGE_PAGE_BYTES = 1 << 22

_MADV_HUGEPAGE = 14
_ADVISE = sys.platform.startswith("linux")
_PAGE = os.sysconf("SC_PAGE_SIZE") if _ADVISE else 4096


def empty_tape(like, size):
    """A new, uninitialised 1-D array of `size` elements of `like`'s dtype."""
    return np.empty(size, like.dtype)


def advise_huge_pages(array):
    """Ask for huge pages under `array`'s memory (plain Python: nothing; NumPy already did)."""


@type_callable(empty_tape)
def _empty_tape_type(context):
    def typer(like, size):
        if isinstance(like, types.Array) and isinstance(size, types.Integer):
            return types.Array(like.dtype, 1, "C")

    return typer


@lower_builtin(empty_tape, types.Array, types.Integer)
def _empty_tape_lower(context, builder, signature, args):
    size = context.cast(builder, args[1], signature.args[1], types.intp)
    tape = _empty_nd_impl(context, builder, signature.return_type, [size])
    _advise(context, builder, tape)
    return impl_ret_new_ref(context, builder, signature.return_type, tape._getvalue())


@type_callable(advise_huge_pages)
def _advise_huge_pages_type(context):
    def typer(array):
        if isinstance(array, types.Array):
            return types.none

    return typer


@lower_builtin(advise_huge_pages, types.Array)
def _advise_huge_pages_lower(context, builder, signature, args):
    _advise(context, builder, make_array(signature.args[0])(context, builder, value=args[0]))
    return context.get_dummy_value()


def _advise(context, builder, array) -> None:
    """`madvise(MADV_HUGEPAGE)` over the whole pages of the array's memory, if it has 4 MiB or
    more (advice only: its result is ignored)."""
    if not _ADVISE:
        return
    word = context.get_value_type(types.intp)
    nbytes = builder.mul(array.nitems, array.itemsize)
    enough = builder.icmp_signed(">=", nbytes, ir.Constant(word, HUGE_PAGE_BYTES))
    with builder.if_then(enough, likely=False):
        address = builder.ptrtoint(array.data, word)
        page_mask = ir.Constant(word, -_PAGE)
        first = builder.and_(builder.add(address, ir.Constant(word, _PAGE - 1)), page_mask)
        end = builder.and_(builder.add(address, nbytes), page_mask)  # whole pages only
        bytes_ptr = ir.IntType(8).as_pointer()
        madvise_type = ir.FunctionType(ir.IntType(32), [bytes_ptr, word, ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, madvise_type, "madvise")
        advice = ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)
        builder.call(madvise, [builder.inttoptr(first, bytes_ptr), builder.sub(end, first), advice])
