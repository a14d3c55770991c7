"""Issue 40: the sourcead bugs NPBench's ports found (`programs/npbench_found.py`), each checked by
`sourcead.check_derivative` as plain Python (jvp, vjp and grad against Ridders' central differences
and the dot-product test) and compiled (its gradient and tangent equal the plain ones); the true
second names next to them stay refused at the user's line."""

from __future__ import annotations

import inspect

import npbench_found as k
import numpy as np
import pytest
from numeric import assert_compiled_equals_plain

import sourcead
from sourcead import SourceADError


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


SUPPORTED = {
    "fresh_result_in_loop": (k.fresh_result_in_loop, lambda r: (r.uniform(0.2, 1.0, 6), r.uniform(0.2, 1.0, 6), 0.3)),
    "fresh_result_in_while": (k.fresh_result_in_while,
                              lambda r: (r.uniform(0.2, 1.0, 6), r.uniform(0.2, 1.0, 6), 0.3)),
    "own_name_dead_after_rename": (k.own_name_dead_after_rename,
                                   lambda r: (r.uniform(0.2, 1.0, 5), r.uniform(0.2, 1.0, 5))),
    "rebound_linear": (k.rebound_linear, lambda r: (r.uniform(-1.0, 1.0, (4, 5)),)),
    "mask_rebound_in_loop": (k.mask_rebound_in_loop,
                             lambda r: (r.uniform(0.2, 1.2, 7), r.uniform(0.5, 1.5, 7))),
    # seeded away from np.where's kinks (finite differences across one do not settle)
    "hdiff_like": (k.hdiff_like, lambda _: (_rng(2).uniform(0.0, 1.0, (7, 8, 2)),
                                            _rng(2).uniform(0.0, 1.0, (3, 4, 2)))),
}  # fmt: skip


def _case(name: str) -> tuple:
    func, make = SUPPORTED[name]
    args = make(_rng(len(name)))
    return func, args, tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_found_bug_is_fixed(name):
    func, args, wrt = _case(name)
    report = sourcead.check_derivative(func, *args, wrt=wrt, jit=False)
    assert report.ok, str(report)


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_found_bugs_compiled_derivatives_equal_the_checked_plain_ones(name):
    assert_compiled_equals_plain(*_case(name))


def _line(func) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, text in enumerate(lines) if "# refused" in text)


@pytest.mark.parametrize(
    "func, at, needle",
    [
        (k.returns_its_argument_in_loop, k.returns_its_argument_in_loop,
         "`b = _same(a)` makes `b` a second name for `a`"),
        (k.returns_a_view_in_loop, k._tail, "`t` is a view of `u` (a row or slice), and `u` is written"),
        (k.own_name_read_after_rename, k.own_name_read_after_rename, "`b = a` makes two names for one array"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)  # fmt: skip
def test_a_true_second_name_stays_refused(func, at, needle):
    u, p = _rng(1).uniform(0.2, 1.0, 5), _rng(2).uniform(0.2, 1.0, 5)
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, wrt=(0, 1), jit=False)(u, p)
    err = info.value
    assert needle in str(err), str(err)
    assert err.hint and ".copy()" in err.hint
    assert err.where is not None and err.where.filename.endswith("npbench_found.py"), str(err)
    assert err.where.line == _line(at)
