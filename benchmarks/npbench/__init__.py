"""NPBench (github spcl/npbench) kernels as their numba versions are written, for sourcead.

``KERNELS`` maps each NPBench kernel with float inputs and a numba version to a ``Kernel``: the
objective sourcead differentiates (the sum of what the kernel returns or writes), the input
builder, the small sizes the tests use, NPBench's S preset sizes the bench uses, and the status
as of this branch ("ok", or "refused"/"crash" with the reason). Kernels left out of the suite
(integer or complex inputs) are in ``LEFT_OUT`` with why.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from benchmarks.npbench import apps, cfd, linalg, solvers, stencils


@dataclass(frozen=True)
class Kernel:
    name: str
    objective: Callable
    init: Callable
    small: dict
    S: dict
    status: str = "ok"  # "ok" | "refused" (sourcead refuses it) | "crash" (the generated code fails)
    reason: str = ""
    bench: dict = field(default_factory=dict)  # sizes for the bench where S is not used, with why in reason
    # stores into float32 arrays (conv2d's `np.empty(..., dtype=np.float32)`): its derivative is the
    # real-valued program's, checked against the float64 twin (`float64_twin`), not differences of
    # the float32 one (a step of 1e-6 moves a float32 value by a few ulps at most)
    float32: bool = False
    # why forward mode (jvp) fails on it where reverse mode does not ("" where it does not)
    forward_gap: str = ""

    def args(self, preset: str = "small") -> tuple:
        sizes = {"small": self.small, "S": self.bench or self.S}[preset]
        return self.init(**sizes)

    def wrt(self, args: tuple) -> tuple[int, ...]:
        """Positions of the float arrays among args: what the gradient is taken with respect to."""
        return tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0)


def _k(name, module, init, small, S, status="ok", reason="", bench=None, objective=None, float32=False, forward_gap=""):
    return Kernel(
        name,
        objective or getattr(module, f"{name}_objective"),
        init,
        small,
        S,
        status,
        reason,
        bench or {},
        float32,
        forward_gap,
    )


@contextmanager
def float64_twin(kernel: Kernel):
    """While inside, `kernel.objective` is its float64 twin: its module reads `np.float32` as
    np.float64 (the same program over the reals, which a float32 kernel's derivative is of)."""
    module = sys.modules[kernel.objective.__module__]
    shim = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("__")})
    shim.float32 = np.float64
    module.np = shim
    try:
        yield kernel.objective
    finally:
        module.np = np


L, SV, ST, A = linalg, solvers, stencils, apps
_SPD = solvers.init_cholesky

KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in [
        # ---- PolyBench linear algebra
        _k("atax", L, L.init_atax, {"M": 5, "N": 6}, {"M": 4000, "N": 5000}),
        _k("bicg", L, L.init_bicg, {"M": 5, "N": 6}, {"M": 4000, "N": 5000}),
        _k("gemm", L, L.init_gemm, {"NI": 4, "NJ": 5, "NK": 6}, {"NI": 1000, "NJ": 1100, "NK": 1200}),
        _k("gemver", L, L.init_gemver, {"N": 5}, {"N": 1000}),
        _k("gesummv", L, L.init_gesummv, {"N": 5}, {"N": 2000}),
        _k(
            "k2mm",
            L,
            L.init_k2mm,
            {"NI": 3, "NJ": 4, "NK": 5, "NL": 6},
            {"NI": 800, "NJ": 850, "NK": 900, "NL": 950},
        ),
        _k(
            "k3mm",
            L,
            L.init_k3mm,
            {"NI": 3, "NJ": 4, "NK": 5, "NL": 6, "NM": 4},
            {"NI": 800, "NJ": 850, "NK": 900, "NL": 950, "NM": 1000},
        ),
        _k("mvt", L, L.init_mvt, {"N": 5}, {"N": 5500}),
        _k(
            "symm",
            L,
            L.init_symm,
            {"M": 4, "N": 5},
            {"M": 40, "N": 50},
        ),
        _k("syr2k", L, L.init_syr2k, {"M": 4, "N": 5}, {"M": 35, "N": 50}),
        _k("syrk", L, L.init_syrk, {"M": 4, "N": 5}, {"M": 50, "N": 70}),
        _k("trmm", L, L.init_trmm, {"M": 4, "N": 5}, {"M": 65, "N": 80}),
        _k("doitgen", L, L.init_doitgen, {"NR": 2, "NQ": 3, "NP": 4}, {"NR": 60, "NQ": 60, "NP": 128}),
        # ---- PolyBench solvers and statistics
        _k("cholesky", SV, _SPD, {"N": 5}, {"N": 100}),
        _k("cholesky2", SV, _SPD, {"N": 5}, {"N": 1000}),
        _k("lu", SV, _SPD, {"N": 5}, {"N": 60}),
        _k("ludcmp", SV, SV.init_ludcmp, {"N": 5}, {"N": 60}),
        _k("trisolv", SV, SV.init_trisolv, {"N": 5}, {"N": 2000}),
        _k("durbin", SV, SV.init_durbin, {"N": 5}, {"N": 1000}),
        _k(
            "gramschmidt",
            SV,
            SV.init_gramschmidt,
            {"M": 6, "N": 4},
            {"M": 70, "N": 60},
        ),
        _k(
            "covariance",
            SV,
            SV.init_covariance,
            {"M": 4, "N": 5},
            {"M": 500, "N": 600},
        ),
        _k("covariance2", SV, SV.init_covariance, {"M": 4, "N": 5}, {"M": 500, "N": 600}),
        _k("correlation", SV, SV.init_correlation, {"M": 4, "N": 5}, {"M": 500, "N": 600}),
        # ---- stencils and time steps
        _k("jacobi_1d", ST, ST.init_jacobi_1d, {"N": 8, "TSTEPS": 3}, {"N": 3200, "TSTEPS": 800}),
        _k("jacobi_2d", ST, ST.init_jacobi_2d, {"N": 6, "TSTEPS": 3}, {"N": 150, "TSTEPS": 50}),
        _k("heat_3d", ST, ST.init_heat_3d, {"N": 5, "TSTEPS": 3}, {"N": 25, "TSTEPS": 25}),
        _k("seidel_2d", ST, ST.init_seidel_2d, {"N": 6, "TSTEPS": 3}, {"N": 50, "TSTEPS": 8}),
        _k("fdtd_2d", ST, ST.init_fdtd_2d, {"TMAX": 3, "NX": 5, "NY": 6}, {"TMAX": 20, "NX": 200, "NY": 220}),
        _k(
            "adi",
            ST,
            ST.init_adi,
            {"N": 6, "TSTEPS": 2},
            {"N": 100, "TSTEPS": 5},
        ),
        _k(
            "deriche",
            ST,
            ST.init_deriche,
            {"W": 5, "H": 6},
            {"W": 400, "H": 200},
        ),
        _k(
            "hdiff",
            ST,
            ST.init_hdiff,
            {"I": 3, "J": 4, "K": 2},
            {"I": 64, "J": 64, "K": 60},
        ),
        _k(
            "vadv",
            ST,
            ST.init_vadv,
            {"I": 3, "J": 4, "K": 5},
            {"I": 60, "J": 60, "K": 40},
        ),
        _k(
            "cavity_flow",
            cfd,
            cfd.init_cavity_flow,
            {"ny": 6, "nx": 7, "nt": 2, "nit": 2},
            {"ny": 61, "nx": 61, "nt": 25, "nit": 5},
        ),
        _k(
            "channel_flow",
            cfd,
            cfd.init_channel_flow,
            {"ny": 6, "nx": 7, "nit": 2},
            {"ny": 61, "nx": 61, "nit": 5},
        ),
        # ---- applications
        _k("arc_distance", A, A.init_arc_distance, {"N": 6}, {"N": 100000}),
        _k("go_fast", A, A.init_go_fast, {"N": 5}, {"N": 2000}),
        _k(
            "azimint_naive",
            A,
            A.init_azimint,
            {"N": 40, "npt": 4},
            {"N": 400000, "npt": 1000},
        ),
        _k(
            "azimint_hist",
            A,
            A.init_azimint,
            {"N": 40, "npt": 4},
            {"N": 400000, "npt": 1000},
            "refused",
            "`np.histogram` is a NumPy function that sourcead does not declare (piecewise constant in radius anyway)",
        ),
        _k(
            "spmv",
            A,
            A.init_spmv,
            {"M": 5, "N": 6, "nnz": 9},
            {"M": 4096, "N": 4096, "nnz": 8192},
        ),
        _k(
            "softmax",
            A,
            A.init_softmax,
            {"N": 2, "H": 2, "SM": 3},
            {"N": 16, "H": 16, "SM": 128},
        ),
        _k(
            "mlp",
            A,
            A.init_mlp,
            {"C_in": 3, "N": 2, "S0": 5, "S1": 4, "S2": 3},
            {"C_in": 3, "N": 8, "S0": 30000, "S1": 2000, "S2": 2000},
        ),
        _k(
            "conv2d_bias",
            A,
            A.init_conv2d_bias,
            {"C_in": 2, "C_out": 3, "H": 4, "K": 2, "N": 2, "W": 4},
            {"N": 8, "C_in": 3, "C_out": 16, "K": 2, "H": 32, "W": 32},
            float32=True,
        ),
        _k(
            "lenet",
            A,
            A.init_lenet,
            {"N": 1, "H": 16, "W": 16},
            {"N": 4, "H": 28, "W": 28},
            float32=True,
        ),
        _k(
            "resnet",
            A,
            A.init_resnet,
            {"N": 2, "W": 4, "H": 4, "C1": 2, "C2": 2},
            {"N": 8, "W": 14, "H": 14, "C1": 32, "C2": 8},
            float32=True,
        ),
        _k(
            "nbody",
            A,
            A.init_nbody,
            {"N": 4, "tEnd": 0.1, "dt": 0.05},
            {"N": 25, "tEnd": 2.0, "dt": 0.05},
        ),
    ]
}

LEFT_OUT = {
    "compute": "int64 inputs",
    "crc16": "uint8 input, integer result",
    "floyd_warshall": "int32 inputs",
    "nussinov": "int32 inputs",
    "contour_integral": "complex inputs",
    "scattering_self_energies": "complex inputs",
    "stockham_fft": "complex inputs",
    "mandelbrot1": "complex iterates, integer result",
    "mandelbrot2": "complex iterates, integer result",
}
