"""GradBench's ``kmeans``: ``cost`` is sum_i min_j |C_j - P_i|^2; ``dir`` is the Newton direction
J H^-1 of that cost in the centroids C. H is diagonal (each centroid's coordinates enter only
through their own squared distances, with no cross terms), so H times a vector of ones is its
diagonal exactly: ``dir`` is sourcead's gradient divided elementwise by sourcead's hvp along ones.
(Exact because the cost is piecewise quadratic: on each piece, d2 cost / dC_jr dC_j'r' is 2 n_j
when (j, r) = (j', r'), n_j the number of points nearest to C_j, and 0 otherwise.)

The points are a ``prange`` loop (a sum reduction); the primal is compiled parallel as the
derivative is, so that both run on the same threads. ``benchmarks.gradbench_workloads`` uses this
same function."""

from __future__ import annotations

import math

import numpy as np
from numba import prange

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {
    "points": [[0.1, 0.2], [0.9, 0.8], [0.2, 0.1], [0.8, 0.95], [0.5, 0.4]],
    "centroids": [[0.0, 0.0], [1.0, 1.0]],
    "min_runs": 1,
    "min_seconds": 0.0,
}


def kmeans_cost(points, centroids):
    total = 0.0
    for i in prange(points.shape[0]):
        best = math.inf
        for c in range(centroids.shape[0]):
            d2 = 0.0
            for j in range(points.shape[1]):
                t = points[i, j] - centroids[c, j]
                d2 += t * t
            if d2 < best:
                best = d2
        total += best
    return total


def decode(raw):
    return vector(raw["points"]), vector(raw["centroids"])


def define(jit: bool) -> dict[str, Function]:
    gradient = sourcead.grad(kmeans_cost, wrt="centroids", jit=jit)
    curvature = sourcead.hvp(kmeans_cost, wrt="centroids", jit=jit)

    def direction(points, centroids):
        return gradient(points, centroids) / curvature(points, centroids, tangents=np.ones_like(centroids))

    return {
        "cost": Function(decode, primal(kmeans_cost, jit), number),
        "dir": Function(decode, direction, as_list),
    }
