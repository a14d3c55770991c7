"""`@differentiable`: the function still runs (compiled, with its callees inlined) and gains methods."""

from __future__ import annotations

import mutating as mu
import numpy as np
import pytest
import zoo
from numeric import assert_close

import sourcead


def test_the_decorated_function_runs_compiled_even_when_it_calls_plain_helpers():
    f = sourcead.differentiable(zoo.calls_helpers)
    x = np.linspace(-1.0, 1.0, 5)
    assert_close(f(x, 0.7), zoo.calls_helpers(x, 0.7), 1e-13, 0)
    assert f.__name__ == "calls_helpers"


def test_the_decorated_primal_writes_its_arguments_like_the_function():
    f = sourcead.differentiable(mu.fill_squares)
    x, out = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    assert f(x, out) == 14.0
    np.testing.assert_array_equal(out, x * x)


def test_decorator_methods_agree_with_the_transforms():
    f = sourcead.differentiable(zoo.calls_helpers)
    x, y = np.linspace(-1.0, 1.0, 5), 0.7
    gx, gy = f.grad(wrt=("x", "y"))(x, y)
    value, (gx2, gy2) = f.value_and_grad(wrt=("x", "y"))(x, y)
    assert_close((gx, gy), (gx2, gy2), 0, 0)
    assert_close(value, zoo.calls_helpers(x, y), 1e-13, 0)
    v = np.ones(5)
    _, tangent = f.jvp(wrt="x")(x, y, tangents=v)
    assert_close(tangent, gx @ v, 1e-12, 1e-12)
    _, g = f.vjp(wrt="x")(x, y, cotangent=2.0)
    assert_close(g, 2.0 * gx, 1e-12, 0)
    assert f.grad(wrt=("x", "y")) is f.grad(wrt=("x", "y"))  # prepared once
    assert "def calls_helpers_jvp(" in f.source(mode="forward", wrt="x")


def _copied_indices(x, idx):
    J = idx.copy()  # the type guess sees J's elements used as indices, not idx's
    s = 0.0
    for i in range(J.shape[0]):
        s += x[J[i]] ** 2
    return s


def test_source_shows_the_variant_a_call_built_where_the_type_guess_cannot_compile():
    g = sourcead.grad(_copied_indices, wrt="x")
    with pytest.raises(sourcead.SourceADError, match="an index must be an integer"):
        g.source  # noqa: B018 (the guess calls idx a float array)
    x, idx = np.array([0.5, -1.0, 2.0]), np.array([2, 0, 2, 1])
    assert_close(g(x, idx), np.array([2 * 0.5, 2 * -1.0, 4 * 2.0]), 1e-15, 0)
    assert "def _copied_indices_grad(x, idx, out_bar)" in g.source  # grad runs the gradient-only code


def test_njit_without_a_default_variant_says_why():
    g = sourcead.grad(_copied_indices, wrt="x", jit=False)
    with pytest.raises(sourcead.SourceADError, match="an index must be an integer"):
        g.njit  # noqa: B018 (the guess calls idx a float array: the error that kept it from being built)


def test_prepared_objects_tell_their_recipe():
    from sourcead.api.protocol import Prepared

    f = zoo.calls_helpers
    made = {
        "grad": sourcead.grad(f, wrt="y", jit=False),
        "value_and_grad": sourcead.value_and_grad(f, wrt=("x", "y"), jit=False, memory="1MB"),
        "vjp": sourcead.vjp(f, jit=False),
        "jvp": sourcead.jvp(f, jit=False),
        "hvp": sourcead.hvp(f, jit=False),
    }
    for transform, prepared in made.items():
        recipe = prepared.__sourcead_recipe__()
        assert isinstance(prepared, Prepared) and recipe.transform == transform and recipe.func is f
        assert recipe.jit is False
    assert made["grad"].__sourcead_recipe__().wrt == "y" and made["grad"].__sourcead_recipe__().single
    both = made["value_and_grad"].__sourcead_recipe__()
    assert both.wrt == ("x", "y") and not both.single and both.memory == 10**6
    assert sourcead.differentiable(f).__sourcead_recipe__().transform == "differentiable"


def test_njit_asks_the_recipe_not_the_class():
    from sourcead.api.njit import transform_of
    from sourcead.api.protocol import Recipe

    class Stranger:  # no sourcead class: only the protocol
        def __sourcead_recipe__(self) -> Recipe:
            return Recipe("vjp", zoo.calls_helpers, 0, True, True, None)

    assert transform_of(Stranger()) == "vjp"
    with pytest.raises(TypeError, match="no .njit entry for a prepared hvp"):
        transform_of(sourcead.hvp(zoo.calls_helpers, jit=False))
