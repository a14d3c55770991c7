"""Every whole-array rule (reductions, axis reductions, products, selections, reshapes) checked by
iterating the tables: a function using the rule is generated from its EXAMPLE below, then
`sourcead.check_derivative` compares jvp, vjp and grad with finite differences and forward with
reverse mode (dot-product test). A new rule needs only its example; a rule without one fails.
"""

from __future__ import annotations

import importlib.util
import sys
import zlib

import numpy as np
import pytest

import sourcead
from sourcead.rules import AXIS_REDUCTIONS, BILINEAR, REDUCTIONS, RESHAPES, SELECTIONS

RULES = sorted(
    {f"reduce:{n}" for n in REDUCTIONS}
    | {f"axis:{n}" for n in AXIS_REDUCTIONS}
    | {f"bilinear:{n}" for n in BILINEAR}
    | set(SELECTIONS)
    | set(RESHAPES)
)

# rule -> (body returning a float from arrays a (4x3), b (3,), c (4,), d (6,), of positive entries)
EXAMPLES = {
    "reduce:np.sum": "np.sum(np.sin(a) * a)",
    "reduce:np.mean": "np.mean(np.exp(0.3 * a)) * np.mean(b)",
    "reduce:np.max": "np.max(a * a) + np.max(np.tanh(b))",
    "reduce:np.min": "np.min(np.cos(a)) + np.min(b * b)",
    "reduce:np.prod": "np.prod(b + 1.0)",
    "reduce:np.linalg.norm": "np.linalg.norm(a) + np.linalg.norm(np.sin(b))",
    "reduce:np.transpose": "np.sum(np.transpose(a) @ c)",
    "reduce:np.cumsum": "np.sum(np.cumsum(b) ** 2)",
    "axis:np.sum": "np.sum(np.sum(a, axis=0) ** 2) + np.sum(np.sum(a * a, axis=1) * c)",
    "bilinear:np.dot": "np.dot(c, a @ b) + np.sum(np.dot(a, b) ** 2)",
    "bilinear:np.outer": "np.sum(np.outer(c, b) * a)",
    # the seeded inputs stay away from the kinks (where the selection switches): a kink fails the check
    "np.where": "np.sum(np.where(a > 0.55, a * a, np.sin(a)))",
    "np.clip": "np.sum(np.clip(a, 0.33, 0.77) * a)",
    "np.reshape": "np.sum(np.reshape(d, (2, 3)) @ b)",
}


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    lines = ["import numpy as np", ""]
    for k, rule in enumerate(RULES):
        if rule in EXAMPLES:
            lines += [f"def f{k}(a, b, c, d):", f"    return {EXAMPLES[rule]}", ""]
    path = tmp_path_factory.mktemp("array_rules") / "array_rule_functions.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("array_rule_functions", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["array_rule_functions"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("rule", RULES)
def test_every_array_rule_against_finite_differences_and_by_the_dot_product_test(rule, module):
    assert rule in EXAMPLES, f"add an example of {rule} to EXAMPLES"
    rng = np.random.default_rng(zlib.crc32(rule.encode()))  # deterministic, unlike hash()
    args = (rng.uniform(0.1, 1.0, (4, 3)), rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, 4), rng.uniform(0.1, 1.0, 6))
    func = getattr(module, f"f{RULES.index(rule)}")
    report = sourcead.check_derivative(func, *args, wrt=(0, 1, 2, 3))
    assert report.ok, str(report)


def test_no_example_for_a_rule_that_no_longer_exists():
    assert set(EXAMPLES) <= set(RULES)
