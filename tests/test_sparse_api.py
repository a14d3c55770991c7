"""The sparse objects as objects: pickled as their recipe, called from many threads, tuple wrt
blocks, and `sourcead sparsity` on the command line (exit code 2 on bad input)."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

import numpy as np
import pytest
import sparse_zoo as zoo
from _sourcead_cli.main import main
from click.testing import CliRunner

import sourcead as ad

ROOT = Path(__file__).resolve().parent.parent
ZOO = str(ROOT / "tests" / "programs" / "sparse_zoo.py")


@pytest.mark.parametrize(
    "make",
    [
        lambda: ad.sparsity(zoo.banded),
        lambda: ad.sparsity(zoo.rosenbrock, of="hessian"),
        lambda: ad.jacobian(zoo.banded, sparse=True, jit=False, mode="reverse", memory="1MB"),
        lambda: ad.hessian(zoo.rosenbrock, sparse=True, jit=False),
    ],
)
def test_pickles_as_its_recipe(make):
    obj = make()
    x = np.linspace(-0.5, 0.5, 9)
    again = pickle.loads(pickle.dumps(obj))
    assert type(again) is type(obj)
    first, second = obj(x), again(x)
    assert (first != second).nnz == 0 and first.shape == second.shape


def test_many_threads_share_one_object():
    jac = ad.jacobian(zoo.five_point, sparse=True, jit=False)
    points = [np.random.default_rng(k).uniform(-1, 1, (4, 6)) for k in range(6)]
    expected = [ad.jacobian(zoo.five_point, jit=False)(u).reshape(24, 24) for u in points]
    results: list = [None] * len(points)

    def work(k: int) -> None:
        results[k] = jac(points[k]).toarray()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(points))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_tuple_wrt_gives_blocks():
    x, y = np.linspace(0.1, 0.5, 5), np.linspace(-1, 1, 5)
    Hxx, Hxy = ad.hessian(zoo.block_energy, (0, 1), sparse=True, jit=False)(x, y)[0]
    dense = ad.hessian(zoo.block_energy, (0, 1), jit=False)(x, y)
    assert np.array_equal(Hxx.toarray(), dense[0][0]) and np.array_equal(Hxy.toarray(), dense[0][1])
    Px, Py = ad.sparsity(zoo.accidental_zeros, (0, 1))(x, y)
    assert Px.shape == Py.shape == (5, 5)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_cli_prints_size_nonzeros_colours_and_static(tmp_path):
    result = run("sparsity", f"{ZOO}:five_point", "--wrt", "u", "--shape", "u=6x6")
    assert result.exit_code == 0, result.output
    assert "size       36 x 36" in result.output and "nonzeros   180" in result.output
    assert "static     yes" in result.output and "forward" in result.output
    branch = run("sparsity", f"{ZOO}:data_branch", "--wrt", "x", "--shape", "x=10")
    assert branch.exit_code == 0 and "static     no" in branch.output and "branch on data" in branch.output
    hessian = run("sparsity", f"{ZOO}:energy_2d", "--wrt", "u", "--shape", "u=5x5", "--hessian")
    assert hessian.exit_code == 0, hessian.output
    assert "star " in hessian.output and "lower bound 5" in hessian.output


def test_cli_plots_the_pattern(tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs the plot extra: pip install 'sourcead[plot]'")
    hessian = run("sparsity", f"{ZOO}:energy_2d", "--wrt", "u", "--shape", "u=5x5", "--hessian", "--plot",
                  str(tmp_path / "p.png"))  # fmt: skip
    assert hessian.exit_code == 0, hessian.output
    assert (tmp_path / "p.png").stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        (
            "sparsity",
            f"{ZOO}:data_index",
            "--wrt",
            "x",
        ),  # an int array: no default        ("sparsity", f"{ZOO}:banded", "--wrt", "x", "--shape", "x=0"),
        ("sparsity", f"{ZOO}:banded", "--wrt", "x", "--shape", "y=3"),
        ("sparsity", f"{ZOO}:banded", "--wrt", "x", "--shape", "x=5", "--hessian"),  # an array result
        ("sparsity", f"{ZOO}:nothing", "--wrt", "x"),
    ],
)
def test_cli_bad_input_exits_2(args):
    result = run(*args)
    assert result.exit_code == 2, result.output


def test_cli_defaults_to_ten_per_axis():
    result = run("sparsity", f"{ZOO}:five_point", "--wrt", "u")
    assert result.exit_code == 0, result.output
    assert "u=10x10" in result.output and "size       100 x 100" in result.output


def test_cli_help():
    result = run("sparsity", "--help")
    assert result.exit_code == 0 and "--hessian" in result.output and "--plot" in result.output
