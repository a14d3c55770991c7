"""A reversed inner loop whose incoming adjoints are all zero is skipped (`ReversePlan.zero_guard`).

Adjoint lines are linear in the adjoints they read: with all of them zero, the loop would only
add zeros, or nan where a primal value it multiplies is infinite (0 * inf). Skipping it gives the
same gradient where everything is finite, and the right one where a value that reaches no result
is not: k-means with a centroid at infinity, which is never the nearest.

A reversed loop that selects one iteration's value (a running minimum) stops once the adjoints its
body reads are zero (`ReversePlan.early_exit`): tests/selections.py, against finite differences
and forward mode, each with records reversed after the exit that a wrong pop would misread.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import selections
import zoo
from numeric import argument_index, assert_gradient_matches, copy_tree, random_like, vdot

import sourcead
from benchmarks import gradbench_workloads as workloads


def _nearest_gradients(points, centroids):
    """d/dpoints and d/dcentroids of sum_i min_c |p_i - c|^2 (the first nearest on ties)."""
    gp, gc = np.zeros_like(points), np.zeros_like(centroids)
    for i, p in enumerate(points):
        c = int(np.argmin(np.sum((centroids - p) ** 2, axis=1)))
        gp[i] += 2.0 * (p - centroids[c])
        gc[c] -= 2.0 * (p - centroids[c])
    return gp, gc


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    centroids = rng.standard_normal((5, 3))
    centroids[2] = np.inf  # never the nearest: its distances are inf, its differences -inf
    return rng.standard_normal((40, 3)), centroids


def test_a_centroid_at_infinity_leaves_the_serial_gradient_finite(data):
    points, centroids = data
    with np.errstate(all="ignore"):
        gp, gc = sourcead.grad(zoo.nearest_centroid, wrt=("points", "centroids"))(points, centroids)
    expected_p, expected_c = _nearest_gradients(points, centroids)
    np.testing.assert_allclose(gp, expected_p, rtol=1e-13, atol=0)
    np.testing.assert_allclose(gc, expected_c, rtol=1e-13, atol=0)


def test_a_centroid_at_infinity_leaves_the_parallel_gradient_finite(data):
    points, centroids = data
    gradient = sourcead.grad(workloads.kmeans_cost, wrt="centroids")
    with np.errstate(all="ignore"):
        gc = gradient(points, centroids)
    np.testing.assert_allclose(gc, _nearest_gradients(points, centroids)[1], rtol=1e-13, atol=0)
    assert "if d2_bar != 0.0 or t_bar != 0.0:" in gradient.source  # the inner loop's guard


# --- a selecting loop's reversal stops once its adjoints are zero (ReversePlan.early_exit) ------

_SELECTIONS = {
    "min_after_branches": (("x", "y"), lambda rng: (rng.standard_normal(11), rng.standard_normal(9))),
    "strided_extremes": (("a", "w"), lambda rng: (rng.standard_normal((4, 10)), 0.7)),
    "stepped_maximum": (("x",), lambda rng: (rng.standard_normal(13), 3)),
    "maximum_until": (("x",), lambda rng: (rng.uniform(0.0, 1.0, 12), 0.9)),
}


@functools.cache
def _selection(name: str, mode: str, jit: bool):
    f = getattr(selections, name)
    wrt = _SELECTIONS[name][0]
    return sourcead.grad(f, wrt=wrt, jit=jit) if mode == "grad" else sourcead.jvp(f, wrt=wrt)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("name", sorted(_SELECTIONS))
def test_selecting_loops_stop_early_and_match_finite_differences(name, jit):
    f = getattr(selections, name)
    wrt, make = _SELECTIONS[name]
    gradient = _selection(name, "grad", jit)
    assert "once these adjoints are zero" in gradient.source  # the exit this checks is there
    for seed in range(6):
        args = make(np.random.default_rng(seed))
        got = gradient(*copy_tree(args))
        assert_gradient_matches(f, copy_tree(args), wrt, got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(_SELECTIONS))
def test_selecting_loops_forward_against_reverse(name):
    """<J v, w> from forward mode against <v, J^T w> from the reverse mode that stops early."""
    f = getattr(selections, name)
    wrt, make = _SELECTIONS[name]
    for seed in range(6):
        rng = np.random.default_rng(50 + seed)
        args = make(rng)
        tangents = tuple(random_like(rng, args[argument_index(f, w)]) for w in wrt)
        _, forward = _selection(name, "jvp", True)(*copy_tree(args), tangents=tangents)
        reverse = _selection(name, "grad", True)(*copy_tree(args))
        reverse = reverse if isinstance(reverse, tuple) else (reverse,)
        dot = sum(vdot(t, g) for t, g in zip(tangents, reverse, strict=True))
        assert abs(forward - dot) <= 1e-10 * max(1.0, abs(dot))
