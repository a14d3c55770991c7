"""Runtime helpers written in LLVM IR: `empty_tape(like, size)` allocates a tape, `zeros_like(a)`
the adjoint of a whole array, `chunk_zeros(shape)` the per-chunk rows of a parallel adjoint, and
`add_chunk_rows(total, rows, part)` adds those rows up; `advise_huge_pages(array)` asks Linux to
back a large array with 2 MiB pages (`madvise(MADV_HUGEPAGE)`); `add_unordered(total, term)` is
`total + term` as an addition LLVM may reorder among the other such additions of its loop (an
adjoint's sum: `unordered.py`); `strong_zero(part, seed)` is `part if seed != 0.0 else 0.0` with
`part` evaluated either way, a select rather than a branch (`reverse/strong_zero.py`).

They are lowered straight to IR under numba (`type_callable` / `lower_builtin`) rather than
written as jitted helpers or NumPy calls, so they add nothing to a cold first call: numba compiles
each overload it meets as a function of its own, per argument types, and inside a prange body
twice (it types the body in two contexts). `np.zeros_like` cost 0.2-0.6 s per array type, the
`np.zeros` of the chunk rows 0.3-0.4 s, their sum 0.15-0.25 s per rank and context, `reserve`'s
`np.empty(size, tape.dtype)` 0.2 s per tape dtype. In plain Python (`jit=False`) they are the
Python functions below.

Huge pages, because a tape that grows to tens of megabytes is a fresh allocation on every call
(glibc hands blocks that large back to the kernel when they are freed), and the kernel faults it
in one 4 KiB page at a time: on particle's 35 MB tape the faults took longer than the writes.
NumPy gives its own allocations of 4 MiB and more the same advice; numba's arrays do not get it,
so the adjoints of whole arrays (`zeros_like`, `chunk_zeros`, and `outer_of`'s new arrays) ask
for it too: a gradient returns a new array as large as each array argument, often far above
glibc's 32 MiB at which blocks go back to the kernel when freed.
Elsewhere than Linux the advice is not given. libc's `madvise` is resolved when the code is loaded,
so the functions that call it stay in numba's on-disk cache (a ctypes pointer would not).
"""

from __future__ import annotations

import operator
import os
import sys

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_new_ref
from numba.extending import lower_builtin, type_callable
from numba.np.arrayobj import _empty_nd_impl, make_array

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["zeros_like", "add_unordered", "strong_zero", "strong_zero_each", "chunk_zeros", "add_chunk_rows"]

# the iterations of a parallel adjoint run in this many fixed chunks, whatever the thread count, so
# that shared adjoints are summed in the same order (bit for bit the same gradient on 1 or N threads)
ADJOINT_CHUNKS = 16

# NumPy's threshold for the same advice (numpy/_core/src/multiarray/alloc.c)
HUGE_PAGE_BYTES = 1 << 22

_MADV_HUGEPAGE = 14
_ADVISE = sys.platform.startswith("linux")
_PAGE = os.sysconf("SC_PAGE_SIZE") if _ADVISE else 4096


def empty_tape(like, size):
    """A new, uninitialised 1-D array of `size` elements of `like`'s dtype."""
    return np.empty(size, like.dtype)


