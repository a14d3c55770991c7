"""A derivative call (`force = sourcead.grad(potential, wrt=0)` called as `force(x, q)`, registered
in `sourcead/nested.py`) as a primitive: its result is the gradient with respect to argument w,
typed like that argument, and its derivative one `Joint` call of the Hessian-vector product:

    tangent    force_hvp(x, q, x_dot, q_dot)[w]        the w-part of H (x_dot, q_dot)
    adjoints   force_hvp(x, q, F_bar, 0.0)             H[:, w] F_bar, by H's symmetry: entry k
                                                        is the adjoint of float argument k

`force_hvp` takes a tangent for every float argument (zeros where one carries none) and returns
one result per float argument, in order.
"""

from __future__ import annotations

import libcst as cst

from ..ir.core import Assign, CoreFunction, walk_statements
from ..ir.exprs import dotted, walk
from ..ir.types import Type
from ..nested import NestedCall, by_key, by_name
from .forms import Args, Joint, Primitive, SecondOrderGap
from .signature import Signature

_SPECIAL = ("a", "b", "shape", "newshape", "num")  # parameter names that other rules read by name


def nested_primitive(name: str) -> Primitive | None:
    """The primitive of the derivative call with canonical name (`nested.module.global`) or
    generated name `name`, if one is registered."""
    call = by_key(name) if name.startswith("nested.") else by_name(name)
    return as_primitive(call) if call is not None else None


def floats(types: list[Type]) -> list[int]:
    """The positions of the arguments that can carry a derivative: the hvp's wrt."""
    return [k for k, t in enumerate(types) if t.carries]


def _zero(arg: str, t: Type) -> str:
    return f"np.zeros_like({arg})" if t.is_array else "0.0"


def as_primitive(call: NestedCall) -> Primitive:
    params = [p + "_" if p in _SPECIAL else p for p in call.params]
    (w,) = call.wrt

    def result(args: Args) -> Type:
        t = args[params[w]]
        return Type("float", t.ndim)

    def tangent(args: list[str], types: list[Type], dots: list[str | None]) -> str:
        places = floats(types)
        seeds = [dots[k] if dots[k] is not None else _zero(args[k], types[k]) for k in places]
        return f"{call.hvp_name}({', '.join(args + seeds)})[{places.index(w)}]"  # type: ignore[operator]

    def adjoint(args: list[str], types: list[Type], g: str) -> tuple[str, dict[int, int]]:
        places = floats(types)
        seeds = [g if k == w else _zero(args[k], types[k]) for k in places]
        return f"{call.hvp_name}({', '.join(args + seeds)})", {k: j for j, k in enumerate(places)}

    gap = SecondOrderGap(
        f"`{call.name}` is a derivative itself: second order of a function that calls it needs third derivatives",
        f"Differentiate the function that calls {call.name} once (sourcead.grad, jvp or vjp).",
        "second order does not cover derivative calls yet: {why}",
    )
    signature = Signature.parse(", ".join(params))
    like = "{" + params[w] + "}"  # a gradient has the shape of its argument
    return Primitive(call.key, signature, result, Joint(tangent, adjoint), second_order=gap, shape_like=like)


def call_sites(key: str, fn: CoreFunction, type_of) -> list[tuple[tuple[str, ...], tuple[int, ...], cst.CSTNode]]:
    """Each call of the derivative call `key` in `fn`: the kinds of its arguments (`Type.spec`),
    the positions of its float arguments, and the user's statement it is in."""
    call = by_key(key)
    assert call is not None
    found = []
    for stmt in walk_statements(fn.body):
        if not isinstance(stmt, Assign):
            continue
        for node in walk(stmt.value):
            if isinstance(node, cst.Call) and dotted(node.func) == call.call_name:
                types = [type_of(arg.value) for arg in node.args]
                found.append((tuple(t.spec() for t in types), tuple(floats(types)), stmt.origin))
    return found
