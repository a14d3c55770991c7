"""Every rule of the rule table, checked numerically by iterating the table.

For each rule a one-line use (`math.sin(x)`, `x % y`, `-x`) is generated into real source files
(sourcead reads source): once on floats, summed into a float result (so grad applies), and once
inside a loop over array elements, written into an output array per rule (a tuple of arrays).
`sourcead.check_derivative` then checks jvp, vjp and grad against finite differences and the
dot-product test, compiled and as plain Python, at random points of the rule's domain.

A new rule needs no test code beyond its entry in DOMAINS; a rule without one fails here.
Rules are compiled in groups of GROUP, since numba's cost is per function more than per line.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import libcst as cst
import numpy as np
import pytest

from sourcead import check_derivative
from sourcead.rules.table import BINARY_OPERATORS, ELEMENTWISE, UNARY_OPERATORS, Rule

TABLES = {"call": ELEMENTWISE, "binary": BINARY_OPERATORS, "unary": UNARY_OPERATORS}
ALL_RULES = [(kind, rule) for kind, table in TABLES.items() for rule in table.values()]
GROUP = 20  # rules per generated function
LENGTH = 4  # array elements in the loop version

# Where each operand is drawn from (uniformly): away from singularities, branch cuts, kinks and
# jumps, with room for the finite-difference steps (1% of the point's scale). min/max-like rules
# get disjoint ranges, some choosing their first operand, some their second.
WHOLE, SMALL, POSITIVE, ABOVE_ONE = (-1.5, 1.5), (-0.8, 0.8), (0.5, 3.0), (1.5, 3.0)
NEGATIVE, LOW, HIGH = (-2.0, -0.5), (-1.5, -0.5), (0.5, 1.5)
NEAR_TWO_AND_HALF, NEAR_ONE = (2.3, 2.6), (0.95, 1.05)  # x / y stays within (2.19, 2.74): no jump
_MATH_DOMAINS = {
    "sin": (WHOLE,), "cos": (WHOLE,), "tan": ((-1.0, 1.0),),
    "asin": (SMALL,), "acos": (SMALL,), "atan": (WHOLE,),
    "sinh": (WHOLE,), "cosh": (WHOLE,), "tanh": (WHOLE,),
    "asinh": (WHOLE,), "acosh": (ABOVE_ONE,), "atanh": (SMALL,),
    "exp": (WHOLE,), "expm1": (WHOLE,), "log": (POSITIVE,), "log1p": ((-0.5, 2.0),),
    "log2": (POSITIVE,), "log10": (POSITIVE,), "sqrt": (POSITIVE,),
    "hypot": (WHOLE, POSITIVE), "copysign": (POSITIVE, NEGATIVE), "atan2": (WHOLE, POSITIVE),
}  # fmt: skip
_NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2"}  # fmt: skip
DOMAINS: dict[str, tuple[tuple[float, float], ...]] = {
    **{f"math.{name}": domain for name, domain in _MATH_DOMAINS.items()},
    **{f"np.{_NUMPY_NAMES.get(name, name)}": domain for name, domain in _MATH_DOMAINS.items()},
    "math.pow": (POSITIVE, WHOLE), "np.power": (POSITIVE, WHOLE),
    "math.fabs": (NEGATIVE,), "np.fabs": (POSITIVE,), "np.abs": (NEGATIVE,), "abs": (POSITIVE,),
    "math.erf": (WHOLE,), "math.erfc": (WHOLE,), "np.square": (WHOLE,),
    "min": (LOW, HIGH), "max": (LOW, HIGH), "np.minimum": (HIGH, LOW), "np.maximum": (HIGH, LOW),
    "float": (WHOLE,),
    "Add": (WHOLE, WHOLE), "Subtract": (WHOLE, WHOLE), "Multiply": (WHOLE, WHOLE),
    "Divide": (WHOLE, POSITIVE), "Power": (POSITIVE, WHOLE),
    "Modulo": (NEAR_TWO_AND_HALF, NEAR_ONE), "FloorDivide": (NEAR_TWO_AND_HALF, NEAR_ONE),
    "Minus": (WHOLE,), "Plus": (WHOLE,),
}  # fmt: skip

KNOWN = [(kind, rule) for kind, rule in ALL_RULES if rule.name in DOMAINS]
GROUPS = [KNOWN[start : start + GROUP] for start in range(0, len(KNOWN), GROUP)]
SHAPES = ("scalar", "loop")


def _ident(rule: Rule) -> str:
    return re.sub(r"\W", "_", rule.name)


def _operands(rule: Rule) -> list[str]:
    return [f"{letter}_{_ident(rule)}" for letter in "xy"[: len(rule.partials)]]


def _expression(kind: str, rule: Rule, operands: list[str]) -> str:
    """The rule applied to `operands`: a call, or its operator (spelled by libcst)."""
    if kind == "call":
        return f"{rule.name}({', '.join(operands)})"
    names = [cst.parse_expression(operand) for operand in operands]
    operator = getattr(cst, rule.name)()
    node = (
        cst.BinaryOperation(names[0], operator, names[1]) if kind == "binary" else cst.UnaryOperation(operator, *names)
    )
    return cst.Module([]).code_for_node(node)


def _source(rules: list[tuple[str, Rule]]) -> str:
    """A module with `scalar(...)`, the rules on floats, and `loop(...)`, on array elements."""
    params = ", ".join(operand for _, rule in rules for operand in _operands(rule))
    scalar = [f"def scalar({params}):", "    s = 0.0"]
    scalar += [f"    s += {_expression(kind, rule, _operands(rule))}" for kind, rule in rules]
    loop = [f"def loop({params}):", f"    n = {_operands(rules[0][1])[0]}.shape[0]"]
    loop += [f"    z_{_ident(rule)} = np.zeros(n)" for _, rule in rules]
    loop.append("    for i in range(n):")
    for kind, rule in rules:
        elements = [f"{operand}[i]" for operand in _operands(rule)]
        loop.append(f"        z_{_ident(rule)}[i] = {_expression(kind, rule, elements)}")
    loop.append(f"    return {', '.join(f'z_{_ident(rule)}' for _, rule in rules)}")
    return "\n".join(["import math", "", "import numpy as np", "", "", *scalar, "    return s", "", "", *loop, ""])


def _arguments(rules: list[tuple[str, Rule]], shape: str, rng: np.random.Generator) -> tuple:
    size = None if shape == "scalar" else LENGTH
    draws = [rng.uniform(low, high, size) for _, rule in rules for low, high in DOMAINS[rule.name]]
    return tuple(float(d) if size is None else d for d in draws)


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache wants the module under its real name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report_of(tmp_path_factory: pytest.TempPathFactory):
    """(group, shape, jit) -> check_derivative's report of that generated function, w.r.t. every
    operand; each group's module is written and imported once, each report made once."""
    folder = tmp_path_factory.mktemp("rules")
    names = [f"sourcead_test_rules_{number}" for number in range(len(GROUPS))]
    for number, (name, rules) in enumerate(zip(names, GROUPS, strict=True)):
        (folder / f"{name}.py").write_text(_source(rules))

    @functools.cache
    def report(number: int, shape: str, jit: bool):
        module = sys.modules.get(names[number]) or _import(folder / f"{names[number]}.py", names[number])
        args = _arguments(GROUPS[number], shape, np.random.default_rng(number))
        try:
            return check_derivative(getattr(module, shape), *args, wrt=tuple(range(len(args))), jit=jit)
        except Exception as exc:  # every rule of the group reports this, not only the first test
            return exc

    yield report
    for name in names:
        sys.modules.pop(name, None)


