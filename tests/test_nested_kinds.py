"""Every prepared kind called inside a differentiated function (issue 42): value_and_grad, vjp and
hvp (third order), in an outer grad (reverse over reverse) and an outer jvp (forward over
reverse), with and without numba, in a prange body too; checked against central differences of
the outer function and by the dot-product test (forward against reverse)."""

from __future__ import annotations

import nested_kinds as nk
import numpy as np
import pytest
from numeric import assert_close

import sourcead as ad

X0 = np.array([0.3, -0.2, 0.5])
Q, DT, STEPS = 0.7, 0.05, 4
V, W = np.array([0.4, -0.7, 0.2]), -0.3  # a direction in (x0, q)


def _fd(f, args, v, w, eps=1e-6):
    """The central difference of f along (v, w) in its first two arguments."""
    x0, q, *rest = args
    return (f(x0 + eps * v, q + eps * w, *rest) - f(x0 - eps * v, q - eps * w, *rest)) / (2 * eps)


@pytest.fixture(scope="module", params=["vg", "vf", "h", "vg_py", "vf_py", "h_py"])
def outer(request):
    """An outer function calling one inner kind, and its outer grad and jvp: jit=False for both
    inner and outer in the `_py` variants."""
    f = getattr(nk, f"with_{request.param}")
    jit = not request.param.endswith("_py")
    return f, ad.grad(f, wrt=(0, 1), jit=jit), ad.jvp(f, wrt=(0, 1), jit=jit)


def test_reverse_over_the_inner_kind_matches_central_differences(outer):
    """Reverse over reverse; for the inner hvp, the third order of the potential."""
    f, g, _ = outer
    args = (X0, Q, DT, STEPS)
    gx, gq = g(*args)
    assert_close(gx @ V + gq * W, _fd(f, args, V, W), 1e-6, 1e-8)
    assert_close(gq, _fd(f, args, 0 * V, 1.0), 1e-6, 1e-8)


def test_forward_over_the_inner_kind_matches_central_differences_and_reverse(outer):
    f, g, j = outer
    args = (X0, Q, DT, STEPS)
    value, tangent = j(*args, tangents=(V, W))
    assert_close(value, f(*args), 1e-12, 1e-14)
    assert_close(tangent, _fd(f, args, V, W), 1e-6, 1e-8)
    gx, gq = g(*args)
    assert_close(tangent, gx @ V + gq * W, 1e-11, 1e-13)  # the dot-product test


@pytest.mark.parametrize("name", ["rows_h", "rows_vf", "rows_vg"])
@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_inside_prange_each_iteration_has_its_own_inner_call(name, jit):
    f = getattr(nk, name)
    X = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
    D = np.array([[0.2, 0.1, -0.3], [-0.5, 0.3, 0.2]])
    gX, gq = ad.grad(f, wrt=(0, 1), jit=jit)(X, Q)
    assert_close(np.sum(gX * D) + gq * W, _fd(f, (X, Q), D, W), 1e-6, 1e-8)
    _, tangent = ad.jvp(f, wrt=(0, 1), jit=jit)(X, Q, tangents=(D, W))
    assert_close(tangent, np.sum(gX * D) + gq * W, 1e-11, 1e-13)


def test_a_call_of_its_njit_is_the_same_call():
    X = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
    got = ad.grad(nk.rows_vf_njit, wrt=(0, 1))(X, Q)
    expected = ad.grad(nk.rows_vf, wrt=(0, 1))(X, Q)
    assert_close(got[0], expected[0], 1e-12, 0)
    assert_close(got[1], expected[1], 1e-12, 0)


def test_the_generated_code_calls_the_part_and_its_hvp():
    """The lowering reads in the outer code: the inner vjp is the field's code inlined and one call
    of `vf_py_vjp`, whose adjoint is one call of its hvp."""
    source = ad.grad(nk.with_vf_py, wrt=0, jit=False).source
    assert 'vf_py_vjp = nested_entry("nested_kinds", "vf_py", ' in source and 'part="vjp"' in source
    forward, reverse = source.split("# reverse sweep", 1)
    assert "vf_py_vjp(x, q, x)" in forward and "vf_py_vjp_hvp(" in reverse


