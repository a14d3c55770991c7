"""Element writes drop their records only where no later-reversed read can see the old value
(`elements.py`): each kernel's gradient against central finite differences and forward mode,
and which writes keep their records."""

from __future__ import annotations

import element_kernels as ek
import numpy as np
import pytest
from numeric import assert_close

import sourcead

_RNG = np.random.default_rng(12)
_SQUARE = _RNG.standard_normal((6, 6)) + 6.0 * np.eye(6)  # no tiny pivots

CASES = [
    # (kernel, arguments, the record that must stay, or None where every element record goes)
    (ek.shifted_read, (_RNG.standard_normal(7),), "record y[i]"),
    (ek.wrapped_read, (_RNG.standard_normal(7),), "record y[i]"),
    (ek.backward_sweep, (_RNG.standard_normal(7),), None),
    (ek.strided_own_read, (_RNG.standard_normal(8),), "record y[i + 1]"),
    (ek.strided_linear, (_RNG.standard_normal(8),), None),
    (ek.time_steps, (_RNG.standard_normal(5), 3), "record y[i]"),
    (ek.rows_then_elements, (0.5 * _RNG.standard_normal((5, 3)),), "record Y[i + 1]"),
    (ek.triangular_updates, (_SQUARE,), None),
]


@pytest.mark.parametrize("func, args, kept", CASES, ids=[c[0].__name__ for c in CASES])
def test_element_records_are_kept_exactly_where_a_later_reversed_read_needs_them(func, args, kept):
    gradient = sourcead.grad(func, wrt=0)
    g = gradient(*args)
    records = [line for line in gradient.source.splitlines() if "# record " in line and "[" in line.split("#")[1]]
    if kept is None:
        assert not records, records
    else:
        assert any(kept in line for line in records), records
    rng = np.random.default_rng(3)
    v = rng.standard_normal(np.shape(args[0]))
    eps = 1e-6
    fd = (func(args[0] + eps * v, *args[1:]) - func(args[0] - eps * v, *args[1:])) / (2 * eps)
    assert_close(float(np.sum(g * v)), fd, 1e-6, 1e-8)
    _, forward = sourcead.jvp(func, wrt=0)(*args, tangents=v)
    assert_close(forward, float(np.sum(g * v)), 1e-11, 1e-12)
