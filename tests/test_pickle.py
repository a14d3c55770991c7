"""Prepared derivatives pickle as their recipe, and rebuild from the disk cache in other processes:
`multiprocessing` (spawn), `ProcessPoolExecutor` and Dask workers."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor

import bridge_functions as bf
import numpy as np
import pytest

import sourcead
from sourcead.api.pickling import function_ref, resolve

RNG = np.random.default_rng(7)
W, X, Y = RNG.standard_normal(3), RNG.standard_normal((30, 3)), RNG.standard_normal(30)
ARGS = (W, X, Y, 0.1)


def same(a, b):
    if isinstance(b, tuple):
        return isinstance(a, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def every_transform():
    x = np.array([0.5, 1.0, -2.0])
    return [
        (sourcead.grad(bf.loss, wrt=(0, 3)), ARGS, {}),
        (sourcead.value_and_grad(bf.loss), ARGS, {}),
        (sourcead.vjp(bf.squares, wrt=(0, 1)), (x, 1.5), {"cotangent": (np.ones(3), 1.0)}),
        (sourcead.jvp(bf.squares, wrt=0), (x, 1.5), {"tangents": np.ones(3)}),
        (sourcead.grad(bf.writes), (x, np.zeros(3)), {}),
        (sourcead.grad(bf.loss, jit=False), ARGS, {}),
        (sourcead.grad(bf.jitted_cubes), (x,), {}),  # the module's name holds a numba dispatcher
        (bf.decorated.grad(0), (x, 2.0), {}),  # ... or a @differentiable
        (bf.decorated, (x, 2.0), {}),
    ]


def test_round_trip_in_process_gives_the_same_results():
    for prepared, args, kwargs in every_transform():
        again = pickle.loads(pickle.dumps(prepared))
        assert type(again) is type(prepared)
        assert same(again(*args, **kwargs), prepared(*args, **kwargs)), prepared


def test_the_module_s_own_differentiable_comes_back():
    assert pickle.loads(pickle.dumps(bf.decorated)) is bf.decorated


def test_functions_travel_by_module_and_qualified_name():
    assert function_ref(bf.loss) == ("module", "bridge_functions", "loss")
    assert function_ref(bf.jitted_cubes.py_func) == ("module", "bridge_functions", "jitted_cubes")
    assert len(pickle.dumps(sourcead.grad(bf.loss))) < 300  # a recipe, not code
    assert resolve(("module", "bridge_functions", "decorated")) is bf.decorated.__sourcead_func__


def test_what_cannot_travel_says_so():
    def local(x):
        return x * 2.0

    with pytest.raises((pickle.PicklingError, AttributeError), match="local"):
        pickle.dumps(sourcead.grad(local))
    with pytest.raises(sourcead.SourceADError, match="has no nowhere"):
        resolve(("module", "bridge_functions", "nowhere"))
    with pytest.raises(sourcead.SourceADError, match="must be able to import"):
        resolve(("module", "no_such_module_here", "f"))


def test_multiprocessing_spawn_pool():
    g = sourcead.grad(bf.loss, wrt=(0, 3))
    expected = g(*ARGS)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(bf.call, [(g, *ARGS)] * 4)
    assert all(same(r, expected) for r in results)


def test_process_pool_executor_first_result_from_the_disk_cache():
    """A spawned worker rebuilds the gradient from the disk cache: the pipeline never runs there."""
    g = sourcead.grad(bf.loss, wrt=(0, 3))
    expected = g(*ARGS)
    blob = pickle.dumps(g)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        result, seconds, pipeline_ran = pool.submit(bf.first_result, blob, *ARGS).result()
        again, later, _ = pool.submit(bf.first_result, blob, *ARGS).result()
    assert same(result, expected) and same(again, expected)
    assert not pipeline_ran
    print(f"unpickled gradient, spawned worker, first result: {seconds * 1e3:.0f} ms, then {later * 1e6:.0f} us")
    assert later < seconds


def test_a_script_s_functions_travel_to_spawned_workers(tmp_path):
    """Functions of `__main__`, also under a decorator, reach spawned workers."""
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import multiprocessing, pickle
            import numpy as np
            import sourcead

            @sourcead.differentiable
            def cubes(x):
                s = 0.0
                for i in range(x.shape[0]):
                    s += x[i] ** 3
                return s

            def plain(x):
                s = 0.0
                for i in range(x.shape[0]):
                    s += x[i] * x[i]
                return s

            def run(g):
                return g(np.arange(3.0))

            if __name__ == "__main__":
                items = [cubes.grad(0), sourcead.grad(plain), cubes]
                with multiprocessing.get_context("spawn").Pool(1) as pool:
                    print(pool.map(run, items))
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "[array([ 0.,  3., 12.]), array([0., 2., 4.]), 9.0]", out.stderr


def test_dask_workers():
    pytest.importorskip("distributed", reason="Dask is an extra: pip install 'sourcead[dask]'")
    from distributed import Client, LocalCluster

    g = sourcead.grad(bf.shard_loss)
    bounds = [(0, 10), (10, 20), (20, 30)]
    expected = sum(g(W, X, Y, lo, hi) for lo, hi in bounds)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            futures = [client.submit(bf.call, g, W, X, Y, lo, hi, pure=False) for lo, hi in bounds]
            total = sum(client.gather(futures))
    np.testing.assert_allclose(total, expected, rtol=1e-13)


def test_dask_example_from_a_script():
    """The example's functions live in `__main__`: Dask workers load the script by its path."""
    pytest.importorskip("distributed", reason="Dask is an extra: pip install 'sourcead[dask]'")
    out = bf.run_example("dask_shards.py", 40_000)
    assert "relative difference from the one-process gradient" in out, out


def test_bridge_functions_pickle_too():
    torch = pytest.importorskip("torch", reason="PyTorch is an extra: pip install 'sourcead[torch]'")
    import sourcead.torch

    F = pickle.loads(pickle.dumps(sourcead.torch.function(bf.loss, wrt=(0, 3))))
    w = torch.tensor(W, requires_grad=True)
    F(w, torch.from_numpy(X), torch.from_numpy(Y), 0.1).backward()
    np.testing.assert_array_equal(w.grad.numpy(), sourcead.grad(bf.loss)(*ARGS))
