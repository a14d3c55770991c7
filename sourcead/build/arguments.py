"""What a call's arguments may be, and how they reach the generated code.

Decided once per prepared variant (the closures are built with it), applied at every call:

* which variant an argument selects (`arg_key`, `arg_spec`): an array's dtype and ndim, whether
  a number is an int or a bool;
* each argument's conversion (`converter`): what NumPy converts exactly and cheaply is converted
  (an array in the other byte order, a float16 or float32 array that is not differentiated, read
  as float64), what the generated code would misread is refused with an `ArgumentTypeError`
  (masked arrays, `np.matrix` and other ndarray subclasses that change what operations mean:
  `callplan.plain_array`), and an argument the code writes is copied, never the caller's;
* arguments that share memory with one the function writes (`check_overlap`: `AliasingError`);
* `out=` buffers (`check_out`): float64, the argument's shape, writeable, distinct elements, no
  overlap with an input or another buffer;
* `jit=` of a transform (`check_jit`): a bool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import AliasingError, ArgumentTypeError, SourceADError
from ..ir.types import Type
from .callplan import overlaps_itself, plain_array

DTYPE_OF_KIND = {"f": "float", "i": "int", "u": "int", "b": "bool"}
# float arrays a float64 parameter that is not differentiated reads exactly, as float64
_WIDENED = frozenset(np.dtype(t) for t in (np.float16, np.float32))


def check_jit(jit: Any) -> bool:
    """`jit=` of a transform: True or False (a string such as "yes" is a mistake, not a truth)."""
    if not isinstance(jit, (bool, np.bool_)):
        raise SourceADError(f"jit= must be True or False, got {jit!r}", hint="Pass jit=True (numba) or jit=False.")
    return bool(jit)


# --- memory shared between arguments -------------------------------------------------------------


def alias_pairs(spec: Any, types: list[Type]) -> tuple[tuple[int, int], ...]:
    """Array arguments the generated code may write, paired with every other array argument."""
    arrays = [k for k, t in enumerate(types) if t.is_array]
    written = [spec.params.index(p) for p in spec.copied]
    return tuple((w, k) for w in written for k in arrays if k != w)


def check_overlap(variant: Any, args: tuple) -> None:
    """Arguments that share memory with one the function writes: the derivative of the call as
    run (where writes show through the other name) is not the one the compiled code computes,
    so refuse it. Overlap is judged on memory, never on object identity: views, strided slices,
    reshapes and one buffer wrapped twice all count."""
    for w, k in variant.alias_pairs:
        a, b = args[w], args[k]
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and overlap(a, b):
            spec = variant.spec
            raise AliasingError(
                f"arguments `{spec.params[w]}` and `{spec.params[k]}` of {spec.name} share memory, "
                f"and {spec.name} writes into `{spec.params[w]}`",
                hint=f"Pass a copy, e.g. {spec.params[k]}.copy(), if the function should not see its own writes.",
            )


def overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Do the memory ranges of `a` and `b` intersect? Exact for interleaved views (x[::2] and
    x[1::2] do not); when the exact answer is too costly, assume they do."""
    if not np.may_share_memory(a, b):  # memory bounds only: cheap
        return False
    try:
        # numpy's stubs allow only its two MAY_SHARE constants here; any bound is valid at run time
        return bool(np.shares_memory(a, b, max_work=10_000))  # type: ignore[arg-type]
    except np.exceptions.TooHardError:
        return True


# --- the variant an argument selects -------------------------------------------------------------