def _refused(f, line_text, *, jit=False):
    with pytest.raises(ad.SourceADError) as info:
        ad.grad(f, wrt=0, jit=jit)(X0, *(() if f.__code__.co_argcount == 1 else (Q,)))
    where = info.value.where
    assert where is not None and where.filename.endswith("nested_kinds.py"), info.value
    assert line_text in where.source_line, where.source_line
    assert f"nested_kinds.py, line {where.line}" in str(info.value)  # file and line in the message
    return info.value


def test_a_keyword_other_than_the_kinds_own_is_refused_at_the_call():
    error = _refused(nk.bad_keyword, "scale=2.0")
    assert "by position (and cotangent=...)" in error.message
    error = _refused(nk.missing_cotangent, "cube_vf(x, 0.5)")
    assert "needs cotangent=" in error.message


def test_an_inner_kind_without_numba_is_refused_from_compiled_code():
    error = _refused(nk.python_inner, "vg_py(x, 0.5)", jit=True)
    assert "jit=False" in error.message and "jit=True" in error.hint


def test_a_function_calling_its_own_value_and_grad_is_refused(monkeypatch):
    monkeypatch.setattr(nk, "own", ad.value_and_grad(nk.selfish, jit=False))
    error = _refused(nk.selfish, "own(x, q)")
    assert "derivative of selfish itself" in error.message


def test_a_jacobian_and_a_tuple_wrt_are_refused_with_what_to_write():
    error = _refused(nk.calls_a_jacobian, "jac(x, 0.5)")
    assert "prepared jacobian" in error.message and "jvp" in error.hint
    error = _refused(nk.calls_a_pair, "vg_pair(x, 0.5)")
    assert "tuple wrt" in error.message and "wrt=0" in error.hint


def test_a_vjp_of_a_tuple_result_is_refused_with_what_to_write():
    error = _refused(nk.calls_a_tuple_vjp, "cotangent=(x, 1.0)")
    assert "returns a tuple" in error.message and "one per result" in error.hint
    error = _refused(nk.calls_a_tuple_vjp_by_name, "cotangent=c")
    assert "returns a tuple" in error.message


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import sourcead as ad
import nested_kinds as nk
gx, gq = ad.grad(nk.with_h, wrt=(0, 1))(np.array([0.3, -0.2, 0.5]), 0.7, 0.05, 4)
print(json.dumps([list(gx), gq]))
"""


def test_a_fresh_process_rebuilds_the_lowered_call_from_the_recipe():
    """The caller's module, found in the disk cache by a new process, binds the inner hvp's part
    by the user's global (`nested_entry(..., part="hvp")`): the same third-order gradient."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    gx, gq = ad.grad(nk.with_h, wrt=(0, 1))(X0, Q, DT, STEPS)
    programs = str(Path(nk.__file__).parent)
    out = subprocess.run([sys.executable, "-c", _CHILD, programs], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    child_gx, child_gq = json.loads(out.stdout.strip().splitlines()[-1])
    assert_close(np.array(child_gx), gx, 1e-14, 0)
    assert_close(child_gq, gq, 1e-14, 0)


def test_differentiable_and_the_other_outer_transforms_take_the_same_calls(outer):
    """`@differentiable`'s .grad is the same outer transform; value_and_grad and vjp (cotangent
    c) give the value and c times the gradient."""
    f, g, _ = outer
    jit = f not in (nk.with_vg_py, nk.with_vf_py, nk.with_h_py)
    args = (X0, Q, DT, STEPS)
    gx, gq = g(*args)
    dx, dq = ad.differentiable(f).grad(wrt=(0, 1), jit=jit)(*args)
    assert_close(dx, gx, 1e-14, 0)
    assert_close(dq, gq, 1e-14, 0)
    if not jit:
        value, vq = ad.value_and_grad(f, wrt=1, jit=False)(*args)
        assert_close(value, f(*args), 1e-12, 1e-14)
        assert_close(vq, gq, 1e-12, 1e-14)
        _, cq = ad.vjp(f, wrt=1, jit=False)(*args, cotangent=2.0)
        assert_close(cq, 2.0 * gq, 1e-12, 1e-14)


def test_second_order_of_a_function_calling_a_lowered_kind_is_refused_at_the_users_call():
    with pytest.raises(ad.SourceADError) as info:
        ad.hvp(nk.with_vg_py, wrt=0, jit=False)(X0, Q, DT, STEPS, tangents=X0)
    assert "third derivatives" in info.value.message
    where = info.value.where
    assert where is not None and where.filename.endswith("nested_kinds.py") and "vg_py(x, q)" in where.source_line
