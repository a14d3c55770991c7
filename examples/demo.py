"""What ``make demo`` runs: the generated adjoint of the heat-equation loss, its
gradient checked against central finite differences, and what it costs.

Exits with status 1 if the gradient disagrees with finite differences.
"""

import sys
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make the repository importable
    sys.path.insert(0, str(ROOT))

import sourcead  # noqa: E402
from benchmarks.run import median_seconds  # noqa: E402
from examples.heat import example_args, heat_loss  # noqa: E402

WRT = ("u0", "kappa")
N_DIRECTIONS = 4
RTOL = 1e-6
FD_STEP = 1e-5  # central differences: truncation and rounding both ~1e-10 here


def finite_difference_errors(primal, grad_u0, grad_kappa, u0, kappa, n_steps, seed=0):
    """|FD - <grad, d>| / |grad| along seeded random unit directions d, FD = central differences.

    Scaled by |grad| rather than |<grad, d>|: a direction nearly orthogonal to the gradient
    would otherwise leave only the rounding noise of the differences.
    """
    rng = np.random.default_rng(seed)
    grad_norm = np.sqrt(grad_u0 @ grad_u0 + grad_kappa * grad_kappa)
    errors = []
    for _ in range(N_DIRECTIONS):
        du = rng.standard_normal(u0.shape)
        dk = rng.standard_normal()
        norm = np.sqrt(du @ du + dk * dk)
        du, dk = du / norm, dk / norm
        h = FD_STEP
        fd = (primal(u0 + h * du, kappa + h * dk, n_steps) - primal(u0 - h * du, kappa - h * dk, n_steps)) / (2 * h)
        ad = grad_u0 @ du + grad_kappa * dk
        errors.append(abs(fd - ad) / max(grad_norm, abs(fd), 1e-300))
    return errors


def main():
    u0, kappa, n_steps = example_args()

    print("=== generated adjoint of heat_loss (reverse mode, wrt=u0, kappa) ===")
    print(sourcead.differentiable(heat_loss).source(mode="reverse", wrt=WRT))

    grad = sourcead.grad(heat_loss, wrt=WRT)
    primal = numba.njit(heat_loss)
    grad_u0, grad_kappa = grad(u0, kappa, n_steps)
    print(f"loss = {primal(u0, kappa, n_steps):.12g}")
    print(f"|d loss/d u0| = {np.linalg.norm(grad_u0):.12g}, d loss/d kappa = {grad_kappa:.12g}")

    errors = finite_difference_errors(primal, grad_u0, grad_kappa, u0, kappa, n_steps)
    print(f"\n=== |FD - <grad, d>| / |grad|, central differences, h = {FD_STEP:g} ===")
    for k, err in enumerate(errors):
        print(f"direction {k}: {err:.2e}")
    passed = max(errors) < RTOL
    verdict = "PASS" if passed else "FAIL"
    print(f"{verdict}: largest error {max(errors):.2e} (tolerance {RTOL:.0e})")

    t_primal = median_seconds(primal, (u0, kappa, n_steps))
    t_grad = median_seconds(grad, (u0, kappa, n_steps))
    print(f"\n=== cost ({u0.shape[0]} points, {n_steps} steps; medians after warm-up) ===")
    print(f"primal (numba.njit): {t_primal * 1e6:10.1f} us")
    print(f"gradient (sourcead): {t_grad * 1e6:10.1f} us")
    print(f"gradient / primal:   {t_grad / t_primal:10.2f}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
