"""Custom rules: a user function's partials come from the user, in both modes."""

from __future__ import annotations

import custom_rules as cr
import numpy as np
import pytest
from numeric import assert_close

import sourcead

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("jit", [True, False])
def test_custom_partials_match_finite_differences_in_both_modes(jit):
    x, y = RNG.standard_normal(6), 0.7
    v, w = RNG.standard_normal(6), 0.3
    gx, gy = sourcead.grad(cr.uses_custom, wrt=("x", "y"), jit=jit)(x, y)
    eps = 1e-6
    fd = (cr.uses_custom(x + eps * v, y + eps * w) - cr.uses_custom(x - eps * v, y - eps * w)) / (2 * eps)
    assert_close(gx @ v + gy * w, fd, 1e-7, 1e-9)
    _, tangent = sourcead.jvp(cr.uses_custom, wrt=("x", "y"), jit=jit)(x, y, tangents=(v, w))
    assert_close(tangent, gx @ v + gy * w, 1e-12, 1e-12)  # dot-product test


def test_the_custom_rule_is_used_not_the_body():
    # round() has derivative 0 almost everywhere; the straight-through rule says 1
    x = np.array([0.2, -0.7, 1.1])
    g = sourcead.grad(cr.quantized)(x)
    expected = 3.0 * x + np.round(3.0 * x)  # d/dx [round_ste(3x) * x] with d round_ste/du = 1
    assert_close(g, expected, 1e-12, 0)
    source = sourcead.differentiable(cr.quantized).source("reverse", "x")
    assert "straight_through_partials(" in source and 'jitable("custom_rules", "round_ste")' in source


def test_custom_rule_needs_module_level_functions():
    def local_partials(x):
        return (1.0,)

    with pytest.raises(sourcead.SourceADError, match="module-level"):
        sourcead.custom_rule(partials=local_partials)(cr.softplus)


def test_second_order_of_a_custom_rule_is_refused_as_its_declaration_says():
    """A custom rule has first partials only: hvp refuses it on a value that carries a derivative,
    at the user's line, with the message its primitive declares (`Primitive.second_order`)."""
    x, y = RNG.standard_normal(6), 0.7
    with pytest.raises(sourcead.SourceADError) as info:
        sourcead.hvp(cr.uses_custom, wrt="x", jit=False)(x, y, tangents=np.ones(6))
    assert info.value.message.startswith("second order does not cover custom rules yet: `custom_rules.")
    assert info.value.message.endswith("` has first partial derivatives only")
    assert info.value.hint == "Call a plain function instead (sourcead inlines and differentiates it twice)."
    assert info.value.where is not None and info.value.where.filename.endswith("custom_rules.py")
