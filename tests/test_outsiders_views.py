"""Issue 38, findings 6 and 7: two names for one array that reverse mode still refuses, positioned
at the user's line and column and worded in the user's names; and the written-argument spellings
of what it now accepts (outside the zoo, which has no written arguments), checked numerically."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import sourcead
from sourcead.errors import SourceADError

# --- refused: a second name that is written, or whose array is written, while the other is read ---


def _same(u):
    return u


def _tail(u):
    return u[1:]


def helper_returns_its_argument(x):
    y = _same(x)  # error: here
    y[0] = 0.0
    return np.sum(y * y)


def helper_returns_a_view(x):
    y = _tail(x)  # error: here
    y[0] = 0.0
    return np.sum(x * x)


def row_written(B):
    s = 0.0
    for row in B:
        row[0] = 0.0  # error: here
        s += np.sum(np.sin(row))
    return s


def row_accumulated(B):
    # `row += ...` writes B in place: was a silently wrong gradient
    s = 0.0
    for row in B:
        row += B[0] * 0.5  # error: here
        s += np.sum(np.sin(row))
    return s


def array_written_while_row_read(B):
    s = 0.0
    for i, row in enumerate(B):
        B[i, 0] = s  # error: here
        s += np.sum(np.sin(row))
    return s


def array_written_while_transposed_rows_read(A, B):
    s = 0.0
    for a, b in zip(A, B.T):  # noqa: B905 (numba takes no strict=)
        B[0, 0] = s  # error: here
        s += np.sum(a * b)
    return s


def renamed_then_accumulated(x):
    # `z += ...` writes y too: was a silently wrong gradient
    y = x * 1.0
    z = y  # error: here
    z += x * x
    return np.sum(y * z)


def slice_read_after_its_array_written(x):
    y = x[1:]  # error: here
    x[0] = 2.0
    return np.sum(y * y)


def _tail_written(u):
    w = u[1:]  # error: here
    w[0] = 0.0
    return np.sum(w)


def helper_writes_a_view_of_its_argument(x):
    c = x * 1.0
    return _tail_written(c)


def _rows_written(M):
    s = 0.0
    for r in M:
        r[0] = 1.0  # error: here
        s += np.sum(r)
    return s


def helper_writes_its_rows(B):
    C = B * 1.0
    return _rows_written(C)


def _renamed_written(u):
    v = u  # error: here
    v[0] = 2.0
    return np.sum(v * u)


def helper_renames_its_argument_then_writes(x):
    c = x * 1.0
    return _renamed_written(c)


# a second name written while only the first is read later: the second name carried no derivative
# (activity saw it useless), a silently wrong gradient and jvp in both modes (found after merging)
def second_name_written_whole(C, B):
    D = C  # error: here
    D[:, :] = D * 1.2
    return np.sum(C * B)


def second_name_written_element(C, B):
    D = C  # error: here
    D[0, 0] = 3.0 * B[0, 0]
    return np.sum(C * B)


def raveled_then_written(x):
    # np.ravel returns its argument's memory: was not declared a view (silently wrong, both modes)
    y = np.ravel(x)  # error: here
    y[0] = 5.0
    return np.sum(x * x)


def _reads_column(C, B):
    C[0, 2] = 1.0
    return np.sum(B * B)


def helper_reads_a_view_after_its_array_written(A):
    return _reads_column(A, A[:, 2])  # error: here


def _writes_column(C, B):
    B[0] = 2.0
    return np.sum(C * C)


def helper_writes_a_view_argument(A):
    return _writes_column(A, A[:, 2])  # error: here


REFUSED = [
    (
        helper_reads_a_view_after_its_array_written,
        "_reads_column(A",
        "`A` is written (line",
        "A[:, 2].copy()",
    ),
    (
        helper_writes_a_view_argument,
        "_writes_column(A",
        "`_writes_column` writes into its argument `A[:, 2]`, a view of `A`, so it writes `A` too",
        "A[:, 2].copy()",
    ),
    (second_name_written_whole, "D = C", "`D = C` makes two names for one array that is then written", "D = C.copy()"),
    (second_name_written_element, "D = C", "`D = C` makes two names for one array", "D = C.copy()"),
    (raveled_then_written, "y = np.ravel(x)", "`y` is a view of `x` (`np.ravel` returns a view)", "np.ravel(x).copy()"),
    (
        helper_returns_its_argument,
        "y = _same(x)",
        "`y = _same(x)` makes `y` a second name for `x`",
        "y = _same(x).copy()",
    ),
    (
        helper_returns_a_view,
        "y = _tail(x)",
        "`y` is a view of `x` (`_tail(x)` returns a view of it)",
        "y = _tail(x).copy()",
    ),
    (
        row_written,
        "row[0]",
        "`row` is a row of `B` (`for row in B`), so writing `row` writes `B` too",
        "row_copy = row.copy()",
    ),
    (row_accumulated, "row +=", "`row` is a row of `B` (`for row in B`), so writing `row` writes `B` too", "B[i, ...]"),
    (
        array_written_while_row_read,
        "B[i, 0]",
        "`B` is written here while `row`, a row of it (`for i, row in enumerate(B)`), is still read",
        "for i, row in enumerate(B.copy())",
    ),
    (
        array_written_while_transposed_rows_read,
        "B[0, 0]",
        "`B` is written here while the loop `for a, b in zip(A, B.T)` reads a view of it",
        "for a, b in zip(A, B.copy().T)",
    ),
    (helper_writes_a_view_of_its_argument, "w = u[1:]", "`w` is a view of `u` (a row or slice)", "w = u[1:].copy()"),
    (helper_writes_its_rows, "r[0]", "`r` is a row of `M` (`for r in M`), so writing `r` writes `M` too", "M[i, ...]"),
    (helper_renames_its_argument_then_writes, "v = u", "`v = u` makes two names for one array", "v = u.copy()"),
    (renamed_then_accumulated, "z = y", "`z = y` makes two names for one array that is then written", "z = y.copy()"),
    (
        slice_read_after_its_array_written,
        "y = x[1:]",
        "`y` is a view of `x` (a row or slice), and `x` is written (line",
        "y = x[1:].copy()",
    ),
]


def _marked(func) -> tuple[int, str]:
    """The line marked `# error: here` in `func` or the helper it calls."""
    for candidate in (func, *(v for v in func.__globals__.values() if inspect.isfunction(v))):
        if candidate is not func and candidate.__name__ not in func.__code__.co_names:
            continue
        lines, first = inspect.getsourcelines(candidate)
        for offset, text in enumerate(lines):
            if "# error: here" in text:
                return first + offset, text
    raise AssertionError(f"no '# error: here' line in {func.__name__}")


def _arguments(func):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((4, 4) if name.isupper() else 5) for name in inspect.signature(func).parameters]


@pytest.mark.parametrize("func, token, message, hint", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_refused_at_the_users_line_in_the_users_names(func, token, message, hint):
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=False)(*_arguments(func))
    err = info.value
    line, text = _marked(func)
    assert err.where is not None and err.where.filename.endswith("test_outsiders_views.py")
    assert (err.where.line, err.where.column) == (line, text.index(token))
    assert message in err.message
    assert hint in err.hint
    for made in (
        "result",
        "`k`",
        "k]",
        "seq",
        "_same_u",
        "_tail_u",
        "_tail_written_w",
        "_rows_written_r",
        "`c`",
        "`C`",
    ):
        assert made not in err.message + err.hint


@pytest.mark.parametrize("func", [f for f, *_ in REFUSED], ids=lambda f: f.__name__)
def test_forward_mode_follows_the_second_name(func):
    # jvp runs the tangents through the same names, so it takes what reverse mode refuses
    args = _arguments(func)
    tangents = tuple(np.random.default_rng(2).standard_normal(a.shape) for a in args)
    value, tangent = sourcead.jvp(func, wrt=tuple(range(len(args))), jit=False)(
        *[a.copy() for a in args], tangents=tangents
    )
    first = value[0] if isinstance(value, tuple) else value
    derivative = tangent[0] if isinstance(tangent, tuple) else tangent
    h = 1e-6
    ahead = func(*[a + h * t for a, t in zip(args, tangents, strict=True)])
    behind = func(*[a - h * t for a, t in zip(args, tangents, strict=True)])
    assert np.isclose(first, func(*[a.copy() for a in args]), rtol=1e-12)
    assert np.isclose(derivative, (ahead - behind) / (2 * h), rtol=1e-6, atol=1e-8)


# --- accepted: the written-argument spellings of findings 6 and 7 -------------------------------


def _doubled(u):
    return u * 2.0


def finding_6(x):
    y = _doubled(x)
    y[0] = 0.0
    return np.sum(y * y)


def finding_7(B):
    s = 0.0
    for row in B:
        s += np.sum(np.sin(row))
    B[0, 0] = 1.0
    return s


def rows_then_last_row_written_each_step(B):
    # the row the next step reads first is the one written between steps
    s = 0.0
    for t in range(3):
        for row in B:
            s += np.sum(np.sin(row))
        B[3, t] = s * 0.5
    return s


def zipped_rows_then_both_written(A, B):
    s = 0.0
    for a, b in zip(A, B):  # noqa: B905 (numba takes no strict=)
        s += np.sum(a * np.sin(b))
    A[0, 0] = 2.0 * B[0, 0]
    B[1, 1] = 0.5
    return s


def enumerated_rows_then_written(B, c):
    s = 0.0
    for i, row in enumerate(B):
        s += np.sum(np.sin(row * c)) * (i + 1.0)
    B[1, :] = c * B[0, :]
    return s


@pytest.mark.parametrize(
    "func",
    [finding_6, finding_7, rows_then_last_row_written_each_step, zipped_rows_then_both_written],
    ids=lambda f: f.__name__,
)
def test_accepted_and_right(func):
    args = _arguments(func)
    report = sourcead.check_derivative(func, *args, wrt=tuple(range(len(args))), jit=False)
    assert report.ok, str(report)


def test_accepted_with_a_float_argument_too():
    B = np.random.default_rng(1).standard_normal((4, 3))
    report = sourcead.check_derivative(enumerated_rows_then_written, B, 0.7, wrt=(0, 1), jit=False)
    assert report.ok, str(report)


def hint_copy_of_the_row(B):
    # what the refusal of `row[0] = ...` says to write
    s = 0.0
    for row in B:
        row_copy = row.copy()
        row_copy[0] = 0.0
        s += np.sum(np.sin(row_copy))
    return s


def hint_loop_over_a_copy(B):
    # what the refusal of `B[i, 0] = s` while `row` is read says to write
    s = 0.0
    for i, row in enumerate(B.copy()):
        B[i, 0] = s
        s += np.sum(np.sin(row))
    return s + np.sum(B * B)


@pytest.mark.parametrize("func", [hint_copy_of_the_row, hint_loop_over_a_copy], ids=lambda f: f.__name__)
def test_what_the_hints_say_is_accepted_and_right(func):
    args = _arguments(func)
    report = sourcead.check_derivative(func, *args, wrt=0, jit=False)
    assert report.ok, str(report)
