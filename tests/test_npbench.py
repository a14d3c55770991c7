"""NPBench's kernels as their numba versions are written (benchmarks/npbench), at tiny sizes.

Each kernel with status "ok" in the registry: its gradient (w.r.t. every float array argument)
against central finite differences (of the float64 twin for the kernels that store into float32
arrays: their derivative is the real-valued program's), and forward against reverse (the dot-product test), as the
generated code run by plain Python (jit=False: no compile), plus a few kernels through numba.
Each kernel sourcead refuses today is an xfail(strict=True) naming the refusal: when a compiler
change makes it pass, the test says so and the registry's status is to be updated.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import sourcead as ad
from benchmarks.npbench import KERNELS, LEFT_OUT, float64_twin
from tests.numeric import assert_close, random_like, sampled_difference_gradient, vdot

NPBENCH_NUMBA_KERNELS = {  # every kernel of NPBench that has a *_numba_n.py version
    *"adi atax bicg cholesky cholesky2 correlation covariance covariance2 deriche doitgen durbin".split(),
    *"fdtd_2d floyd_warshall gemm gemver gesummv gramschmidt heat_3d jacobi_1d jacobi_2d k2mm k3mm".split(),
    *"lu ludcmp mvt nussinov seidel_2d symm syr2k syrk trisolv trmm".split(),
    *"azimint_hist azimint_naive cavity_flow channel_flow compute contour_integral crc16".split(),
    *"conv2d_bias lenet mlp resnet softmax go_fast mandelbrot1 mandelbrot2 nbody arc_distance".split(),
    *"scattering_self_energies spmv stockham_fft hdiff vadv".split(),
}


def cases():
    for name, kernel in KERNELS.items():
        marks = []
        if kernel.status != "ok":
            why = f"{kernel.status}: {kernel.reason}"
            marks = [pytest.mark.xfail(strict=True, raises=ad.SourceADError, reason=why)]
        yield pytest.param(name, marks=marks, id=name)


def wrt_names(kernel, args) -> list[str]:
    params = list(inspect.signature(kernel.objective).parameters)
    return [params[i] for i in kernel.wrt(args)]


def test_registry_covers_every_numba_kernel_of_npbench():
    assert set(KERNELS) | set(LEFT_OUT) == NPBENCH_NUMBA_KERNELS
    assert not set(KERNELS) & set(LEFT_OUT)
    for kernel in KERNELS.values():
        assert kernel.status in ("ok", "refused", "crash")
        assert (kernel.status == "ok") == (kernel.reason == ""), kernel.name


# Central differences at up to this many elements of each array (a seeded sample of a larger one):
# lenet's fixed layers hold 12 000 weights, whose full differences took 84 s of the suite; every
# element is still in the forward-against-reverse test below.
DIFFERENCED = 64
# Fewer where the plain-Python primal is slow: channel_flow's run takes 0.14 s, and its 64 elements
# of each array were 35 s of the suite (every element stays in the forward-against-reverse test).
DIFFERENCED_OF = {"channel_flow": 8}


@pytest.mark.parametrize("name", list(cases()))
def test_gradient_matches_central_differences(name):
    kernel = KERNELS[name]
    args = kernel.args()
    names = wrt_names(kernel, args)
    got = ad.grad(kernel.objective, wrt=tuple(names), jit=False)(*args)
    got = got if isinstance(got, tuple) else (got,)
    if not kernel.float32:
        at_most = DIFFERENCED_OF.get(name, DIFFERENCED)
        expected = sampled_difference_gradient(kernel.objective, args, names, at_most)
        for g, (e, where) in zip(got, expected, strict=True):
            assert_close(g if where is None else np.ravel(g)[where], e, rtol=1e-5, atol=1e-6)
        return
    # float32 storage: the derivative is the real-valued program's, evaluated at float32-rounded
    # values; differences of the float32 program measure its rounding (an ulp over a step of 1e-6),
    # so the reference is the float64 twin's differences (a step of 1e-4: lenet's objective is about
    # 1e8, whose float64 rounding over a step of 1e-6 is 5e-3 of its bias gradients), to float32
    # tolerance relative to each gradient's largest element (resnet's batch norms amplify the
    # rounding of their inputs: 3e-6 of the largest, more of the small elements; the largest of
    # those differenced)
    with float64_twin(kernel) as twin:
        expected = sampled_difference_gradient(twin, args, names, DIFFERENCED, eps=1e-4)
    for g, (e, where) in zip(got, expected, strict=True):
        g = g if where is None else np.ravel(g)[where]
        assert_close(g, e, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(e))))


def forward_cases():
    for param in cases():
        gap = KERNELS[param.values[0]].forward_gap
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else list(param.marks)
        yield pytest.param(*param.values, marks=marks, id=param.id)


@pytest.mark.parametrize("name", list(forward_cases()))
def test_forward_agrees_with_reverse(name):
    kernel = KERNELS[name]
    args = kernel.args()
    names = tuple(wrt_names(kernel, args))
    rng = np.random.default_rng(7)
    tangents = tuple(random_like(rng, args[i]) for i in kernel.wrt(args))
    value_f, dot = ad.jvp(kernel.objective, wrt=names, jit=False)(*args, tangents=tangents)
    value_r, grads = ad.vjp(kernel.objective, wrt=names, jit=False)(*args, cotangent=1.0)
    assert_close(value_f, kernel.objective(*args), rtol=1e-12)
    assert_close(value_r, kernel.objective(*args), rtol=1e-12)
    assert abs(dot - vdot(grads, tangents)) <= 1e-9 * (1.0 + abs(dot))


@pytest.mark.parametrize("name", ["atax", "trisolv", "jacobi_1d"])
def test_compiled_gradient_equals_plain_python(name):
    """The same generated code through numba: a cheap kernel of each kind (matrix, loop of dots, stencil)."""
    kernel = KERNELS[name]
    args = kernel.args()
    names = tuple(wrt_names(kernel, args))
    assert_close(
        ad.grad(kernel.objective, wrt=names)(*args),
        ad.grad(kernel.objective, wrt=names, jit=False)(*args),
        rtol=1e-12,
        atol=1e-14,
    )


def test_kernels_are_written_as_npbench_numba_versions():
    """The ports keep NPBench's idioms (the point is "as written"): spot checks of the source."""
    source = "".join(Path(inspect.getfile(k.objective)).read_text() for k in KERNELS.values())
    for idiom in ("dtype=C.dtype", "a1 = a5 = k", "np.flip(", "np.eye(M, dtype=data.dtype)", "np.hstack(", "@"):
        assert idiom in source, idiom
