"""Large tapes are backed by huge pages on Linux (`sourcead/memory.py`): the advice is given, and
growing a tape keeps its contents."""

from pathlib import Path

import numpy as np
import pytest
from numba import njit

from sourcead.memory import HUGE_PAGE_BYTES
from sourcead.runtime import reserve

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
