"""Element writes that need no record (`reverse/elements.py`: a slice read apart from the element,
a cover that writes the element again first) and values an adjoint reads from the element its
statement wrote (`reverse/held.py`): each kernel's gradient against central finite differences and
forward mode (the dot-product test), with and without numba, and what the generated code keeps."""

from __future__ import annotations

import numpy as np
import pytest
import tape_kernels as tk
from goldens import GOLDEN, check_golden
from numeric import assert_close

import sourcead
from sourcead.pipeline.driver import generate

_RNG = np.random.default_rng(40)
_N = 5
_LOWER = np.tril(0.3 * _RNG.standard_normal((_N, _N))) + 3.0 * np.eye(_N)
_UPPER = _LOWER.T.copy()
_VEC = _RNG.standard_normal(_N)
_RHS = _RNG.standard_normal(_N)
_W = 0.5 * _RNG.standard_normal(4)
_D, _K = 3, 2
_GMM = (
    0.5 * _RNG.standard_normal(_K),
    _RNG.random((_K, _D)),
    0.3 * _RNG.standard_normal((_K, _D)),
    0.3 * _RNG.standard_normal((_K, _D * (_D - 1) // 2)),
    _RNG.random((4, _D)),
)

# (kernel, arguments, the arguments differentiated, records that must stay, records that must go,
#  whether an adjoint reads a value from the element its statement wrote)
CASES = [
    (tk.trisolv, (_LOWER, _VEC, _RHS), (0, 1, 2), (), ("record y[i]",), True),
    (tk.backsolv, (_UPPER, _VEC, _RHS), (0, 1, 2), (), (), True),
    (tk.trisolv_then_squares, (_LOWER, _VEC, _RHS), (0, 1, 2), (), ("record y[i]",), True),
    (tk.overlapping_slice, (0.2 * _LOWER, _VEC, _RHS), (0, 1, 2), ("record y[i]",), (), True),
    (tk.same_index, (_VEC, _W), (0, 1), ("record y[0]",), (), True),
    (tk.same_index_exp, (_VEC, _W), (0, 1), ("record y[0]",), (), True),
    (tk.while_substitution, (_LOWER, _VEC, _RHS), (0, 1, 2), (), (), True),
    (tk.gmm_scratch, _GMM, (0, 1, 2, 3), ("record qx[r]",), (), False),
    (tk.scratch_read_between, (_VEC, _W), (0, 1), (), (), False),
    (tk.scratch_partial_reset, (_VEC, _W), (0, 1), (), (), False),
    (tk.scratch_reset_in_branch, (_VEC, _W), (0, 1), (), (), False),
    (tk.held_then_overwritten, (_VEC, _W[:1].repeat(_N)), (0, 1), (), ("record y[i]",), False),
    (tk.counted_reads, (_VEC, _W, 2), (0, 1), ("record idx",), (), False),
    (tk.counted_in_array, (_VEC, _W), (0, 1), ("record pos[1]",), ("record pos[0]",), False),
    (tk.scratch_matrix, (_VEC, _W), (0, 1), ("record S[r, c]",), ("record S[r, 1]",), False),
    (tk.parameter_assigned, (_VEC, 0.8), (0, 1), ("record a",), (), False),
    (tk.index_parameter_assigned, (_VEC, 1), (0,), (), (), False),
]


def _records(source: str) -> list[str]:
    return [line.split("#")[1].strip() for line in source.splitlines() if "# record " in line]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("func, args, wrt, kept, gone, held", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_is_right_and_records_are_where_they_must_be(func, args, wrt, kept, gone, held, jit):
    gradient = sourcead.grad(func, wrt=wrt, jit=jit)
    g = gradient(*args)
    records = _records(gradient.source)
    for text in kept:
        assert any(r.startswith(text) for r in records), records
    for text in gone:
        assert not any(r.startswith(text) for r in records), records
    assert ("# its value, " in gradient.source) == held, gradient.source
    rng = np.random.default_rng(3)
    v = [rng.standard_normal(np.shape(args[k])) for k in wrt]
    eps = 1e-6

    def moved(sign: float) -> list:
        out = list(args)
        for k, vk in zip(wrt, v, strict=True):
            out[k] = args[k] + sign * eps * vk
        return out

    fd = (func(*moved(1.0)) - func(*moved(-1.0))) / (2 * eps)
    along = sum(float(np.sum(gk * vk)) for gk, vk in zip(g, v, strict=True))
    assert_close(along, fd, 1e-6, 1e-7)
    _, forward = sourcead.jvp(func, wrt=wrt, jit=jit)(*args, tangents=tuple(v))
    assert_close(forward, along, 1e-11, 1e-12)


def test_the_scratch_increments_record_nothing():
    """gmm_scratch records qx once per reset (D per pair), never before an increment, and its
    counter once per pair (the reset), its increments undone by their inverse."""
    source = sourcead.grad(tk.gmm_scratch, wrt=(0, 1, 2, 3), jit=False).source
    lines = source.splitlines()
    increments = [k for k, line in enumerate(lines) if line.strip() in ("qx[r] += lower[j, idx] * xc[c]", "idx += 1")]
    assert len(increments) == 2
    assert all("# record" not in lines[k - 1] for k in increments)
    assert any(line.strip().startswith("idx -= 1  # undo it") for line in lines)
    assert sum("record idx" in line for line in lines) == 1


@pytest.mark.parametrize(
    "func, wrt", [(tk.gmm_scratch, (0, 1, 2, 3)), (tk.trisolv_then_squares, (0, 1, 2))], ids=["gmm", "trisolv"]
)
def test_generated_code_matches_golden_file(func, wrt, update_golden):
    """The scratch vector's one snapshot per reset, the element read rather than computed again."""
    text = generate(func, "gradient", wrt).source
    check_golden(GOLDEN / f"tape_{func.__name__}.gradient.py", text, update_golden, func.__name__)


@pytest.mark.parametrize("func, args, wrt", [(c[0], c[1], c[2]) for c in CASES], ids=[c[0].__name__ for c in CASES])
def test_checkpointed_time_loops_give_the_same_gradient(func, args, wrt):
    """With a small memory budget the time loops are checkpointed: each step is replayed and
    reversed with the same records (and held reads), the gradient is the unbounded one."""
    unbounded = sourcead.grad(func, wrt=wrt, jit=False)(*args)
    bounded = sourcead.grad(func, wrt=wrt, jit=False, memory=200)
    assert_close(bounded(*args), unbounded, 1e-13, 1e-14)
