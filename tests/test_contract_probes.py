"""Probes (issue 40, item 5): an index no argument shape bounds, computable before the call
(`x[idx[k] - 1]`, `w[i * i]`, `w[e % n]`, a CSR matrix's `x[indices[p]]` for p in
range(indptr[i], indptr[i + 1])), is tested by one pass over its values at the call
(`analysis/contract_probe.py`, `build/probes.py`). In range, the variant without bounds checks
runs, parallel; out of range, the bounds-checked one, which fails where the user's code does
(negative indices count from the end, as in NumPy). Checked against central differences and the
dot-product test, with and without numba.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import probed_kernels as pk
import pytest
from numeric import assert_gradient_matches

import sourcead
from sourcead.build.probes import probe_source
from sourcead.errors import BoundsWarning, ShapeError
from sourcead.ir.types import Type
from sourcead.pipeline.driver import generate

RNG = np.random.default_rng(44)

_WRT = {
    "gather_shifted": "x",
    "gather_rows": "X",
    "scatter_shifted": "x",
    "squares": ("x", "w"),
    "ring_modulo": ("x", "w"),
    "csr_quadratic": ("values", "x"),
    "gather_whole": ("x", "w"),
    "csr_gather": ("values", "x"),
}
_CSR = (np.array([0, 2, 2, 5, 6]), np.array([1, 3, 0, 2, 3, 1]))  # 4 rows of a 4 x 4 matrix, one empty
_ARGS = {  # in range, negative indices among them
    "gather_shifted": lambda: (RNG.standard_normal(7), np.array([1, 5, -6, 3, 1, -2])),
    "gather_rows": lambda: (RNG.standard_normal((6, 2)), np.array([[0, 5], [2, 1], [-3, -1], [4, -4]])),
    "scatter_shifted": lambda: (RNG.standard_normal(5), np.array([0, 3, -5, 3, -1]), 5),
    "squares": lambda: (RNG.standard_normal(4), RNG.standard_normal(10)),
    "ring_modulo": lambda: (RNG.standard_normal(5), np.array([4, -3, 0, 11, -20]), RNG.standard_normal(3)),
    "csr_quadratic": lambda: (RNG.standard_normal(6), RNG.standard_normal(4), *_CSR),
    "gather_whole": lambda: (RNG.standard_normal(5), np.array([1, 1, -1, 4, -5]), RNG.standard_normal(3)),
    "csr_gather": lambda: (RNG.standard_normal(6), RNG.standard_normal(4), *_CSR),
}
_OUT_OF_RANGE = {  # (argument, value) of _ARGS with one index out of range, above or below
    "gather_shifted": [(1, np.array([1, 6, 2])), (1, np.array([3, 8, 1])), (1, np.array([-7, 2]))],
    "gather_rows": [(1, np.array([[0, 5], [2, 4]])), (1, np.array([[-7, 1]])), (1, np.array([[1, -8]]))],
    "scatter_shifted": [(1, np.array([0, 4])), (1, np.array([-7, 1]))],
    "csr_quadratic": [(2, np.array([0, 2, 2, 5, 7])), (3, np.array([1, 3, 0, 2, 4, 1])), (3, np.array([1, -5]))],
    "gather_whole": [(1, np.array([0, 5])), (1, np.array([-6, 2]))],
    "csr_gather": [(3, np.array([1, 3, 0, 2, 4, 1])), (3, np.array([1, 3, -5, 2, 3, 1]))],
}


@functools.cache
def _grad(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundsWarning)
        return sourcead.grad(getattr(pk, name), wrt=_WRT[name])


def _dispatchers(gradient):
    ((_key, variant),) = gradient._variants.items()
    return variant.call.fast, variant.call.checked


@pytest.mark.parametrize("name", sorted(_WRT))
def test_the_contract_probes_what_it_cannot_bound(name):
    kinds = {"idx": Type("int", 1).spec()} if name == "gather_whole" else None  # else idx is guessed an int
    contract = json.loads(generate(getattr(pk, name), "reverse", tuple(np.atleast_1d(_WRT[name])), kinds).contract)
    assert contract["complete"] and contract["uncovered"] == []
    assert any(fact.get("probe") for fact in contract["sufficient"])


@pytest.mark.parametrize("name", sorted(_WRT))
def test_indices_in_range_run_the_unchecked_variant_in_parallel(name):
    gradient = _grad(name)
    args = _ARGS[name]()
    got = gradient(*args)
    fast, checked = _dispatchers(gradient)
    assert len(fast.signatures) == 1 and len(checked.signatures) == 0  # the checked one never compiled
    # (numba empties the dict of parallel options it is given: False means serial)
    # csr_gather's adjoint is serial for another reason (its rows' slices of values_bar), said in its code
    serial = (
        name == "csr_gather" and "serial adjoint of a prange loop: its body reads or writes slices" in gradient.source
    )
    assert (fast.targetoptions.get("parallel") not in (None, False) or serial) and not fast.targetoptions.get(
        "boundscheck"
    )
    assert checked.targetoptions.get("boundscheck") and checked.targetoptions.get("parallel") in (None, False)
    assert_gradient_matches(getattr(pk, name), args, np.atleast_1d(_WRT[name]), got)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "python"])
@pytest.mark.parametrize("name", sorted(_WRT))
def test_probed_derivatives_pass_the_numeric_checks(name, jit):
    report = sourcead.check_derivative(getattr(pk, name), *_ARGS[name](), wrt=_WRT[name], jit=jit)
    assert report.ok, str(report)


@pytest.mark.parametrize(("name", "k"), [(n, k) for n, bad in _OUT_OF_RANGE.items() for k in range(len(bad))])
def test_an_index_out_of_range_runs_the_checked_variant_and_fails_where_the_code_does(name, k):
    args = list(_ARGS[name]())
    position, value = _OUT_OF_RANGE[name][k]
    args[position] = value
    with pytest.raises(IndexError):
        getattr(pk, name)(*args)  # the user's own code fails: so must the gradient, never run past
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(ShapeError, match="out of range|out of bounds|do not fit") as raised:
        _grad(name)(*args)
    assert raised.value.where is not None and raised.value.where.filename == pk.__file__
    assert all(np.array_equal(a, b) for a, b in zip(args, before, strict=True))  # nothing written
    assert len(_dispatchers(_grad(name))[1].signatures) == 1


def test_a_probe_that_asks_more_than_the_code_reads_falls_back_to_the_checked_variant():
    x = RNG.standard_normal(5)
    idx = np.array([0, 9, 4, -12, 2])  # 9 and -12 are read only under `if idx[k] < 5`: -12 is
    with pytest.raises(IndexError):
        pk.guarded_gather(x, idx)
    ok = np.array([0, 9, 4, 2, 2])  # 9 is never used as an index
    gradient = sourcead.grad(pk.guarded_gather, wrt="x")
    assert_gradient_matches(pk.guarded_gather, (x, ok), ("x",), gradient(x, ok))
    fast, checked = _dispatchers(gradient)
    assert len(checked.signatures) == 1 and len(fast.signatures) == 0
    with pytest.raises(ShapeError, match="out of range"):
        gradient(x, idx)


def test_the_probe_pass_is_one_loop_per_index():
    from sourcead.build.spec import Spec

    gen = generate(pk.gather_shifted, "reverse", ("x",))
    line = pk.gather_shifted.__code__.co_firstlineno + 4
    loop = [
        "    for _k in range(0, (a1.shape[0]), (1)):",
        "        _v = (a1[_k] {} (1))",
        "        if _v < -(a0.shape[0]) or _v >= (a0.shape[0]):",
        "            return False",
    ]
    expected = [
        f"# Generated by sourcead: the indices of {gen.entry} (gather_shifted) that the argument shapes",
        "# do not bound, each tested over its loops before the variant without bounds checks runs.",
        "",
        "",
        f"def probe({', '.join(f'a{k}' for k in range(len(gen.params)))}):",
        f"    # x[idx[k] - 1] (line {line})",
        *[part.format("-") for part in loop],
        f"    # x[idx[k] + 1] (line {line})",
        *[part.format("+") for part in loop],
        "    return True",
    ]
    assert probe_source(Spec.of(gen)).splitlines() == expected


def test_a_probed_index_is_named_once_in_a_warning_that_says_the_loops_stay_parallel():
    x, w = RNG.standard_normal(3), RNG.standard_normal(9)
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        gradient = sourcead.grad(pk.cubes, wrt=("x", "w"))
        gradient(x, w)
        gradient(x, w)
    ours = [m for m in found if issubclass(m.category, BoundsWarning)]
    assert len(ours) == 1
    line = pk.cubes.__code__.co_firstlineno + 6
    message = str(ours[0].message)
    assert f"do not bound the index `w[j]` (line {line})" in message
    assert "in parallel without bounds checks" in message
    assert ours[0].filename == pk.__file__ and ours[0].lineno == line
    assert_gradient_matches(pk.cubes, (x, w), ("x", "w"), gradient(x, w))


# --- row views: `cam = cams[c]` has the shape of a row of cams, so `cam[2]` is a shape fact ---------


def test_row_views_picked_by_data_keep_the_contract_complete_and_the_loop_parallel():
    from sourcead.build.jit import compiled_parallel

    contract = json.loads(generate(pk.picked_rows, "reverse", ("cams", "X")).contract)
    assert contract["complete"] and contract["uncovered"] == [] and contract["sufficient"] == []
    assert {"cam[2]", "p[1]"} <= {fact["access"] for fact in contract["facts"]}
    cams, X = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 2))
    obs = np.array([[0, 4], [2, -1], [-3, 0], [1, 1]])
    gradient = sourcead.grad(pk.picked_rows, wrt=("cams", "X"))
    got = gradient(cams, X, obs)
    ((_key, variant),) = gradient._variants.items()
    assert compiled_parallel(variant.compiled.spec)
    assert variant.call.targetoptions.get("parallel") not in (None, False)
    assert not variant.call.targetoptions.get("boundscheck")
    assert_gradient_matches(pk.picked_rows, (cams, X, obs), ("cams", "X"), got)
    with pytest.raises(ShapeError, match=r"cam\[2\]"):
        gradient(cams[:, :2], X, obs)  # a row of two: cam[2] is out of range in every iteration
    with pytest.raises(ShapeError, match="do not fit"):
        gradient(cams, X, np.array([[3, 0]]))  # a row that is not there
