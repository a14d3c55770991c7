"""Huge pages for large tapes: `advise_huge_pages(array)` asks Linux to back a large array with
2 MiB pages (`madvise(MADV_HUGEPAGE)`).

Why: a tape that grows to tens of megabytes is a fresh allocation on every call (glibc hands
blocks that large back to the kernel when they are freed), and the kernel faults it in one 4 KiB
page at a time: on a 35 MB tape the faults cost three times the writes (`benchmarks/README.md`).
NumPy gives its own allocations of 4 MiB and more the same advice; arrays that numba allocates do
not get it, so the runtime gives it to the tapes it grows. Elsewhere than Linux, and in plain
Python (`jit=False`, where NumPy allocates), it does nothing.
"""

from __future__ import annotations

import os
import sys

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

# NumPy's threshold for the same advice (numpy/_core/src/multiarray/alloc.c)
HUGE_PAGE_BYTES = 1 << 22

_MADV_HUGEPAGE = 14
_ADVISE = sys.platform.startswith("linux")
_PAGE = os.sysconf("SC_PAGE_SIZE") if _ADVISE else 4096


def advise_huge_pages(array):
    """Ask for huge pages under `array`'s memory (plain Python: nothing; NumPy already did)."""


@intrinsic
def _madvise_huge(typingctx, start, length):
    """`madvise(start, length, MADV_HUGEPAGE)`: libc's, resolved when the code is loaded, so a
    function calling it stays in numba's on-disk cache (a ctypes pointer would not)."""
    sig = types.int32(types.intp, types.intp)

    def codegen(context, builder, signature, args):
        bytes_ptr = ir.IntType(8).as_pointer()
        madvise_type = ir.FunctionType(ir.IntType(32), [bytes_ptr, ir.IntType(64), ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, madvise_type, "madvise")
        advice = ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)
        return builder.call(madvise, [builder.inttoptr(args[0], bytes_ptr), args[1], advice])

    return sig, codegen


@overload(advise_huge_pages)
def _advise_huge_pages_jit(array):
    if not _ADVISE:
        return lambda array: None

    def impl(array):
        nbytes = array.size * array.itemsize
        if nbytes >= HUGE_PAGE_BYTES:
            data = array.ctypes.data
            start = (data + _PAGE - 1) // _PAGE * _PAGE  # madvise wants whole pages
            _madvise_huge(start, (data + nbytes - start) // _PAGE * _PAGE)  # advice: failure is fine

    return impl
