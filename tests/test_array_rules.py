"""Every whole-array primitive of the declarations (reductions, products, selections, reshapes,
creation with a differentiable fill value) checked by iterating them: a function using it is
generated from the `example` declared with it, then `sourcead.check_derivative` compares jvp, vjp
and grad with finite differences and forward with reverse mode (dot-product test), on the
generated code run as plain Python. What compiling can change is typing and NumPy's semantics:
the examples are summed in groups, and each group's compiled gradient and tangent must equal the
plain ones (two compiles a group, not four an example: 195 s of the suite's worker time before).
A new primitive needs only its example.
"""

from __future__ import annotations

import importlib.util
import sys
import zlib

import numpy as np
import pytest
from numeric import assert_compiled_equals_plain

import sourcead
from sourcead.rules import PRIMITIVES

# primitive -> a float expression over arrays a (4x3), b (3,), c (4,), d (6,) of entries in (0.1, 1)
EXAMPLES = {name: p.example for name, p in PRIMITIVES.items() if p.example}
RULES = sorted(EXAMPLES)
GROUPS = 6  # the examples summed into this many functions, each compiled


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    lines = ["import numpy as np", ""]
    for k, rule in enumerate(RULES):
        lines += [f"def f{k}(a, b, c, d):", f"    return {EXAMPLES[rule]}", ""]
    for g in range(GROUPS):
        terms = " + ".join(f"f{k}(a, b, c, d)" for k in range(g, len(RULES), GROUPS))
        lines += [f"def group{g}(a, b, c, d):", f"    return {terms}", ""]
    path = tmp_path_factory.mktemp("array_rules") / "array_rule_functions.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("array_rule_functions", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["array_rule_functions"] = mod
    spec.loader.exec_module(mod)
    return mod


def _args(name: str) -> tuple:
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # deterministic, unlike hash()
    return (rng.uniform(0.1, 1.0, (4, 3)), rng.uniform(0.1, 1.0, 3), rng.uniform(0.1, 1.0, 4), rng.uniform(0.1, 1.0, 6))


@pytest.mark.parametrize("rule", RULES)
def test_every_array_rule_against_finite_differences_and_by_the_dot_product_test(rule, module):
    func = getattr(module, f"f{RULES.index(rule)}")
    report = sourcead.check_derivative(func, *_args(rule), wrt=(0, 1, 2, 3), jit=False)
    assert report.ok, str(report)


@pytest.mark.parametrize("group", range(GROUPS))
def test_every_array_rule_compiled_equals_plain(group, module):
    rules = RULES[group::GROUPS]
    assert rules, "a group without examples: fewer GROUPS"
    assert_compiled_equals_plain(getattr(module, f"group{group}"), _args(f"group{group}"), (0, 1, 2, 3))
