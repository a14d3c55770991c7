"""Issue 38, findings 4 and 8: the norm spellings still refused are refused at the user's call with
the user's names (the supported ones are zoo entries, `outsiders_rules.py`)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import sourcead
from sourcead import SourceADError


def matrix_norm_over_two_axes(B):
    return np.linalg.norm(B, axis=(0, 1))  # refused: the vector norms take one axis


def norm_with_another_ord(B):
    return np.sum(np.linalg.norm(B, 3, axis=1))  # refused: ord 3


def norm_of_a_vector_kept(x):
    return np.sum(np.linalg.norm(x, axis=0, keepdims=True))  # refused: a float has no axis to keep


def norm_of_a_matrix_with_ord(B):
    return np.linalg.norm(B, 1)  # refused: the matrix 1-norm is another function


def _line(func) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, text in enumerate(lines) if "# refused" in text)


@pytest.mark.parametrize(
    "func, arg, needle, token",
    [
        (matrix_norm_over_two_axes, np.ones((2, 3)), "np.linalg.norm takes one integer axis here", "return"),
        (norm_with_another_ord, np.ones((2, 3)), "ord=None, 1, 2 and np.inf", "3, axis"),
        (norm_of_a_vector_kept, np.ones(3), "keepdims=True) takes a 1-D to 3-D array here, got a float", "return"),
        (norm_of_a_matrix_with_ord, np.ones((2, 3)), "computes a vector norm here, of a 1-D array", "return"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_norm_refused_points_at_the_users_line(func, arg, needle, token):
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=False)(arg)
    err = info.value
    assert needle in str(err)
    assert err.hint  # says what to write instead
    assert err.where is not None and err.where.filename.endswith("test_outsiders_rules.py")
    assert err.where.line == _line(func)
    assert err.where.source_line[err.where.column :].startswith(token)
    for compiler_name in ("norm2_along", "norm1_along", "norm_inf_along", "as_vector", "expand_dims("):
        assert compiler_name not in str(err)
