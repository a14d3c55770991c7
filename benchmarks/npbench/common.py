"""Helpers shared by the NPBench ports: index grids for the deterministic inputs."""

from __future__ import annotations

import numpy as np


def grid(rows: int, cols: int):
    """Row and column index of every entry of a rows x cols matrix, as float64 arrays."""
    i, j = np.indices((rows, cols), dtype=np.float64)
    return i, j


def rng(seed: int = 42) -> np.random.Generator:
    return np.random.default_rng(seed)


def lower_spd(N: int) -> np.ndarray:
    """NPBench's positive definite test matrix: L L^T with L lower, rows (-j % N) / N + 1, unit diagonal."""
    i, j = grid(N, N)
    L = np.where(j <= i, (-j % N) / N + 1.0, 0.0)
    L[np.arange(N), np.arange(N)] = 1.0
    return L @ L.T
