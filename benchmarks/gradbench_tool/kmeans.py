"""GradBench's ``kmeans``: ``cost`` is sum_i min_j |C_j - P_i|^2; ``dir`` is the Newton direction
J H^-1 of that cost in the centroids C. H is diagonal (each centroid's coordinates enter only
through their own squared distances, with no cross terms), so H times a vector of ones is its
diagonal exactly: ``dir`` is sourcead's gradient divided elementwise by sourcead's hvp along ones."""

from __future__ import annotations

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {
    "points": [[0.1, 0.2], [0.9, 0.8], [0.2, 0.1], [0.8, 0.95], [0.5, 0.4]],
    "centroids": [[0.0, 0.0], [1.0, 1.0]],
    "min_runs": 1,
    "min_seconds": 0.0,
}


def kmeans_cost(points, centroids):
    n = points.shape[0]
    d = points.shape[1]
    k = centroids.shape[0]
    total = 0.0
    for i in range(n):
        closest = np.inf
        for j in range(k):
            dist = 0.0
            for r in range(d):
                diff = points[i, r] - centroids[j, r]
                dist += diff * diff
            if dist < closest:
                closest = dist
        total += closest
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
