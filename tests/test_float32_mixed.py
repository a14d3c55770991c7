"""A variable that holds a float32 array in one place and a float64 array in another.

numba gives a variable one type, so such a variable failed in numba's typing (a raw "Cannot unify
array(float32, ...) and array(float64, ...)") although sourcead's checks passed: the float32 mark
does not count in type equality. Each spelling is refused at the user's line, with or without
numba; where both bindings are at the function's top level the variable takes a fresh name from
the second one (`analysis/rebinding.py`) and the gradient is right. Integer arithmetic keeps
float32 storage float32 (numba's rules), so it is not refused.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numeric import assert_close

import sourcead
from sourcead import SourceADError


def in_a_branch(x):
    if x[0] > 0.0:
        y = np.zeros(x.shape[0], dtype=np.float32)
        y[:] = x
    else:
        y = x * 2.0  # refused
    return np.sum(y)


def carried_by_a_loop(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    for _ in range(3):
        y = y + x  # refused
    return np.sum(y)


def scaled_in_a_loop(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    y[:] = x
    for _ in range(2):
        y = y * 2.0  # refused
    return np.sum(y)


def float32_storage(n):
    return np.zeros(n, dtype=np.float32)


def from_a_helper(x):
    y = x * 1.0
    for _ in range(2):
        y = float32_storage(x.shape[0])  # refused
        y[:] = x
    return np.sum(y * x)


def bound_later_in_a_branch(x):
    y = x + 1.0
    if x[0] > 0.0:
        y = np.ones(x.shape[0], dtype=np.float32)  # refused
    return np.sum(y * x)


def rebound_at_top_level(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    y[0] = x[0]
    s = np.sum(y)
    y = x * 2.0
    return s + np.sum(y)


def float64_first_at_top_level(x):
    y = x * 2.0
    s = np.sum(y)
    y = np.zeros(x.shape[0], dtype=np.float32)
    y[:] = x
    return s + np.sum(y)


def integer_arithmetic_in_a_loop(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    y[:] = x
    for _ in range(2):
        y = y * 2 + y
    return np.sum(y * x)


def dtype_of_itself_in_a_loop(x):
    y = np.zeros(x.shape[0], dtype=np.float32)
    y[:] = x
    for k in range(2):
        y = np.empty(x.shape[0], dtype=y.dtype)
        y[:] = x * k
    return np.sum(y * x)


X = np.array([0.5, 1.0, 2.0])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize(
    "func", [in_a_branch, carried_by_a_loop, scaled_in_a_loop, from_a_helper, bound_later_in_a_branch]
)
def test_float32_and_float64_under_one_name_is_refused_at_the_users_line(func, jit):
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=jit)(X)
    err = info.value
    assert "`y` holds a float32 array in one place and a float64 array in another" in str(err), str(err)
    assert "use a different name for each" in err.hint
    lines, first = inspect.getsourcelines(func)
    assert err.where is not None and err.where.filename.endswith("test_float32_mixed.py")
    assert err.where.line == first + next(i for i, text in enumerate(lines) if "# refused" in text)
    assert err.where.source_line[err.where.column :].startswith("y = ")


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize(
    "func, expected",
    [
        (rebound_at_top_level, lambda x: np.array([3.0, 2.0, 2.0])),  # x[0] + 2 sum(x)
        (float64_first_at_top_level, lambda x: np.full(3, 3.0)),  # 3 sum(x)
        (integer_arithmetic_in_a_loop, lambda x: 18.0 * x),  # 9 sum(x * x)
        (dtype_of_itself_in_a_loop, lambda x: 2.0 * x),  # sum(x * x), the last k being 1
    ],
)
def test_what_numba_types_is_differentiated(func, expected, jit):
    assert_close(sourcead.grad(func, jit=jit)(X), expected(X), rtol=1e-6)
