"""What a primitive is: its signature, the type of its result, and its derivative in one form.

Every pass asks these declarations (`sourcead.rules.primitive_of`), never a list of names of its own:
the fence binds a call to the signature, normalize writes the canonical call, kinds asks `result`,
activity asks which arguments are differentiable, linearize instantiates the derivative, emit
imports the runtime helpers. The derivative forms:

    Partials    elementwise: one partial derivative per operand, over {x}, {y}, the result {z}
                and the reciprocal {r} of y;
                `{m}` is `math` on floats and `np` on arrays. Both modes come from these.
                `singular` names the operands whose partial may be non-finite at a finite value
                (`regular_above_zero`: not where the first operand is positive).
    Selection   piecewise: each operand's derivative passes where it is the one selected (a mask
                per operand), so an unselected operand contributes exactly zero, never 0 * inf.
    Pullback    one operand, not elementwise: the tangent from the operand's tangent {t}, and the
                operand's adjoint contribution from the result's adjoint {g} (a linear operation
                reads neither {x} nor {z}: its pullback is its transpose).
    Bilinear    linear in each of two operands (products): a tangent and an adjoint per operand.

A primitive without a derivative is either `constant` (its derivative is zero wherever it is
defined: floor, sign, comparisons, sizes) or refused on values that carry derivatives, with a
positioned error (a function we can run but not differentiate, e.g. math.lgamma before its rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..ir.types import Type
from .signature import Signature


class ResultError(Exception):
    """The arguments' types do not fit the primitive: `param` names the argument at fault, if one is."""

    def __init__(self, message: str, hint: str = "", param: str | None = None):
        super().__init__(message)
        self.hint = hint
        self.param = param


@dataclass(frozen=True)
class Args:
    """What a result rule sees: the name of the call, the types of its arguments by parameter
    name (and of every operand, for variadic primitives), and the values of its literals."""

    name: str
    types: dict[str, Type]
    operands: tuple[Type, ...] = ()
    literals: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, param: str) -> Type:
        return self.types[param]

    def has(self, param: str) -> bool:
        return param in self.types

    def literal(self, param: str, default: Any = None) -> Any:
        return self.literals.get(param, default)


@dataclass(frozen=True)
class Partials:
    templates: tuple[str, ...]  # per operand in `Primitive.operands` order
    arrays: tuple[str, ...] | None = None  # where they differ: the partials when an operand is an array
    # the operands (positions) whose partial may be infinite or nan where the value and the operands
    # are finite (sqrt at 0, arcsin at 1, x ** 0.5 at 0): forward mode guards their contributions,
    # an exactly zero tangent contributing exactly zero (the strong zero), and only theirs
    singular: tuple[int, ...] = ()
    # every singular partial is finite where the first operand is positive (sqrt, cbrt, powers):
    # none is guarded where it is visibly so (`math.sqrt(d * d + 0.1)`, `derive/singular.py`)
    regular_above_zero: bool = False

    def for_arrays(self, arrays: bool) -> tuple[str, ...]:
        return self.arrays if arrays and self.arrays is not None else self.templates


@dataclass(frozen=True)
class Selection:
    masks: tuple[str, ...]  # per operand: where it is the one selected, over {a0}, {a1}, ...


@dataclass(frozen=True)
class Pullback:
    tangent: str  # over {t} (the operand's tangent), {x}, {z} and the other arguments by name
    adjoint: str  # over {g} (the result's adjoint), {x}, {z} and the other arguments by name
    spread: bool = False  # the adjoint is a float for an array operand: spread it into x's shape

    @property
    def linear(self) -> bool:
        return not any(f"{{{v}}}" in self.tangent + self.adjoint for v in ("x", "z"))


@dataclass(frozen=True)
class Bilinear:
    tangents: tuple[str, str]  # the contribution of a's tangent {t} (over {b}) and of b's (over {a})
    adjoints: tuple[str, str]  # the adjoint of a and of b, over {g}, {a}, {b}


@dataclass(frozen=True)
class Joint:
    """All operands at once, by one call that is not elementwise (a derivative call, `nested.py`):
    `tangent(args, types, tangents)` the result's tangent from every operand's tangent (None where
    it carries none); `adjoint(args, types, g)` one call whose result holds every operand's adjoint
    (a tuple) and, per operand position, its index there. Arguments and results are code text."""

    tangent: Callable[[list[str], list[Type], list[str | None]], str]
    adjoint: Callable[[list[str], list[Type], str], tuple[str, dict[int, int]]]


Derivative = Partials | Selection | Pullback | Bilinear | Joint


@dataclass(frozen=True)
class SecondOrderGap:
    """What second order (hvp, hessian: reverse mode over the forward mode's code) lacks for a
    primitive: it is refused on a value that carries a derivative, at the user's statement
    (`forward/second.py`), saying `message` (over {name}, the primitive, and {why}) and `instead`."""

    why: str
    instead: str = "Compute it from values that carry no derivative."
    message: str = "second order does not cover `{name}` of a value that carries a derivative yet ({why})"

    def says(self, name: str) -> str:
        return self.message.format(name=name, why=self.why)


@dataclass(frozen=True)
class Primitive:
    """One operation of the subset, declared once."""

    name: str  # canonical: `np.sin`, `Add`, `max`, `np.sum`
    signature: Signature
    result: Callable[[Args], Type]
    derivative: Derivative | None = None
    constant: bool = False  # piecewise constant: its derivative is zero wherever it is defined
    operands: tuple[str, ...] | None = None  # the differentiable parameters (default: the required ones)
    spellings: tuple[str, ...] = ()  # other Python names of the same function (besides `name`)
    helpers: tuple[str, ...] = ()  # runtime helpers its derivative calls (sourcead.runtime)
    domain: tuple[tuple[float, float], ...] = ()  # tests draw each operand from these ranges
    example: str = ""  # tests: a float expression over arrays a (4x3), b (3,), c (4,), d (6,)
    special: Callable[..., Derivative | None] | None = None  # another derivative for some literal arguments
    lower: Callable[..., Any] | None = None  # normalize rewrites some calls into other primitives (bound -> expr)
    copies: bool = False  # the result is a copy of its operand (np.copy): a new array the code may then write
    view: bool = False  # the result is a view of its first operand (np.transpose): writes show through
    # about as cheap as a record and its restore (on scalars; on arrays, a mask or selection that
    # carries no derivative): a loop body's prefix may compute it again in the reverse sweep rather
    # than record its result (recompute.py)
    recomputed: bool = False
    # far costlier than keeping its result (a factorisation): a call of it inside a larger
    # expression is bound to a temporary of its own (normalize), whose value the reverse sweep
    # then reads rather than compute it again (reverse/held.py)
    kept: bool = False
    # a new array whose shape is that of this parameter: `shape` (a size or a tuple of sizes, as
    # np.zeros takes it) or `a` (an array: np.zeros_like, np.copy); the shape contract and the
    # checkpoint state read sizes through it (contract.py, coverage.py)
    shaped_as: str | None = None
    # an expression of its parameters (`matmul_like({a}, {b})`) with the shape of its result but
    # cheaper to compute: what `unbroadcast` reads to sum an adjoint back to this operation's
    # result, instead of computing the result again (linearize.py)
    shape_like: str | None = None
    # its tangent calls what second order cannot differentiate yet: refused there (SecondOrderGap)
    second_order: SecondOrderGap | None = None

    @property
    def differentiable(self) -> tuple[str, ...]:
        if self.derivative is None:
            return ()
        if self.operands is not None:
            return self.operands
        return tuple(p.name for p in self.signature.params if p.required)

    @property
    def variadic(self) -> bool:
        return self.signature.variadic

    @property
    def sizes(self) -> tuple[str, ...]:
        """The parameters that are sizes (named `shape`, `newshape`, `num`): ints, or tuples of ints."""
        return tuple(p.name for p in self.signature.params if p.name in ("shape", "newshape", "num"))

    @property
    def arrays(self) -> tuple[str, ...]:
        """The parameters that must be arrays (named `a` and `b` by convention, see arrays.py)."""
        return tuple(p.name for p in self.signature.params if p.name in ("a", "b"))


@dataclass(frozen=True)
class Method:
    """`x.name(...)` spelled as a call of a primitive: `x.sum(axis=1)` is `np.sum(x, axis=1)`."""

    name: str
    primitive: str
    signature: Signature  # the method's own, its first parameter being the array itself


@dataclass(frozen=True)
class Constant:
    """A module constant such as `math.pi` or `np.inf`, frozen into the generated code."""

    name: str
    value: float
