"""Module-level functions for the bridge and pickling tests (pickle finds them by module and name)."""

import math
import pickle
import sys
import time

import numba
import numpy as np

import sourcead


def loss(w, X, y, lam):
    """Ridge regression in loops: a float of a vector, a matrix, a vector and a float."""
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += (z - y[i]) ** 2
    for j in range(w.shape[0]):
        s += lam * w[j] * w[j]
    return s


def shard_loss(w, X, y, lo, hi):
    """The same loss over the rows lo..hi (ints pass through)."""
    s = 0.0
    for i in range(lo, hi):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += math.log(1.0 + math.exp(-y[i] * z))
    return s


def squares(x, c):
    """An array result and a float result."""
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = c * x[i] * x[i]
    return y, c * c


def writes(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]
        s += out[i]
    return s


@numba.njit
def jitted_cubes(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] ** 3
    return s


@sourcead.differentiable
def decorated(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(k * x[i])
    return s


def first_result(blob, *args, **kwargs):
    """In a worker: unpickle a prepared object and call it; the seconds this took, and whether
    the pipeline (libcst) had to be imported for it."""
    had_libcst = "libcst" in sys.modules
    start = time.perf_counter()
    prepared = pickle.loads(blob)
    result = prepared(*args, **kwargs)
    return result, time.perf_counter() - start, had_libcst or "libcst" in sys.modules


def call(prepared, *args, **kwargs):
    return prepared(*args, **kwargs)


def run_example(name, *args):
    """Run examples/NAME as a script (as a user would), and return what it printed."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, str(root / "examples" / name), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout
