"""A custom rule (`sourcead.custom_rule`, registered in `sourcead/custom.py`) as a primitive: a float
function of floats whose partials are the user's, declared like the built-in ones."""

from __future__ import annotations

import inspect

from ..custom import CustomRule, by_key, by_name
from .forms import Partials, Primitive, SecondOrderGap
from .results import math_floats
from .signature import Signature


def custom_primitive(name: str) -> Primitive | None:
    """The primitive of the custom rule with canonical name (`custom.module.func`) or generated
    name `name`, if one is registered."""
    rule = by_key(name) if name.startswith("custom.") else by_name(name)
    return as_primitive(rule) if rule is not None else None


def as_primitive(rule: CustomRule) -> Primitive:
    """The rule as a primitive: a float function of floats, with these partials."""
    name, arity = rule.partials_name, len(inspect.signature(rule.func).parameters)
    operands = ", ".join("{" + "xy"[k] + "}" for k in range(arity))
    partials = Partials(tuple(f"{name}({operands})[{k}]" for k in range(arity)), singular=rule.singular)
    gap = SecondOrderGap(
        f"`{rule.key[len('custom.') :]}` has first partial derivatives only",
        "Call a plain function instead (sourcead inlines and differentiates it twice).",
        "second order does not cover custom rules yet: {why}",
    )
    signature = Signature.parse(", ".join("xy"[:arity]))
    return Primitive(rule.key, signature, math_floats, partials, second_order=gap)
