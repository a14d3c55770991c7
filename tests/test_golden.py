"""Golden files pin the generated code of every zoo function, in both modes (and hvp, and for
some, the vector forward mode and the gradient-only reverse mode).

`pytest --update-golden` rewrites them; any other change fails with a readable diff.
Their meaning is pinned by the numeric tests (test_zoo_numeric.py).
"""

from __future__ import annotations

import aliasing as al
import numpy as np
import parallel_kernels as par
import pytest
from goldens import GOLDEN, check_golden
from zoo import NO_HVP, ZOO, Case

import sourcead
from sourcead.pipeline.driver import generate


def _call_kinds(case) -> dict[str, str] | None:
    """The kinds a call with the case's example arguments gives the parameters code leaves open."""
    if case.make_args is None:
        return None
    args = case.make_args(np.random.default_rng(0))
    params = case.func.__code__.co_varnames[: case.func.__code__.co_argcount]
    defaults = case.func.__defaults__ or ()
    args = (*args, *defaults[len(args) - len(params) :]) if len(args) < len(params) else args  # as the call fills them
    return {p: _spec(a) for p, a in zip(params, args, strict=True)}


def _spec(value) -> str:
    """The type a call with this argument gives its parameter (as `sourcead.api` decides it)."""
    if not isinstance(value, np.ndarray):
        return "int" if isinstance(value, int) else "float"
    prefix = {"f": "array", "i": "int_array", "b": "bool_array"}[value.dtype.kind]
    return f"{prefix}:{value.ndim}"


PARALLEL = [
    Case(name, getattr(par, name), None, wrt, True)  # type: ignore[arg-type]
    for name, wrt in [
        ("logistic_loss", ("w",)),
        ("gather_sum", ("x",)),
        ("softplus_rows", ("W", "b")),
        ("mapped_stencil", ("u", "c")),
        ("inner_recurrence", ("x", "w")),
        ("heat_steps", ("u0", "kappa")),
        ("diffusion_rows", ("u0", "kappa")),
        ("scratch_rows", ("X", "w")),
        ("scratch_recurrence", ("X", "w")),
        ("scratch_overwritten", ("X", "w")),
    ]
]


ALIASING = [Case("pick", al.pick, None, ("x",), True), Case("scale_into", al.scale_into, None, ("x",), True)]  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", ZOO + PARALLEL + ALIASING, ids=lambda c: c.name)
def test_generated_code_matches_golden_file(case, mode, update_golden):
    text = generate(case.func, mode, case.wrt, _call_kinds(case)).source
    check_golden(GOLDEN / f"{case.name}.{mode}.py", text, update_golden, f"{case.name} ({mode})")


# second order (reverse over forward) of float-valued functions, except those it refuses (NO_HVP)
HVP_GOLDEN = [c for c in ZOO + PARALLEL if c.scalar_output and c.name not in NO_HVP]


@pytest.mark.parametrize("case", HVP_GOLDEN, ids=lambda c: c.name)
def test_hvp_code_matches_golden_file(case, update_golden):
    test_generated_code_matches_golden_file(case, "hvp", update_golden)


# vector forward mode (k tangents in one sweep), on cases that cover its forms
VECTOR_GOLDEN = [c for c in ZOO if c.name in ("heat_euler", "logistic_map", "softplus_mean", "recurrent_rows",
                                               "branches", "heat_swap", "selections", "logsumexp_vec")]  # fmt: skip


@pytest.mark.parametrize("case", VECTOR_GOLDEN, ids=lambda c: c.name)
def test_vector_code_matches_golden_file(case, update_golden):
    test_generated_code_matches_golden_file(case, "vector", update_golden)


# what grad runs: reverse mode without the statements only the value needs (deadcode.py), on the
# parallel kernels and on cases whose forward sweep keeps part of the primal (records, branches,
# early exits, checkpointed loops, placeholders); test_zoo_numeric checks grad on every case
GRADIENT_GOLDEN = [c for c in PARALLEL if c.scalar_output] + [
    c for c in ZOO if c.name in ("first_passage", "untyped_branch", "wrapped_neighbours", "math_mix", "dot",
                                 "parallel_slots_in_a_marked_loop", "loop_variable_after_loop", "heat_swap")
]  # fmt: skip


@pytest.mark.parametrize("case", GRADIENT_GOLDEN, ids=lambda c: c.name)
def test_gradient_code_matches_golden_file(case, update_golden):
    test_generated_code_matches_golden_file(case, "gradient", update_golden)


@pytest.mark.parametrize("case", ZOO[:4], ids=lambda c: c.name)
def test_generation_is_deterministic(case):
    first = sourcead.differentiable(case.func).source(mode="reverse", wrt=case.wrt)
    second = sourcead.differentiable(case.func).source(mode="reverse", wrt=case.wrt)
    assert first == second
