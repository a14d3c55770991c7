"""The gradient of a loss summed over data shards, on the worker processes of a Dask cluster.

A prepared gradient pickles as its recipe (the function by module and name, the transform, wrt);
each worker rebuilds it from sourcead's disk cache, without running the compiler, and numba
loads the machine code. The shards are sent to the workers once and stay there: per step only
the parameters travel out and one gradient per shard comes back. Checked against the gradient of
the whole data set in this process.
Run: ``python examples/dask_shards.py [ROWS]`` (a few seconds, most of it starting the cluster).
"""

import math
import sys
import time

import numpy as np
from distributed import Client, LocalCluster, wait

import sourcead


def logistic_loss(w, X, y):
    """Sum over the rows of log(1 + exp(-y x.w)): the loss of one shard (or of all the data)."""
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += math.log1p(math.exp(-y[i] * z))
    return s


grad = sourcead.grad(logistic_loss)


def make_data(n=2_000_000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    return X, y


def median_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, sorted(times)[len(times) // 2]


def main(n_rows=2_000_000, n_workers=2):
    X, y = make_data(n_rows)
    w = np.full(X.shape[1], 0.1)
    grad(w, X[:10], y[:10])  # compile once here (or load from the disk cache): workers reuse it
    expected, t_single = median_time(lambda: grad(w, X, y))

    start = time.perf_counter()
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            started = time.perf_counter() - start
            bounds = np.linspace(0, X.shape[0], n_workers + 1).astype(int)  # one shard per worker
            shards = [client.scatter((X[a:b], y[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            wait(shards)

            def distributed_gradient():
                parts = [client.submit(lambda s, w: grad(w, *s), s, w, pure=False) for s in shards]
                return sum(client.gather(parts))  # one array of 8 floats back per shard

            start = time.perf_counter()
            first = distributed_gradient()  # the workers unpickle the gradient and load its code
            t_first = time.perf_counter() - start
            total, t_dist = median_time(distributed_gradient)

    print(f"gradient of a logistic loss over {X.shape[0]:,} rows x {X.shape[1]} features")
    print(f"  one process:               {t_single * 1e3:7.1f} ms")
    print(
        f"  {n_workers} Dask worker processes:  {t_dist * 1e3:7.1f} ms ({t_single / t_dist:.2f}x), {len(shards)} shards"
    )
    print(
        f"  first distributed gradient: {t_first * 1e3:6.0f} ms (workers rebuild it from the disk cache); "
        f"cluster start {started:.1f} s"
    )
    err = np.max(np.abs(total - expected)) / np.max(np.abs(expected))
    print(f"  relative difference from the one-process gradient: {err:.1e}")
    assert err < 1e-12 and np.allclose(first, total, rtol=1e-12)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
