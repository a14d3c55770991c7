"""The types of values in the supported subset: a dtype (float, int, bool) and a number of dimensions.

    FLOAT, INT, BOOL          Python floats, ints and bools (and NumPy scalars of those kinds)
    array(FLOAT, 2)           a 2-D float64 array; array(INT, 1) an integer array, array(BOOL, 1) a mask
    tuple_of(INT, INT)        a tuple (only as a value in flight: `A.shape`, the shape argument of np.zeros)

Only floats and float arrays carry derivatives. Scalars join as NumPy promotes them (bool < int <
float); an array never joins a scalar, nor an array of another dtype or number of dimensions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_DTYPES = ("bool", "int", "float")  # in promotion order


@dataclass(frozen=True)
class Type:
    dtype: str  # "float", "int", "bool", or "tuple"
    ndim: int = 0
    elements: tuple[Type, ...] = ()  # of a tuple
    # a float that may be stored in float32 (`np.empty(n, dtype=np.float32)` and what reads it): a
    # real number to differentiation, but its derivatives are allocated float64, not `_like` it.
    # Over-approximate (a float32 array plus a float64 one may be float64) and left out of equality.
    single: bool = field(default=False, compare=False)

    @property
    def is_array(self) -> bool:
        return self.ndim > 0

    @property
    def is_scalar(self) -> bool:
        return self.ndim == 0 and self.dtype != "tuple"

    @property
    def is_tuple(self) -> bool:
        return self.dtype == "tuple"

    @property
    def carries(self) -> bool:
        """Can a value of this type carry a derivative? Floats and float arrays can."""
        return self.dtype == "float"

    @property
    def scalar(self) -> Type:
        """The type of one element."""
        return Type(self.dtype, single=self.single)

    def with_ndim(self, ndim: int) -> Type:
        return Type(self.dtype, max(ndim, 0), single=self.single)

    def as_single(self, single: bool = True) -> Type:
        """This type, marked as maybe float32 storage (floats only)."""
        return Type(self.dtype, self.ndim, self.elements, single and self.dtype == "float")

    def spec(self) -> str:
        """A short stable spelling, for call specs and cache keys: `float`, `int`, `array:2`, `int_array:1`."""
        if self.is_tuple:
            return "tuple(" + ",".join(e.spec() for e in self.elements) + ")"
        if not self.is_array:
            return self.dtype
        prefix = "array" if self.dtype == "float" else f"{self.dtype}_array"
        return f"{prefix}:{self.ndim}"

    def describe(self) -> str:
        """For error messages: `a float`, `a 2-D float64 array`, `a 1-D integer array`."""
        if self.is_tuple:
            return f"a tuple of {len(self.elements)}"
        if not self.is_array:
            return {"float": "a float", "int": "an integer", "bool": "a bool"}[self.dtype]
        dtype = {"float": "float64", "int": "integer", "bool": "bool"}[self.dtype]
        return f"a {self.ndim}-D {dtype} array"

    def __str__(self) -> str:
        return self.spec()


FLOAT, INT, BOOL = Type("float"), Type("int"), Type("bool")


def array(dtype: Type | str, ndim: int) -> Type:
    if isinstance(dtype, Type):
        return Type(dtype.dtype, ndim, single=dtype.single)
    return Type(dtype, ndim)


def tuple_of(*elements: Type) -> Type:
    return Type("tuple", 0, tuple(elements))


ARRAY_DTYPES = ("float", "int", "bool")  # the dtypes an argument's array may have: float64, int64, bool


def array_kind(ndim: int, dtype: str = "float") -> str:
    """The spec of an array argument (`Type.spec`), as `--array NAME:NDIM:DTYPE` gives it."""
    return f"array:{ndim}" if dtype == "float" else f"{dtype}_array:{ndim}"


def parse_spec(text: str) -> Type:
    """The inverse of `Type.spec` for scalars and arrays."""
    if ":" not in text:
        return Type(text)
    prefix, ndim = text.split(":")
    dtype = "float" if prefix == "array" else prefix[: -len("_array")]
    return Type(dtype, int(ndim))


def promote(*dtypes: str) -> str:
    """The dtype NumPy gives arithmetic on these dtypes (bool arithmetic gives int)."""
    rank = max(_DTYPES.index(d) for d in dtypes)
    return _DTYPES[max(rank, 1)]


def join(old: Type | None, new: Type) -> Type | None:
    """The type of a variable assigned values of both types, or None when they cannot share one."""
    if old is None:
        return new
    if old == new:
        return new.as_single(old.single or new.single)
    if old.is_scalar and new.is_scalar:
        return Type(_DTYPES[max(_DTYPES.index(old.dtype), _DTYPES.index(new.dtype))]).as_single(
            old.single or new.single
        )
    return None
