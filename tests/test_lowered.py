"""The runtime helpers written in LLVM IR (`sourcead/lowered.py`): large tapes are backed by huge
pages on Linux (the advice is given), as are large adjoints of whole arrays, and growing a tape
keeps its records; `zeros_like` is numba's `np.zeros_like`; chunk rows start at zero (their sum:
tests/test_parallel.py); `add_unordered` is `+`, its float additions marked free to reorder (the
sums it writes: tests/test_gather.py)."""

from pathlib import Path

import numpy as np
import pytest
from numba import njit

from sourcead.runtime import reserve
from sourcead.runtime.lowered import ADJOINT_CHUNKS, HUGE_PAGE_BYTES, add_unordered, chunk_zeros, zeros_like
from sourcead.runtime.matmul import outer_of, outers_of

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@njit
def _grow(tape, capacity):
    return reserve(tape, capacity)


def _vm_flags(address):
    """The VmFlags of the mapping of this process that holds `address` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(part, 16) for part in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "VmFlags:":
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


def test_growing_keeps_the_records():
    tape = np.arange(5.0)
    grown = _grow(tape, 3 * HUGE_PAGE_BYTES // 8)
    assert grown.shape[0] >= 3 * HUGE_PAGE_BYTES // 8
    np.testing.assert_array_equal(grown[:5], tape)
    assert _grow(grown, 10).ctypes.data == grown.ctypes.data  # room enough: the same tape


@pytest.mark.skipif(not THP.exists(), reason="no transparent huge pages on this system")
def test_a_large_tape_is_advised_huge_pages():
    grown = _grow(np.zeros(3), 2 * HUGE_PAGE_BYTES // 8)
    middle = grown.ctypes.data + HUGE_PAGE_BYTES
    assert "hg" in _vm_flags(middle)  # MADV_HUGEPAGE given to the mapping


@njit
def _big_adjoints(like, u, v):
    both = outers_of(like, True, u, v, True, u, v)
    return zeros_like(like), chunk_zeros(like.shape), outer_of(like, True, u, v), both


@pytest.mark.skipif(not THP.exists(), reason="no transparent huge pages on this system")
def test_large_adjoints_of_whole_arrays_are_advised_huge_pages():
    """A gradient as large as an array argument is a new allocation on every call, above glibc's
    32 MiB a fresh mapping: with 4 KiB pages NPBench's atax spent most of its gradient faulting
    A's 160 MB adjoint in."""
    n = 2 * HUGE_PAGE_BYTES // (8 * 512) + 1
    like, u, v = np.ones((n, 512)), np.ones(n), np.ones(512)
    for array in _big_adjoints(like, u, v):
        assert array.nbytes >= 2 * HUGE_PAGE_BYTES
        assert "hg" in _vm_flags(array.ctypes.data + HUGE_PAGE_BYTES), array.shape


@njit
def _zeros_like_three(a, b, c):
    return zeros_like(a), zeros_like(b), zeros_like(c)


@njit
def _numba_zeros_like_three(a, b, c):
    return np.zeros_like(a), np.zeros_like(b), np.zeros_like(c)


def test_zeros_like_is_numpys():
    """The runtime's zeros_like gives what numba's np.zeros_like gives for a float64 array: shape,
    dtype, layout (a non-contiguous view becomes C, Fortran order stays) and zeros, also over
    memory that held other values; for an array of another dtype, float64 zeros (an adjoint's)."""
    a = np.arange(12.0).reshape(4, 3)
    b, c = np.asfortranarray(a), a[:, ::2]
    ours, numbas = _zeros_like_three(a, b, c), _numba_zeros_like_three(a, b, c)
    assert (
        _zeros_like_three.nopython_signatures[0].return_type
        == _numba_zeros_like_three.nopython_signatures[0].return_type
    )
    for got, expected in zip(ours, numbas, strict=True):
        assert got.shape == expected.shape and got.dtype == expected.dtype and got.strides == expected.strides
        assert not got.any()
    ints = np.arange(5)
    assert _zeros_like_three(ints, np.float64(2.0) * np.ones((2, 2, 2)), np.zeros(0))[0].dtype == np.float64
    assert zeros_like(ints.astype(np.float32)).dtype == np.float64
    np.testing.assert_array_equal(zeros_like(a), np.zeros_like(a))  # plain Python: NumPy's


@njit
def _chunk_rows(scalar, array):
    return chunk_zeros(()), chunk_zeros(array.shape)


def test_chunk_zeros_has_a_zero_row_per_chunk():
    for jitted in (True, False):
        rows, rows_2d = (_chunk_rows if jitted else _chunk_rows.py_func)(1.0, np.ones((3, 2)))
        assert rows.shape == (ADJOINT_CHUNKS,) and rows_2d.shape == (ADJOINT_CHUNKS, 3, 2)
        assert rows.dtype == rows_2d.dtype == np.float64 and not rows.any() and not rows_2d.any()


@njit
def _add(a, b):
    return add_unordered(a, b)


@njit
def _dot(x, y):
    total = 0.0
    for i in range(x.shape[0]):
        total = add_unordered(total, x[i] * y[i])
    return total


@pytest.mark.parametrize("a, b", [(1.5, 2.25), (3, 0.5), (0.5, 3), (True, 1.5), (2, 5), (-0.0, -0.0)])
def test_add_unordered_is_plus(a, b):
    got, expected = _add(a, b), a + b
    assert got == expected and type(got) is type(_add.py_func(a, b))
    assert np.signbit(got) == np.signbit(expected)


def test_add_unordered_marks_only_its_float_additions_reassociable():
    """The flag is on the sum's additions, not on the products: LLVM may vectorise the sum only."""
    x, y = np.random.default_rng(0).standard_normal((2, 1001))
    assert abs(_dot(x, y) - float(np.dot(x, y))) <= 1e-12 * float(np.abs(x * y).sum())
    ir = _dot.inspect_llvm(_dot.signatures[0])
    assert "fadd reassoc double" in ir and "fmul reassoc" not in ir
    ints = _add.inspect_llvm(next(s for s in _add.signatures if s[0].name == "int64" and s[1].name == "int64"))
    assert "reassoc" not in ints
