"""float32 storage (`dtype=np.float32` where an allocation takes a dtype), as NPBench's conv2d writes
its output.

Semantics checked here: a store into float32 storage rounds the value, as NumPy does in plain
Python (`jit=False`) and numba does compiled, each with its own promotion rules for the arithmetic
around it; the derivative treats the rounding as the identity (it is the derivative of the
real-valued program, evaluated at the rounded values), and every derivative array is float64. So
each gradient is compared with central differences of the float64 twin (the same program with
float32 replaced by float64) to float32 tolerance, with sourcead's gradient of the twin, and
forward against reverse (both float64 derivatives of one program) to float64 tolerance.
"""

from __future__ import annotations

import inspect
import types
from contextlib import contextmanager

import float32_storage as k
import numba
import numpy as np
import pytest
from numeric import assert_close, finite_difference_gradient, random_like, vdot

import sourcead
from sourcead import SourceADError

_RNG = np.random.default_rng


def _conv_args(r):
    return r.uniform(0.0, 1.0, (2, 4, 4, 2)), r.uniform(-0.5, 0.5, (2, 2, 2, 3)), r.uniform(-0.5, 0.5, 3)


CASES = {
    "straight": (k.straight, lambda r: (r.uniform(0.2, 1.2, 6), r.uniform(0.5, 1.5, 6))),
    "in_loops": (k.in_loops, lambda r: (r.uniform(0.2, 1.2, 6),)),
    "parallel": (k.parallel, lambda r: (r.uniform(0.2, 1.2, 7), r.uniform(-1.0, 1.0, 7))),
    "returns_float32": (k.returns_float32, lambda r: (r.uniform(0.2, 1.2, 6), r.uniform(0.5, 1.5, 6))),
    "dtype_of_storage": (k.dtype_of_storage, lambda r: (r.uniform(0.2, 1.2, 5),)),
    "mixed_scalars": (k.mixed_scalars, lambda r: (r.uniform(0.2, 1.2, 5),)),
    "conv_bias_tanh": (k.conv_bias_tanh, _conv_args),
}


@contextmanager
def twin_numpy():
    """The programs' module with `np.float32` read as float64: the float64 twin of each program."""
    shim = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("__")})
    shim.float32 = np.float64
    k.np = shim
    try:
        yield
    finally:
        k.np = np


def _case(name):
    func, make = CASES[name]
    args = make(_RNG(len(name)))
    names = tuple(inspect.signature(func).parameters)
    return func, args, names


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_is_the_real_valued_programs(name):
    func, args, names = _case(name)
    got = sourcead.grad(func, wrt=names, jit=False)(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert all(g.dtype == np.float64 for g in got)
    with twin_numpy():
        differences = finite_difference_gradient(func, args, names)
        twin = sourcead.grad(func, wrt=names, jit=False)(*args)
    twin = twin if isinstance(twin, tuple) else (twin,)
    # the derivative at float32-rounded values against the real program's at exact ones
    assert_close(got, differences, rtol=1e-4, atol=1e-5)
    assert_close(got, twin, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_is_numpys_and_forward_agrees_with_reverse(name):
    func, args, names = _case(name)
    tangents = tuple(random_like(_RNG(3), a) for a in args)
    value_f, dot = sourcead.jvp(func, wrt=names, jit=False)(*args, tangents=tangents)
    value_r, grads = sourcead.vjp(func, wrt=names, jit=False)(*args, cotangent=1.0)
    assert value_f == pytest.approx(float(func(*args)), rel=1e-12)
    assert value_r == pytest.approx(float(func(*args)), rel=1e-12)
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert abs(dot - vdot(grads, tangents)) <= 1e-9 * (1.0 + abs(dot))  # float64 derivatives throughout


def test_the_storage_rounds():
    """The value is the float32 program's, not its float64 twin's."""
    func, args, _ = _case("mixed_scalars")
    value = sourcead.value_and_grad(func, jit=False)(*args)[0]
    with twin_numpy():
        twin = func(*args)
    assert value == pytest.approx(float(func(*args)), rel=1e-13)
    assert abs(value - twin) > 1e-9 * abs(twin)


@pytest.mark.parametrize("name", ["mixed_scalars", "parallel", "conv_bias_tanh"])
def test_compiled_value_is_numbas_and_gradient_the_plain_one(name):
    """Compiled, the arithmetic around float32 storage follows numba (`a * 0.1` is float64 there,
    float32 in NumPy): sourcead's value is numba's own of the function; the gradient is the plain
    one up to the rounding of values that differ between the two."""
    func, args, names = _case(name)
    value, grads = sourcead.value_and_grad(func, wrt=names)(*args)
    numbas = _numba_value(func, args)
    assert value == pytest.approx(numbas, rel=1e-12)
    plain = sourcead.grad(func, wrt=names, jit=False)(*args)
    assert all(g.dtype == np.float64 for g in grads)
    assert_close(grads, plain, rtol=1e-5, atol=1e-6)
    if name == "mixed_scalars":  # the engines do differ here: each path follows its own
        assert numbas != pytest.approx(float(func(*args)), rel=1e-12)


def _numba_value(func, args) -> float:
    """numba's own value of the function (its helper compiled too, for the call)."""
    helper = k.conv2d
    k.conv2d = numba.njit(helper)
    try:
        return float(numba.njit(func)(*args))
    finally:
        k.conv2d = helper


@pytest.mark.parametrize(
    "func, needle, hint",
    [
        (k.half, "`dtype` of np.zeros must be np.float64 (or float), np.float32", "float16, complex"),
        (k.complex_storage, "`dtype` of np.zeros_like must be", "float16, complex"),
        (k.int32_storage, "`dtype` of np.empty must be", "other integer widths"),
        (k.half_by_name, "`dtype` of np.full must be", "float16, complex"),
        (k.astype32, "method `.astype()` is not supported", "dtype=np.float32"),
        (k.scalar32, "`np.float32(...)` (a conversion to a NumPy scalar type) is not supported", "float(x)"),
        (k.rebound_in_loop, "`y` holds a 1-D float64 array in one place and a float in another", "different name"),
    ],
)
def test_neighbouring_spellings_are_refused_at_the_users_line(func, needle, hint):
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=False)(np.linspace(0.2, 1.0, 4))
    err = info.value
    assert needle in str(err), str(err)
    assert hint in err.hint, err.hint
    lines, first = inspect.getsourcelines(func)
    assert err.where is not None and err.where.filename.endswith("float32_storage.py")
    assert err.where.line == first + next(i for i, text in enumerate(lines) if "# refused" in text)


def test_a_top_level_rebinding_of_another_ndim_takes_a_fresh_name():
    """lenet's `x = np.reshape(x, (N, C))` after a 4-D `x`: each binding keeps its own type."""
    r = _RNG(5)
    args = (r.uniform(-1.0, 1.0, (3, 4)), r.uniform(-1.0, 1.0, 12))
    report = sourcead.check_derivative(k.rebound_ndim, *args, wrt=(0, 1), jit=False)
    assert report.ok, str(report)
