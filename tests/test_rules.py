"""Every elementwise primitive of the declarations (`sourcead/rules/`), checked numerically by
iterating them.

For each primitive a one-line use (`math.sin(x)`, `x % y`, `-x`, `max(x, y)`) is generated into
real source files (sourcead reads source): once on floats, summed into a float result (so grad
applies), and once inside a loop over array elements, written into an output array per primitive
(a tuple of arrays). `sourcead.check_derivative` then checks jvp, vjp and grad against finite
differences and the dot-product test, compiled and as plain Python, at random points of the
primitive's `domain` (declared with it).

A new primitive needs no test code: its declaration's domain is all; one without a domain fails here.
Primitives are compiled in groups of GROUP, since numba's cost is per function more than per line.
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
from sourcead.frontend.resolve import _CANONICAL
from sourcead.rules import PRIMITIVES, Partials, Primitive, Selection
from sourcead.rules.elementwise import OPERATOR_NODES

_OPERATORS = {name: node for node, name in OPERATOR_NODES.items()}
_SPELLED = set(_CANONICAL.values())


def _kind(prim: Primitive) -> str | None:
    """How user code writes it: a call, a binary or a unary operator (None: not elementwise here)."""
    if prim.name in _OPERATORS and prim.name != "MatrixMultiply":
        return "unary" if len(prim.signature.params) == 1 else "binary"
    return "call" if prim.name in _SPELLED else None


# made by forward mode only (runtime helpers its tangent code calls, read back by second order):
# tested in test_second_order.py and test_forward_strong_zero.py (`chosen`, hvp's strong zero)
FORWARD_ONLY = {"broadcast_tangent", "select_along", "chosen"}

# elementwise primitives, scalar operands: differentiable ones, and piecewise-constant operators
ALL_RULES = [
    (_kind(p), p)
    for p in PRIMITIVES.values()
    if _kind(p) is not None
    and p.name not in FORWARD_ONLY
    and not p.arrays
    and (isinstance(p.derivative, Partials | Selection) and not p.example or p.domain)
]
GROUP = 20  # rules per generated function
LENGTH = 4  # array elements in the loop version
KNOWN = [(kind, rule) for kind, rule in ALL_RULES if rule.domain]
GROUPS = [KNOWN[start : start + GROUP] for start in range(0, len(KNOWN), GROUP)]
SHAPES = ("scalar", "loop")


def _arity(rule: Primitive) -> int:
    return len([p for p in rule.signature.params if p.required])


def _ident(rule: Primitive) -> str:
    return re.sub(r"\W", "_", rule.name)


def _operands(rule: Primitive) -> list[str]:
    return [f"{letter}_{_ident(rule)}" for letter in "xy"[: _arity(rule)]]


def _expression(kind: str, rule: Primitive, operands: list[str]) -> str:
    """The rule applied to `operands`: a call, or its operator (spelled by libcst)."""
    if kind == "call":
        return f"{rule.name}({', '.join(operands)})"
    names = [cst.parse_expression(operand) for operand in operands]
    operator = _OPERATORS[rule.name]()
    node = (
        cst.BinaryOperation(names[0], operator, names[1]) if kind == "binary" else cst.UnaryOperation(operator, *names)
    )
    return cst.Module([]).code_for_node(node)


def _source(rules: list[tuple[str, Primitive]]) -> str:
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


def _arguments(rules: list[tuple[str, Primitive]], shape: str, rng: np.random.Generator) -> tuple:
    size = None if shape == "scalar" else LENGTH
    draws = [rng.uniform(low, high, size) for _, rule in rules for low, high in rule.domain]
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
def test_rule(kind: str, rule: Primitive, shape: str, jit: bool, report_of):
    if not rule.domain:
        pytest.fail(
            f"primitive {rule.name!r} has no domain: declare its operands' ranges (domain=...) in sourcead/rules/"
        )
    report = report_of(_group_of(rule.name), shape, jit)
    if isinstance(report, Exception):
        raise report
    mine = [check for check in report.checks if check.wrt in _operands(rule) or check.wrt is None]
    assert len(mine) > _arity(rule), str(report)
    failed = [check for check in mine if not check.ok]
    assert not failed, f"{rule.name} ({shape}, jit={jit}):\n" + "\n".join(str(check) for check in mine)


def test_every_domain_has_one_range_per_operand():
    wrong = [rule.name for _, rule in KNOWN if len(rule.domain) != _arity(rule)]
    assert not wrong, f"declarations whose domain has the wrong number of operands: {wrong}"


def test_every_differentiable_primitive_is_tested_here_or_by_its_example():
    """Elementwise primitives have a domain (tested above); the others an example (test_array_rules.py)."""
    tested = {rule.name for _, rule in KNOWN}
    internal = {"snapshot"}  # made by normalize only (evaluation order), tested through the zoo
    internal |= FORWARD_ONLY
    missing = [
        p.name
        for p in PRIMITIVES.values()
        if p.derivative is not None and p.name not in tested and not p.example and p.name not in internal
    ]
    assert not missing, f"differentiable primitives with neither a domain nor an example: {missing}"
