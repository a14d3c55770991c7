"""A reversed inner loop whose incoming adjoints are all zero is skipped (`ReversePlan.zero_guard`).

Adjoint lines are linear in the adjoints they read: with all of them zero, the loop would only
add zeros, or nan where a primal value it multiplies is infinite (0 * inf). Skipping it gives the
same gradient where everything is finite, and the right one where a value that reaches no result
is not: k-means with a centroid at infinity, which is never the nearest.
"""

from __future__ import annotations

import numpy as np
import pytest
import zoo

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
