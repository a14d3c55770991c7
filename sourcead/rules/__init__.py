"""All derivative rules, in one place.

An elementwise primitive declares its partial derivatives once, as expression templates over its
operands `{x}`, `{y}` and its result `{z}`; forward mode (tangents) and reverse mode (adjoints)
are both derived from that one entry by `sourcead.linearize`.
"""

from .table import (
    ARRAY_CREATION,
    AXIS_REDUCTIONS,
    BILINEAR,
    BINARY_OPERATORS,
    CONSTANT_FUNCTIONS,
    ELEMENTWISE,
    INTEGER_FUNCTIONS,
    REDUCTIONS,
    RESHAPES,
    SELECTIONS,
    UNARY_OPERATORS,
    Bilinear,
    Reduction,
    Rule,
    binary_rule,
    known_calls,
)

__all__ = [
    "ARRAY_CREATION",
    "AXIS_REDUCTIONS",
    "BILINEAR",
    "BINARY_OPERATORS",
    "CONSTANT_FUNCTIONS",
    "ELEMENTWISE",
    "INTEGER_FUNCTIONS",
    "REDUCTIONS",
    "RESHAPES",
    "SELECTIONS",
    "UNARY_OPERATORS",
    "Bilinear",
    "Reduction",
    "Rule",
    "binary_rule",
    "known_calls",
]
