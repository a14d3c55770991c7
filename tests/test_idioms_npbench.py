"""Issue 40, item 2: NPBench's kernels differentiated as written. Each supported idiom
(`programs/idioms_npbench.py`) is checked by `sourcead.check_derivative` (jvp, vjp and grad against
Ridders' central differences, the dot-product test, and hvp to second order), compiled and as plain
Python; each refused one is refused at the user's line, in the user's names, with what to write."""

from __future__ import annotations

import inspect

import idioms_npbench as k
import numpy as np
import pytest

import sourcead
from sourcead import SourceADError


def _line(func) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, text in enumerate(lines) if "# refused" in text)


def _refused(func, *args, needle: str, token: str) -> SourceADError:
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=False)(*args)
    err = info.value
    assert needle in str(err), str(err)
    assert err.hint
    assert err.where is not None and err.where.filename.endswith("idioms_npbench.py"), str(err)
    assert err.where.line == _line(func)
    assert err.where.source_line[err.where.column :].startswith(token)
    return err


@pytest.mark.parametrize(
    "func, args, needle, token",
    [
        (k.undeclared_numpy, (np.ones((3, 3)),), "`np.tri` is a NumPy function that sourcead does not declare",
         "np.tri("),
        (k.undeclared_scipy, (np.eye(2) + 1.0, np.ones(2)), "`scipy.linalg.solve` is a SciPy function", "scipy."),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)  # fmt: skip
def test_an_undeclared_library_function_is_refused_at_the_users_call(func, args, needle, token):
    _refused(func, *args, needle=needle, token=token)