def _group_of(name: str) -> int:
    return next(number for number, rules in enumerate(GROUPS) if any(rule.name == name for _, rule in rules))


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind, rule", ALL_RULES, ids=[rule.name for _, rule in ALL_RULES])
def test_rule(kind: str, rule: Rule, shape: str, jit: bool, report_of):
    if rule.name not in DOMAINS:
        pytest.fail(f"rule {rule.name!r} has no domain: add its operands' ranges to DOMAINS in {Path(__file__).name}")
    report = report_of(_group_of(rule.name), shape, jit)
    if isinstance(report, Exception):
        raise report
    mine = [check for check in report.checks if check.wrt in _operands(rule) or check.wrt is None]
    assert len(mine) > len(rule.partials), str(report)
    failed = [check for check in mine if not check.ok]
    assert not failed, f"{rule.name} ({shape}, jit={jit}):\n" + "\n".join(str(check) for check in mine)


def test_rule_names_are_unique_across_tables():
    names = [rule.name for _, rule in ALL_RULES]
    assert len(names) == len(set(names))


def test_every_domain_belongs_to_a_rule():
    stale = set(DOMAINS) - {rule.name for _, rule in ALL_RULES}
    assert not stale, f"DOMAINS has entries for rules that no longer exist: {sorted(stale)}"


def test_every_domain_has_one_range_per_operand():
    wrong = [rule.name for _, rule in KNOWN if len(DOMAINS[rule.name]) != len(rule.partials)]
    assert not wrong, f"DOMAINS entries with the wrong number of operands: {wrong}"