def arg_key(value: Any, is_wrt: bool) -> Any:
    """What of an argument decides the variant: an array's dtype and ndim (a float16 or float32
    array not differentiated is read as float64); whether a number is an int or a bool (not for
    an argument differentiated: it is a float whatever it is passed as)."""
    if isinstance(value, np.ndarray):
        char = value.dtype.char
        return ("d" if char in "ef" and not is_wrt else char, value.ndim)
    if is_wrt or isinstance(value, (float, np.floating)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return "?"
    return "l" if isinstance(value, (int, np.integer)) else None


def arg_spec(value: Any, name: str, is_wrt: bool) -> str:
    """The type (`Type.spec`) that an argument gives its parameter."""
    if not isinstance(value, np.ndarray):
        key = arg_key(value, is_wrt)
        return {"?": "bool", "l": "int"}.get(key, "float")
    dtype = DTYPE_OF_KIND.get(value.dtype.kind)
    native = value.dtype.newbyteorder("=")
    if dtype is None or (dtype == "float" and native != np.float64 and (is_wrt or native not in _WIDENED)):
        raise ArgumentTypeError(
            f"argument `{name}` is a {value.dtype} array; sourcead takes float64, integer and bool arrays"
            + ("" if dtype is None else " (float16 and float32 where not differentiated)"),
            hint=f"Convert it: {name}.astype(np.float64).",
        )
    if value.ndim == 0:
        raise ArgumentTypeError(f"argument `{name}` is a 0-d array", hint=f"Pass a float: float({name}).")
    return Type(dtype, value.ndim).spec()


def dtype_fits(dtype: np.dtype, wanted: str) -> bool:
    """float64 for float arrays, any integer dtype for integer arrays, bool for masks."""
    return dtype == np.float64 if wanted == "float" else DTYPE_OF_KIND.get(dtype.kind) == wanted


def spec_key(t: Type) -> Any:
    """The `arg_key` of arguments of type `t`."""
    if not t.is_array:
        return {"int": "l", "bool": "?"}.get(t.dtype)
    return ({"float": "d", "int": "l", "bool": "?"}[t.dtype], t.ndim)


# --- converting each argument ----------------------------------------------------------------------


def converter(spec: Any, k: int, t: Type, jit: bool) -> Callable[[Any], Any]:
    """The closure that checks and converts argument `k` of a variant at every call."""
    if t.is_array:
        return _to_array(spec, k, t)
    name, fname = spec.params[k], spec.name
    if t.dtype == "bool":

        def to_bool(value: Any) -> bool:
            if not isinstance(value, (bool, np.bool_)):
                raise SourceADError(f"argument `{name}` of {fname} is used as a bool; got {type(value).__name__}")
            return bool(value)

        return to_bool
    if t.dtype == "int":

        def to_int(value: Any) -> int:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise SourceADError(
                    f"argument `{name}` of {fname} is used as an integer (a loop bound or an index); "
                    f"got {type(value).__name__}"
                )
            return int(value)

        return to_int
    scalar = float if jit else np.float64  # plain Python runs on NumPy floats: NumPy's error model

    def to_float(value: Any) -> float:
        if isinstance(value, np.ndarray) or not isinstance(value, (int, float, np.integer, np.floating)):
            if isinstance(value, (complex, np.complexfloating)):
                raise ArgumentTypeError(
                    f"argument `{name}` of {fname} is complex; sourcead differentiates real numbers"
                )
            raise ArgumentTypeError(
                f"argument `{name}` of {fname} is used as a scalar; got {type(value).__name__}",
                hint="Arrays must be indexed element by element in the function.",
            )
        return scalar(value)

    return to_float


def _to_array(spec: Any, k: int, t: Type) -> Callable[[Any], Any]:
    name, fname = spec.params[k], spec.name
    is_wrt = name in spec.wrt
    copy = name in spec.copied  # the generated code writes into it: never into the caller's array
    widen = t.dtype == "float" and not is_wrt

    def to_array(value: Any) -> Any:
        if type(value) is not np.ndarray:
            if not isinstance(value, np.ndarray):
                raise ArgumentTypeError(
                    f"argument `{name}` of {fname} must be {t.describe()}, got {type(value).__name__}",
                    hint="The function indexes it: pass a NumPy array.",
                )
            value = plain_array(value, f"argument `{name}` of {fname}")
        given = value
        if not value.dtype.isnative:  # the other byte order: NumPy swaps it in one pass
            value = value.astype(value.dtype.newbyteorder("="))
        if widen and value.dtype.char in "ef":  # float16, float32: exact, every one is a float64
            value = value.astype(np.float64)
        if is_wrt and value.dtype != np.float64:
            raise ArgumentTypeError(
                f"cannot differentiate with respect to `{name}`: it is a {value.dtype} array",
                hint=f"Pass a float64 array, e.g. {name}.astype(np.float64).",
            )
        if value.ndim != t.ndim or not dtype_fits(value.dtype, t.dtype):
            raise ArgumentTypeError(
                f"argument `{name}` of {fname} must be {t.describe()}, got a {value.ndim}-D {value.dtype} array",
                hint="Complex arrays are not supported." if value.dtype.kind == "c" else "",
            )
        return value.copy() if copy and value is given else value

    return to_array


# --- out= ------------------------------------------------------------------------------------------


def check_out(variant: Any, single: bool, out: Any, args: tuple, inputs: tuple = ()) -> tuple:
    """out= as one buffer per wrt entry (None: allocate), each checked before the call:
    float64, the argument's shape, writeable, distinct elements (a zero stride would make every
    element the last one written), no overlap with an input or another buffer."""
    spec = variant.spec
    outs = (out,) if single else out
    if not isinstance(outs, tuple) or len(outs) != len(spec.wrt):
        raise SourceADError(
            f"out= must have the structure of the gradients: {'one buffer' if single else 'a tuple of '}"
            + ("" if single else f"{len(spec.wrt)} buffers (None for a float)")
        )
    seen: list[tuple[str, np.ndarray]] = []
    for buffer, name, pos, is_array in zip(outs, spec.wrt, variant.wrt_pos, variant.wrt_array, strict=True):
        if buffer is None:
            continue
        if not is_array:
            raise SourceADError(
                f"out= for `{name}` must be None: the derivative with respect to a float is returned as a float"
            )
        shape = np.shape(args[pos])
        if not isinstance(buffer, np.ndarray) or buffer.dtype != np.float64 or buffer.shape != shape:
            got = f"a {buffer.dtype} array of shape {buffer.shape}" if isinstance(buffer, np.ndarray) else None
            raise SourceADError(
                f"out= for `{name}` must be a float64 array of shape {shape}, got {got or type(buffer).__name__}"
            )
        plain_array(buffer, f"out= for `{name}`")
        if not buffer.flags.writeable:
            raise SourceADError(f"out= for `{name}` is a read-only array")
        if overlaps_itself(buffer):
            raise AliasingError(
                f"out= for `{name}` overlaps itself (strides {buffer.strides} for shape {buffer.shape}: "
                "several elements share memory), so it cannot hold a gradient",
                hint="Pass an array with distinct elements, e.g. np.empty(shape).",
            )
        for k, arg in enumerate(args):
            if isinstance(arg, np.ndarray) and overlap(buffer, arg):
                raise AliasingError(f"out= for `{name}` overlaps argument `{spec.params[k]}`")
        for what, value in inputs:
            if isinstance(value, np.ndarray) and overlap(buffer, value):
                raise AliasingError(f"out= for `{name}` overlaps the {what}")
        for other, earlier in seen:
            if overlap(buffer, earlier):
                raise AliasingError(f"out= buffers for `{other}` and `{name}` overlap")
        seen.append((name, buffer))
    return outs