def add_chunk_rows(total, rows, part):
    """For the `part`-th of ADJOINT_CHUNKS slices of the first axis of `total`: total += the rows
    of every chunk, in chunk order (the same sum on any thread count); those rows are zeroed for
    their next use. The parts touch disjoint elements, so they run in parallel."""
    n = total.shape[0]
    for e in range(n * part // ADJOINT_CHUNKS, n * (part + 1) // ADJOINT_CHUNKS):
        for c in range(rows.shape[0]):
            total[e] += rows[c, e]
            rows[c, e] = 0.0


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


def zeros_like(array):
    """A new float64 array of zeros with `array`'s shape (the adjoint of a whole float array starts
    so), without the compile of numba's overload of `np.zeros_like`, 0.2-0.6 s per array type.
    float64 whatever `array`'s dtype: the adjoint of float32 storage accumulates in float64."""
    return np.zeros(np.shape(array))


def chunk_zeros(shape):
    """Float zeros of shape (ADJOINT_CHUNKS, *shape): a contiguous slab per chunk. Opaque to
    numba's parallel pass, which would make an inline `np.zeros` a parallel loop of its own (a
    function compiled on its own: about a second per allocation)."""
    return np.zeros((ADJOINT_CHUNKS, *shape))


@type_callable(zeros_like)
def _zeros_like_type(context):
    def typer(array):
        if isinstance(array, types.Array):  # numba's np.zeros_like type: 'A' becomes 'C'; float64
            layout = "C" if array.layout == "A" else array.layout
            return array.copy(dtype=types.float64, layout=layout, readonly=False)

    return typer


@lower_builtin(zeros_like, types.Array)
def _zeros_like_lower(context, builder, signature, args):
    source = make_array(signature.args[0])(context, builder, value=args[0])
    return _zeros(context, builder, signature.return_type, cgutils.unpack_tuple(builder, source.shape))


@type_callable(chunk_zeros)
def _chunk_zeros_type(context):
    def typer(shape):
        if isinstance(shape, types.BaseTuple) and all(isinstance(n, types.Integer) for n in shape):
            return types.Array(types.float64, len(shape) + 1, "C")

    return typer


@lower_builtin(chunk_zeros, types.BaseTuple)
def _chunk_zeros_lower(context, builder, signature, args):
    sizes = cgutils.unpack_tuple(builder, args[0])
    sizes = [context.cast(builder, n, t, types.intp) for n, t in zip(sizes, signature.args[0], strict=True)]
    chunks = context.get_constant(types.intp, ADJOINT_CHUNKS)
    return _zeros(context, builder, signature.return_type, [chunks, *sizes])


def _zeros(context, builder, array_type, shape):
    """A new array of `array_type` and `shape` (lowered sizes), its bytes set to zero."""
    zeros = _empty_nd_impl(context, builder, array_type, shape)
    _advise(context, builder, zeros)  # before the memset first touches its pages
    cgutils.memset(builder, zeros.data, builder.mul(zeros.nitems, zeros.itemsize), 0)
    return impl_ret_new_ref(context, builder, array_type, zeros._getvalue())


@type_callable(add_chunk_rows)
def _add_chunk_rows_type(context):
    def typer(total, rows, part):
        if (
            isinstance(total, types.Array)
            and isinstance(rows, types.Array)
            and rows.ndim == total.ndim + 1
            and total.dtype == rows.dtype == types.float64
            and isinstance(part, types.Integer)
        ):
            return types.none

    return typer


@lower_builtin(add_chunk_rows, types.Array, types.Array, types.Integer)
def _add_chunk_rows_lower(context, builder, signature, args):
    """The loops of the Python function: element e of the part, then chunk c, then the element's
    other axes (innermost, so a row vectorises); the chunks are counted by `rows.shape[0]`."""
    total_type, rows_type, part_type = signature.args
    total = make_array(total_type)(context, builder, value=args[0])
    rows = make_array(rows_type)(context, builder, value=args[1])
    word = context.get_value_type(types.intp)
    part = context.cast(builder, args[2], part_type, types.intp)
    shape = cgutils.unpack_tuple(builder, total.shape)
    chunks = ir.Constant(word, ADJOINT_CHUNKS)
    first = builder.sdiv(builder.mul(shape[0], part), chunks)  # both >= 0: floor division
    end = builder.sdiv(builder.mul(shape[0], builder.add(part, ir.Constant(word, 1))), chunks)
    zero = ir.Constant(context.get_value_type(types.float64), 0.0)
    with cgutils.for_range(builder, end, start=first, intp=word) as e:
        with cgutils.for_range(builder, cgutils.unpack_tuple(builder, rows.shape)[0], intp=word) as c:
            with cgutils.loop_nest(builder, shape[1:], word) as rest:
                into = cgutils.get_item_pointer(context, builder, total_type, total, [e.index, *rest])
                row = cgutils.get_item_pointer(context, builder, rows_type, rows, [c.index, e.index, *rest])
                builder.store(builder.fadd(builder.load(into), builder.load(row)), into)
                builder.store(zero, row)
    return context.get_dummy_value()


def add_unordered(total, term):
    """`total + term`, an addition whose order among the loop's other additions into `total` is
    free: lowered with LLVM's `reassoc` flag on this instruction alone, so that LLVM may vectorise
    the sum (partial sums per lane, added at the end). Any other number: the plain `+`."""
    return total + term


@type_callable(add_unordered)
def _add_unordered_type(context):
    def typer(total, term):
        if all(isinstance(t, (types.Number, types.Boolean)) for t in (total, term)):
            return context.resolve_function_type(operator.add, (total, term), {}).return_type

    return typer


@lower_builtin(add_unordered, types.Any, types.Any)  # numbers and bools: the typer says which
def _add_unordered_lower(context, builder, signature, args):
    add = context.typing_context.resolve_function_type(operator.add, signature.args, {})
    operands = [context.cast(builder, a, t, w) for a, t, w in zip(args, signature.args, add.args, strict=True)]
    if isinstance(add.return_type, types.Float) and add.args == (add.return_type, add.return_type):
        total = builder.fadd(*operands, flags=("reassoc",))
    else:
        total = context.get_function(operator.add, add)(builder, operands)
    return context.cast(builder, total, add.return_type, signature.return_type)


def strong_zero(part, seed):
    """`part if seed != 0.0 else 0.0`, an adjoint's contribution under its seed's strong zero, with
    `part` evaluated whether or not it is used: the generated code calls it only where evaluating
    `part` cannot raise (`reverse/strong_zero.py`), so that it lowers to a select, not a branch
    around `part`'s loads, which keeps LLVM from vectorising the loop."""
    return part if seed != 0.0 else 0.0


@numba.vectorize
def strong_zero_each(part, seed):
    """`strong_zero` elementwise over broadcast arrays: `np.where(seed != 0.0, part, 0.0)`, an array
    contribution under its seed's strong zero. A ufunc, so numba fuses it with the arithmetic of
    `part` into one loop and one array (numba's `np.where` with a number for its third argument
    took 11x the time of `part` alone on 2 million elements; this takes the same); plain NumPy
    with `jit=False`. `part` is evaluated everywhere, as `np.where` evaluated it."""
    return part if seed != 0.0 else 0.0


@type_callable(strong_zero)
def _strong_zero_type(context):
    def typer(part, seed):
        if isinstance(part, types.Float) and isinstance(seed, (types.Float, types.Integer)):
            return part

    return typer


@lower_builtin(strong_zero, types.Float, types.Float)
@lower_builtin(strong_zero, types.Float, types.Integer)
def _strong_zero_lower(context, builder, signature, args):
    part, seed = args
    if isinstance(signature.args[1], types.Float):
        used = builder.fcmp_unordered("!=", seed, ir.Constant(seed.type, 0.0))  # nan != 0.0 holds
    else:
        used = builder.icmp_signed("!=", seed, ir.Constant(seed.type, 0))
    return builder.select(used, part, ir.Constant(part.type, 0.0))
