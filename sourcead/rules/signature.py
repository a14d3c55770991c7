"""Signatures of primitives: which arguments a call may pass, by position or keyword, and which
must be literals (an axis, `keepdims`, a dtype). Every pass reads a call through `bind`.

A signature is written like a Python parameter list:

    "x"                      one operand
    "a, axis=!"              an optional argument that must be a literal (here an integer)
    "shape, fill_value, dtype=!"
    "x, y, ..."              two or more operands (min, max)
    "self, shape..."         a method whose remaining arguments are collected as `shape` (x.reshape(2, 3))

`=` marks an optional argument, `!` one whose value must be known when the code is generated.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class Param:
    name: str
    required: bool = True
    literal: bool = False


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    variadic: bool = False  # the last required parameter repeats: f(x, y, ...) takes two or more
    collect: str | None = None  # the name that collects the remaining positional arguments

    @classmethod
    def parse(cls, text: str) -> Signature:
        params, variadic, collect = [], False, None
        for part in (p.strip() for p in text.split(",") if p.strip()):
            if part == "...":
                variadic = True
                continue
            if part.endswith("..."):
                collect = part[:-3]
                continue
            name, optional, default = part.partition("=")
            params.append(Param(name.strip(), required=not optional, literal=default.strip() == "!"))
        return cls(tuple(params), variadic, collect)

    def arity(self) -> str:
        required = [p for p in self.params if p.required]
        if self.variadic:
            return f"at least {len(required)} arguments"
        if len(required) == len(self.params):
            return f"{len(required)} argument{'s' if len(required) != 1 else ''}"
        return f"{len(required)} to {len(self.params)} arguments"

    def describe(self, name: str) -> str:
        """`np.sum(a, axis=...)`: the call as a user may write it."""
        shown = []
        for p in self.params:
            shown.append(p.name if p.required else f"{p.name}=...")
        if self.variadic:
            shown.append("...")
        if self.collect:
            shown.append(f"*{self.collect}")
        return f"{name}({', '.join(shown)})"


_LITERAL = "a literal (a constant such as 0 or -1)"
_LITERALS = {
    "dtype": "np.float64 (or float), np.float32, np.int64 (or int), np.bool_ (or bool), or x.dtype of an array x"
}


class BindError(Exception):
    """A call outside its primitive's signature; `node` is the argument at fault (or the call)."""

    def __init__(self, node: cst.CSTNode, message: str):
        super().__init__(message)
        self.node = node


@dataclass(frozen=True)
class Bound:
    """A call's arguments by parameter name; `operands` lists a variadic call's operands in order."""

    args: dict[str, cst.BaseExpression]
    operands: tuple[cst.BaseExpression, ...] = ()
    collected: tuple[cst.BaseExpression, ...] = ()

    def get(self, name: str) -> cst.BaseExpression | None:
        return self.args.get(name)


def bind(signature: Signature, args: list[cst.Arg], name: str, call: cst.CSTNode, is_literal) -> Bound:
    """Match `args` to `signature` as Python would, or raise `BindError`. `is_literal(expr)` says
    whether an expression is a compile-time constant."""
    for arg in args:
        if arg.star:
            raise BindError(arg, f"{name} does not take starred arguments here")
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    if keywords and any(a.keyword is None for a in args[args.index(keywords[0]) :]):
        raise BindError(call, "positional argument after a keyword argument")
    params = list(signature.params)
    bound: dict[str, cst.BaseExpression] = {}
    operands: list[cst.BaseExpression] = []
    collected: list[cst.BaseExpression] = []
    if signature.variadic:
        if keywords:
            raise BindError(keywords[0], f"{name} takes no keyword arguments")
        if len(positional) < len(params):
            raise BindError(call, f"{name} takes {signature.arity()}, got {len(positional)}")
        operands = [a.value for a in positional]
        return Bound({p.name: a.value for p, a in zip(params, positional, strict=False)}, tuple(operands))
    for k, arg in enumerate(positional):
        if k < len(params):
            bound[params[k].name] = arg.value
        elif signature.collect:
            collected.append(arg.value)
        else:
            raise BindError(arg, f"{name} takes {signature.arity()}, got {len(positional)}")
    names = {p.name for p in params}
    for arg in keywords:
        key = arg.keyword.value  # type: ignore[union-attr]
        if key not in names:
            accepted = ", ".join(p.name for p in params if not p.required) or "none"
            raise BindError(arg, f"{name} does not take the keyword `{key}` here (keywords accepted: {accepted})")
        if key in bound:
            raise BindError(arg, f"{name} got `{key}` twice")
        bound[key] = arg.value
    for p in params:
        if p.required and p.name not in bound and not (p.name == signature.collect):
            raise BindError(call, f"{name} needs its argument `{p.name}` ({signature.arity()})")
        if p.literal and p.name in bound and not is_literal(bound[p.name]):
            raise BindError(bound[p.name], f"`{p.name}` of {name} must be {_LITERALS.get(p.name, _LITERAL)} here")
    return Bound(bound, (), tuple(collected))
