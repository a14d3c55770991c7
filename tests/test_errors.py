"""Errors name the user's file, line and column, show the line with a caret, and say what to do."""

from __future__ import annotations

import inspect

import bad_functions as bad
import numpy as np
import pytest

import sourcead
from sourcead import SourceADError


def _marked_line(func, marker: str) -> int:
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if f"# error: {marker}" in text:
            return first + offset
    raise AssertionError(f"no '# error: {marker}' line in {func.__name__}")


@pytest.mark.parametrize(
    "func, marker, needle, token",
    [
        (bad.uses_try, "try", "try", "try"),
        (bad.uses_is, "is", "comparisons", "is"),
        (bad.uses_list_comprehension, "comprehension", "`sum`", "sum("),
        (bad.uses_unknown_function, "unknown function", "np.fft.fft", "np.fft.fft"),
        (bad.falls_through, "every path", "every path", "if"),
        (bad.reads_global_array, "global array", "TABLE", "TABLE"),
        (bad.reads_array_attribute, "array attribute", "`CONFIG.weights` is an array", "CONFIG.weights"),
        (bad.uses_keepdims, "keepdims", "keepdims=True is supported with an integer axis", "np.sum"),
        (bad.uses_lambda, "lambda", "lambda", "lambda"),
        (bad.prange_index_after_loop, "after", "the variable `i` of a prange loop is read after the loop", "for"),
        (bad.float_index, "float index", "an index must be an integer", "t]"),
        (bad.recursive, "recursion", "recursive call to recursive", "recursive("),
        (bad.norm_with_ord, "ord", "ord=None, 1, 2 and np.inf", "3)"),
        (bad.max_over_axis, "axis", "np.cumsum takes 1 to 2 arguments", "np.float64)"),
        (bad.abs_of_array, "abs of an array", "abs() takes numbers", "x)"),
        (bad.Methods.indented_try, "indented try", "try", "try"),
        (bad.nested_try, "nested try", "try", "try"),
    ],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", ""),
)
def test_unsupported_construct_error_points_at_the_line(func, marker, needle, token):
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func)
    err = info.value
    line = _marked_line(func, marker)
    assert err.where is not None
    assert err.where.filename.endswith("bad_functions.py")
    assert err.where.line == line
    text = str(err)
    assert needle in text
    assert err.hint  # says what to do
    # the caret sits under the offending token
    shown, caret = text.splitlines()[2], text.splitlines()[3]
    assert shown.strip() == err.where.source_line.strip()
    assert shown[caret.index("^") :].startswith(token)


def test_a_transposed_view_then_written_is_refused_at_its_line():
    # a finding of the fuzzer: `res = B.T` then `B[...] = ...` gave reverse mode a wrong gradient
    with pytest.raises(SourceADError) as info:
        sourcead.grad(bad.transposed_view_written)(np.ones((2, 2)), 0.5)
    err = info.value
    assert err.where is not None and err.where.line == _marked_line(bad.transposed_view_written, "view")
    assert "`T` is a view of `B`" in err.message and "T = B.T.copy()" in err.hint


def test_a_view_of_a_constant_array_then_written_is_refused_too():
    # the values of a constant array are read by the reverse sweep as well: before this was
    # refused, the write through `v` gave a wrong gradient (found writing a zoo case)
    with pytest.raises(SourceADError) as info:
        sourcead.grad(bad.constant_view_written)(0.7, 5)
    err = info.value
    assert err.where is not None and err.where.line == _marked_line(bad.constant_view_written, "view")
    assert "`v` is a view of `a`" in err.message and "v = a[1:].copy()" in err.hint


def test_unknown_wrt_name_is_a_clear_error():
    with pytest.raises(SourceADError, match="not an argument of loop_sum; its arguments are: x, n"):
        sourcead.grad(bad.loop_sum, wrt="y")


def test_wrt_position_out_of_range():
    with pytest.raises(SourceADError, match="out of range"):
        sourcead.grad(bad.loop_sum, wrt=5)


def test_wrt_integer_argument_is_rejected():
    with pytest.raises(SourceADError, match="uses it as an integer"):
        sourcead.grad(bad.loop_sum, wrt="n")


def test_grad_of_array_result_is_rejected():
    with pytest.raises(SourceADError, match="grad needs a function that returns a float"):
        sourcead.grad(bad.returns_array)


def test_integer_array_for_wrt_argument_is_rejected():
    g = sourcead.grad(bad.loop_sum, wrt="x", jit=False)
    with pytest.raises(SourceADError, match="integer array"):
        g(np.arange(3), 3)


def test_wrong_argument_count_and_kind():
    g = sourcead.grad(bad.loop_sum, wrt="x", jit=False)
    with pytest.raises(SourceADError, match="takes 2 arguments"):
        g(np.ones(3))
    with pytest.raises(SourceADError, match="used as an integer"):
        g(np.ones(3), 2.5)
    with pytest.raises(SourceADError, match="must be a NumPy array"):
        g([1.0, 2.0], 2)


def test_frozen_global_is_read_like_numba_reads_it():
    g = sourcead.grad(bad.reads_frozen_global, jit=False)
    assert g(3.0) == bad.SCALE
