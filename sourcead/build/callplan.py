"""The call plan: what a call of one prepared variant checks before the compiled code runs.

Built once per variant from its spec, which carries the shape contract (`contract.py`):

* the shape facts, as one small Python function compiled when the plan is built, over the
  converted arguments (`check_shapes(x, y)`: `if x.shape[0] > 0 and not (x.shape[0] <= y.shape[0])`);
  a failed fact is a `ShapeError` naming the argument, the access, its line and the shape needed;
* written arguments that overlap themselves (a zero or overlapping stride): an `AliasingError`,
  since the function as run would see its own writes where the derivative assumes distinct elements;
* tangents and cotangents: real, the ndim (and, where the contract knows it, the shape) of the
  argument or result they stand for, checked before the call; an array result whose shape is only
  known after the call is compared then (that variant is compiled with bounds checks);
* raw errors out of the generated code (IndexError from numba's bounds checks or from Python,
  TypeError, ValueError): explained by running the user's own function in Python on the same
  arguments, within a time budget (`rerun.py`), which names the user's line; a call that fails
  only in sourcead's code says so.
"""

from __future__ import annotations

import json
import linecache
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AliasingError, ArgumentTypeError, Location, ShapeError, SourceADError
from ..runtime.checkpoint import STATE_CHANGED_SHAPE
from . import rerun


@dataclass(frozen=True)
class CallPlan:
    """The checks of one variant; `check_shapes(converted)` raises or returns None."""

    name: str
    params: tuple[str, ...]
    check_shapes: Callable[..., None] | None
    self_checked: tuple[int, ...]  # written array arguments: must not overlap themselves
    written: tuple[int, ...]  # arguments the function writes: extra outputs, after the results
    outputs: tuple[dict, ...]  # per result: ndim, and its shape as a function of the arguments (or None)
    checked_after: tuple[int, ...]  # array results whose shape only the call tells
    output_shapes: Callable[..., tuple] | None
    complete: bool  # every index is covered by a checked fact (else bounds-checked, at least for some calls)
    source: str  # the text of the shape checks, for people and for the .njit entry

    def before(self, original: tuple, converted: list) -> None:
        for k in self.self_checked:
            value = original[k]
            if isinstance(value, np.ndarray) and overlaps_itself(value):
                raise AliasingError(
                    f"argument `{self.params[k]}` of {self.name} overlaps itself (strides {value.strides} for shape "
                    f"{value.shape}: several elements share memory), and {self.name} writes into it element by element",
                    hint=f"Pass an array with distinct elements, e.g. np.ascontiguousarray({self.params[k]}).",
                )
        if self.check_shapes is not None:
            self.check_shapes(*converted[: len(self.params)])


def build(spec: Any) -> CallPlan:
    """The plan of a variant whose spec carries a contract (`Spec.contract`)."""
    contract: dict[str, Any] = (
        json.loads(spec.contract) if spec.contract else {"facts": [], "complete": False, "outputs": []}
    )
    params = tuple(spec.params)
    names = list(params) if "_fail" not in params else [f"a{k}" for k in range(len(params))]
    source = shape_check_source(contract, names, python=True)
    check = None
    if source:
        namespace: dict[str, Any] = {"_fail": _failure(spec.name, params, contract)}
        exec(compile(source, f"<sourcead shape checks of {spec.name}>", "exec"), namespace)
        check = namespace["check_shapes"]
    outputs = tuple(contract.get("outputs", ()))
    shapes = None
    if any(o.get("shape") for o in outputs):
        items = [
            "(" + "".join(f"{_text(d, names)}, " for d in o["shape"]) + ")" if o.get("shape") else "None"
            for o in outputs
        ]
        shapes = eval(f"lambda {', '.join(names)}: ({', '.join(items)},)", {})  # noqa: S307 - our own text
    return CallPlan(
        name=spec.name,
        params=params,
        check_shapes=check,
        self_checked=tuple(spec.params.index(p) for p in spec.copied),
        written=tuple(spec.params.index(p) for p in spec.mutated),
        outputs=outputs,
        checked_after=tuple(k for k, o in enumerate(outputs) if o.get("ndim") and not o.get("shape")),
        output_shapes=shapes,
        complete=bool(contract.get("complete")) and not contract.get("sufficient"),  # else checked where needed
        source=source,
    )


def needs_bounds_checks(spec: Any) -> bool:
    """Does some index of this variant's code escape the contract (so numba must check it)? Also
    where sufficient facts remain: a caller that does not test them (`sufficient_test`) before each
    call must take the bounds-checked variant."""
    if not spec.contract:
        return True
    contract = json.loads(spec.contract)
    return not contract.get("complete", False) or bool(contract.get("sufficient"))


def uncovered(spec: Any) -> list[str]:
    """The accesses no fact covers (`x[i * i] (line 12)`), in the user's words: bounds-checked."""
    return list(json.loads(spec.contract).get("uncovered", ())) if spec.contract else []


def sufficient_test(spec: Any) -> Callable[..., bool] | None:
    """For a complete contract with sufficient facts (`contract_walk.Contract.sufficient`), a test of
    the arguments: True where every such fact holds, so every index is in range and the variant
    without bounds checks may run; else None (nothing to test, or the contract is incomplete)."""
    if not spec.contract:
        return None
    contract = json.loads(spec.contract)
    facts = [fact for fact in contract.get("sufficient") or () if not fact.get("probe")]  # probes: `probes.py`
    if not facts or not contract.get("complete", False):
        return None
    params = tuple(spec.params)
    names = [f"a{k}" for k in range(len(params))]
    lines = []
    for fact in facts:
        test = _fact_test(fact, names)[0]
        lines += [f"    if {test}:", "        return False"]
    source = f"def suffices({', '.join(names)}, *rest):\n" + "\n".join(lines) + "\n    return True\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<sourcead sufficient facts of {spec.name}>", "exec"), namespace)
    return namespace["suffices"]


# --- the shape checks as code -----------------------------------------------------------------


def shape_check_source(contract: dict, names: list[str], python: bool) -> str:
    """`def check_shapes(<names>)`: one `if` per fact, raising `_fail(k, low, high, dim)` (Python)
    or, for numba (`python=False`), only the lines of the body, raising `ShapeError(message)`."""
    lines: list[str] = []
    seen: set[str] = set()
    for k, fact in enumerate(contract.get("facts", ())):
        test, low, high, dim = _fact_test(fact, names)
        if test in seen:
            continue
        seen.add(test)
        lines.append(f"if {test}:")
        if python:
            shape = f", {names[fact['param']]}.shape" if fact.get("param") is not None else ""
            lines.append(f"    raise _fail({k}, {low}, {high}, {dim}{shape})")
        else:
            lines.append(f"    raise ShapeError({_static_message(fact, names)!r})")
    if not lines:
        return ""
    if not python:
        return "\n".join(lines)
    return f"def check_shapes({', '.join(names)}):\n" + "".join(f"    {line}\n" for line in lines)


def _fact_test(fact: dict, names: list[str]) -> tuple[str, str, str, str]:
    """The test that a fact fails (as code), and the index's lowest and highest values and the
    array's size along the axis (as code, for the message)."""
    dim = _text(fact["dim"], names)
    guard = " and ".join(f"{_text(g, names)} > 0" for g in fact["guards"])  # every enclosing loop runs
    if fact.get("data") is not None:  # every value of a slice of an int argument indexes the axis
        read = data_slice(fact, names)
        low, high = f"{read}.min()", f"{read}.max()"
        condition = f"{read}.size == 0 or ({low} >= -({dim}) and {high} < {dim})"
        # its fixed positions in range first (`obs[:, 1]` of a one-column obs is the read's own error)
        fixed = [
            f"-{names[fact['data']]}.shape[{axis}] <= {_text(at, names)} < {names[fact['data']]}.shape[{axis}]"
            for axis, at in enumerate(fact["at"])
            if not any(atom == loop[0] for atom, _coef in at for loop in fact["loops"])
        ]
        test = " and ".join([*([guard] if guard else []), *fixed, f"not ({condition})"])
        return test, low, high, dim
    if fact.get("need") is not None:  # unit steps: the extremes are affine
        tests = []
        if fact.get("upper", True):
            tests.append(f"{_text(fact['need'], names)} <= {dim}")
        if fact.get("lower", True):
            tests.append(f"{_text(fact['floor'], names)} <= {dim}")
        high = _text([*fact["need"], ["1", -1]], names)
        low = _text([[atom, -coef] for atom, coef in fact["floor"]], names)
    else:
        low, high = _index_range(fact, names)
        tests = [f"{high} < {dim}"] if fact.get("upper", True) else []
        if fact.get("lower", True):
            tests.append(f"{low} >= -({dim})")
    condition = " and ".join(tests)
    test = f"{guard} and not ({condition})" if guard else f"not ({condition})"
    return test, low, high, dim


def _index_range(fact: dict, names: list[str]) -> tuple[str, str]:
    """The index's lowest and highest values, as code, for loops of any step."""
    low: list[str] = []
    high: list[str] = []
    index = dict((atom, coef) for atom, coef in fact["index"])
    fixed = [[a, c] for a, c in fact["index"] if not any(a == loop[0] for loop in fact["loops"])]
    for var, start, stop, step, _text_range in fact["loops"]:
        first = _text(start, names)
        if step > 0:  # start + k * step for k up to (stop - start - 1) // step
            span = _text([*stop, *[[a, -c] for a, c in start], ["1", -1]], names)
            last = f"{first} + ({span}) // {step} * {step}"
            lowest, highest = first, last
        else:  # start - k * |step| for k up to (start - stop - 1) // |step|
            span = _text([*start, *[[a, -c] for a, c in stop], ["1", -1]], names)
            last = f"{first} - ({span}) // {-step} * {-step}"
            lowest, highest = last, first
        coef = index[var]
        (high if coef > 0 else low).append(_times(coef, highest))
        (low if coef > 0 else high).append(_times(coef, lowest))
    base = _text(fixed, names) if fixed else "0"
    low_text = " + ".join([base, *low]) if low else base
    high_text = " + ".join([base, *high]) if high else base
    return _simplify(low_text), _simplify(high_text)


def _times(coef: int, text: str) -> str:
    return f"({text})" if coef == 1 else f"{coef} * ({text})"


def _simplify(text: str) -> str:
    return text[4:] if text.startswith("0 + ") else text


def _text(affine: list, names: list[str]) -> str:
    """An affine expression as code over the argument names."""
    merged: dict[str, int] = {}
    for atom, coef in affine:
        merged[atom] = merged.get(atom, 0) + coef
    constant = merged.pop("1", 0)
    terms = []
    for atom, coef in merged.items():
        kind, *rest = atom.split(":", 2)
        if kind == "q":  # a floor quotient: "q:D:E", E an affine expression as JSON
            inner = _text(json.loads(rest[1]), names)
            value = f"({inner if ' ' not in inner else f'({inner})'} // {rest[0]})"
        else:
            value = f"{names[int(rest[0])]}.shape[{rest[1]}]" if kind == "s" else names[int(rest[0])]
        if coef:
            terms.append((coef, value))
    parts = []
    for coef, value in terms:
        sign = "-" if coef < 0 else "+"
        magnitude = abs(coef)
        parts.append((sign, value if magnitude == 1 else f"{magnitude} * {value}"))
    if constant or not parts:
        parts.append(("-" if constant < 0 else "+", str(abs(constant))))
    text = ("-" if parts[0][0] == "-" else "") + parts[0][1]
    for sign, value in parts[1:]:
        text += f" {sign} {value}"
    return text


def _static_message(fact: dict, names: list[str]) -> str:
    """For compiled code (no values in the message): the access, where, and the relation."""
    where = f" (line {fact['where'][0]})" if fact.get("where") else ""
    loops = ", ".join(f"{var} in {text}" for var, *_rest, text in fact["loops"])
    return (
        f"sourcead .njit: the shapes of the arguments do not fit: the code indexes {fact['access']}{where}"
        + (f" for {loops}" if loops else "")
        + f", which needs {relation(fact, names)}"
    )


def data_slice(fact: dict, names: list[str]) -> str:
    """The slice of the int argument whose values a `data` fact indexes with: `obs[0:obs.shape[0], 0]`."""
    loops = {var: (start, stop) for var, start, stop, _step, _text_range in fact["loops"]}
    parts = []
    for at in fact["at"]:
        moving = [atom for atom, coef in at if atom in loops and coef]
        if moving:
            start, stop = loops[moving[0]]
            parts.append(f"{_text(start, names)}:{_text(stop, names)}")
        else:
            parts.append(_text(at, names))
    return f"{names[fact['data']]}[{', '.join(parts)}]"


def relation(fact: dict, names: list[str]) -> str:
    """What a fact asks of the shapes, for people: `y.shape[0] >= x.shape[0] + 1`."""
    dim = _text(fact["dim"], names)
    if fact.get("data") is not None:
        return f"every value of {data_slice(fact, names)} in range(-{dim}, {dim})"
    if fact.get("need") is None:
        return f"{dim} to cover every index"
    needs = [
        f"{dim} >= {_text(fact[side], names)}"
        for side in ("need", "floor")
        if fact.get({"need": "upper", "floor": "lower"}[side], True)
    ]
    guard = " and ".join(f"{_text(g, names)} > 0" for g in fact["guards"])
    return " and ".join(needs) + (f" (when {guard})" if guard else "")


def _failure(fname: str, params: tuple[str, ...], contract: dict) -> Callable[..., ShapeError]:
    """The error for a failed fact, with the values the check computed (the slow path only)."""
    facts = contract.get("facts", ())
    filename = contract.get("file", "")

    def fail(k: int, low: int, high: int, dim: int, shape: tuple | None = None) -> ShapeError:
        fact = facts[k]
        loops = ", ".join(f"{var} in {text}" for var, *_rest, text in fact["loops"])
        above = high >= dim
        reach = high if above else low
        shown = f"{fact['array']}[{reach}]" if fact["axis"] == 0 else f"index {reach} along axis {fact['axis']}"
        read = f"it indexes {fact['access']}" + (f" for {loops}" if loops else "")
        read += f", {'up' if above else 'down'} to {shown}" if loops else ""
        if shape is not None:
            what = f"argument `{fact['array']}` has shape {tuple(shape)}"
        else:
            what = f"`{fact['array']}`, made from the arguments' sizes, has {dim} elements along axis {fact['axis']}"
        where = None
        if fact.get("where") and filename:
            line, column = fact["where"]
            where = Location(filename, line, column, linecache.getline(filename, line))
        return ShapeError(
            f"the arguments' shapes do not fit {fname}: {read}, but {what}; it needs {relation(fact, list(params))}",
            where,
            "Pass arrays whose sizes agree with the loops that index them.",
        )

    return fail


# --- written arguments that overlap themselves ----------------------------------------------------


def overlaps_itself(a: np.ndarray) -> bool:
    """Do two distinct elements of `a` share memory (a zero stride, overlapping strides, a stride
    shorter than an element)?"""
    if a.size <= 1 or a.flags.c_contiguous or a.flags.f_contiguous:
        return False
    axes = sorted((abs(s), n) for s, n in zip(a.strides, a.shape, strict=True) if n > 1)
    extent = a.itemsize
    for stride, n in axes:  # each axis must step past everything the smaller ones span
        if stride < extent:
            return _exact_overlap(a)
        extent = stride * (n - 1) + extent
    return False


def _exact_overlap(a: np.ndarray) -> bool:
    """Enumerate the element offsets (for layouts the sorted-strides test cannot clear)."""
    if 0 in a.strides and a.size > 1:
        return True
    if a.size > 4_000_000:
        return True  # too costly to decide: refused, with the hint to pass a contiguous copy
    offsets = np.zeros(1, dtype=np.int64)
    for stride, n in zip(a.strides, a.shape, strict=True):
        offsets = (offsets[:, None] + stride * np.arange(n, dtype=np.int64)[None, :]).ravel()
    return bool(np.any(np.diff(np.sort(offsets)) < a.itemsize))  # the same or overlapping bytes


# --- tangents and cotangents ----------------------------------------------------------------------


# what an ndarray subclass may define and still be read as its data: construction, attributes,
# pickling and printing; overriding anything else of ndarray's (an operator, indexing, a ufunc
# hook, a method) changes what the function computes, which the generated code would not see
_STORAGE_ONLY = frozenset(
    "__module__ __qualname__ __doc__ __dict__ __weakref__ __slots__ __annotations__ __new__ __init__ "
    "__init_subclass__ __array_finalize__ __reduce__ __reduce_ex__ __setstate__ __repr__ __str__ "
    "__firstlineno__ __static_attributes__ __orig_bases__ __parameters__".split()
)


def plain_array(value: np.ndarray, what: str) -> np.ndarray:
    """An ndarray subclass read as its data (a plain ndarray view) where that is all it is:
    np.memmap, or a subclass that adds attributes and methods of its own and overrides none of
    ndarray's. Others are refused: a masked array's mask, np.matrix's `*` and any overridden
    operation would be dropped by the generated code, which reads the data alone."""
    cls = type(value)
    if cls is np.ndarray:
        return value
    if isinstance(value, np.memmap) or not _overrides(cls):
        return value.view(np.ndarray)
    hint = "Pass np.asarray(...) if the plain data is what the function should read."
    if isinstance(value, np.ma.MaskedArray):
        hint = "The generated code would read the data under the mask: pass x.filled(value) or x.compressed()."
    raise ArgumentTypeError(
        f"{what} is a {cls.__module__}.{cls.__qualname__}, an ndarray subclass whose own meaning "
        "(mask, operators or methods) sourcead's generated code would drop",
        hint=hint,
    )


def _overrides(cls: type) -> bool:
    """Does `cls` (or a class it inherits from, other than ndarray) redefine something of ndarray's?"""
    return any(
        name not in _STORAGE_ONLY and hasattr(np.ndarray, name)
        for base in cls.__mro__
        if base not in (np.ndarray, object)
        for name in vars(base)
    )


_FLOAT64 = np.dtype(np.float64)


def real_array(value: Any, what: str) -> np.ndarray:
    """A tangent or cotangent array as float64; complex and non-numeric values are refused."""
    if type(value) is np.ndarray and value.dtype == _FLOAT64:
        return value
    if isinstance(value, np.ndarray):
        value = plain_array(value, what)
    array = np.asarray(value)
    if array.dtype.kind == "c":
        raise ArgumentTypeError(
            f"{what} is complex ({array.dtype}); sourcead differentiates real functions",
            hint="Pass the real part and the imaginary part as two calls.",
        )
    if array.dtype.kind not in "fiub":
        raise ArgumentTypeError(f"{what} must be a float or a float64 array, got a {array.dtype} array")
    return array.astype(np.float64, copy=False)


def real_float(value: Any, what: str) -> float:
    if isinstance(value, (complex, np.complexfloating)):
        raise ArgumentTypeError(f"{what} is complex; sourcead differentiates real functions")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentTypeError(f"{what} must be a float, got {type(value).__name__}")
    return float(value)


def check_cotangents(plan: CallPlan, seeds: list, converted: list) -> list:
    """Each cotangent against its result (then each written argument): kind, ndim and shape."""
    known = plan.output_shapes(*converted[: len(plan.params)]) if plan.output_shapes is not None else None
    n = len(plan.outputs)
    checked = []
    for k, seed in enumerate(seeds):
        if k < n:
            ndim, shape = plan.outputs[k]["ndim"], known[k] if known is not None else None
        else:
            arg = converted[plan.written[k - n]]
            ndim, shape = arg.ndim, arg.shape
        plain = type(seed) is np.ndarray and seed.dtype == _FLOAT64 and seed.ndim == ndim > 0
        if plain and shape in (None, seed.shape):
            checked.append(seed)  # the common case, at once
        elif ndim == 0 and type(seed) is float:
            checked.append(seed)
        else:
            checked.append(_seed(seed, _seed_name(plan, k), ndim, shape))
    return checked


def _seed_name(plan: CallPlan, k: int) -> str:
    n = len(plan.outputs)
    if k >= n:
        return f"the cotangent of the written argument `{plan.params[plan.written[k - n]]}`"
    return "the cotangent" if n == 1 else f"the cotangent of result {k}"


def _seed(seed: Any, what: str, ndim: int, shape: tuple | None) -> Any:
    if ndim == 0:
        if isinstance(seed, np.ndarray) and seed.ndim == 0:  # NumPy's scalar in a box: its float
            return real_float(real_array(seed, what)[()], what)
        if isinstance(seed, np.ndarray):
            raise ShapeError(
                f"{what} must be a float, like the result it stands for; got an array of shape {seed.shape}"
            )
        return real_float(seed, what)
    if not isinstance(seed, np.ndarray):
        raise ShapeError(
            f"{what} must be a {ndim}-D float64 array, like the result it stands for; got {type(seed).__name__}"
        )
    array = real_array(seed, what)
    if array.ndim != ndim:
        raise ShapeError(f"{what} must be a {ndim}-D array, like the result it stands for; got shape {array.shape}")
    if shape is not None and array.shape != tuple(shape):
        raise ShapeError(f"{what} has shape {array.shape}, but the result it stands for has shape {tuple(shape)}")
    return array


def check_results(plan: CallPlan, value: Any, seeds: list) -> None:
    """After the call: cotangents of results whose shape only the call told."""
    if not plan.checked_after:
        return
    values = value if isinstance(value, tuple) else (value,)
    for k in plan.checked_after:
        if k < len(values) and k < len(seeds):
            got, expected = np.shape(seeds[k]), np.shape(values[k])
            if got != expected:
                which = "the result" if len(plan.outputs) == 1 else f"result {k}"
                raise ShapeError(f"the cotangent of {which} has shape {got}, but {which} has shape {expected}")


# --- raw errors from the generated code -------------------------------------------------------------


RAW_ERRORS = (IndexError, TypeError, AttributeError, ValueError, SystemError)


def explain(
    exc: BaseException, func: Callable, original: tuple, generated_file: str, plan: CallPlan, seeds: list | None = None
) -> SourceADError:
    """A positioned error for a raw exception out of the generated code. The user's own function,
    run in Python on copies of the same arguments, tells whether (and where) the user's code fails,
    and, when it runs, the shapes the cotangents should have had; only a failure left unexplained
    is sourcead's, and the error says so with the generated line."""
    if isinstance(exc, ValueError) and str(exc) == STATE_CHANGED_SHAPE:
        return ShapeError(
            f"{plan.name}'s gradient under memory= keeps snapshots of a checkpointed loop's state arrays in "
            "the shape they have when the loop starts, and one of them changes shape in the loop",
            hint="Give the loop's state arrays their final shape before the loop (broadcast them first, e.g. "
            "`x = x0 + 0.0 * y`), or call without memory=.",
        )
    kind = "index out of range" if isinstance(exc, (IndexError, SystemError)) else type(exc).__name__
    line = _generated_line(exc, generated_file)
    message = str(exc).splitlines()[0] if str(exc) else ""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in original]
    try:
        result = rerun.bounded(func, copies)
    except rerun.OutOfTime:
        return SourceADError(
            f"the generated code of {plan.name} failed ({kind}: {message})"
            + (f" at {line}" if line else "")
            + f"; running {plan.name} itself in Python to see whether it fails too was stopped after "
            f"{rerun.SECONDS:g} s",
            hint=f"Call {plan.name} in Python with these arguments: if it fails, its error says where; if it "
            "runs, this is a sourcead bug: please report it with the function's source and the arguments' shapes.",
        )
    except RAW_ERRORS as own:
        detail = str(own).splitlines()[0] if str(own) else type(own).__name__
        cls = ShapeError if isinstance(own, (IndexError, ValueError)) else ArgumentTypeError
        what = "indexes an array out of range" if isinstance(own, IndexError) else f"raises {type(own).__name__}"
        return cls(
            f"{plan.name} {what} with these arguments: {detail}",
            _user_frame(own),
            "Check the arguments' shapes against the loops and indices of the function.",
        )
    except Exception:  # noqa: BLE001, S110 - the user's function fails in another way: report ours
        result = None
    else:
        mismatch = _seed_mismatch(plan, result, copies, seeds)
        if mismatch is not None:
            return ShapeError(mismatch)
    return SourceADError(
        f"the generated code of {plan.name} failed ({kind}: {message}) although {plan.name} itself runs "
        "with these arguments" + (f"; at {line}" if line else ""),
        hint="This is a sourcead bug; please report it with the function's source and the arguments' shapes.",
    )


def _seed_mismatch(plan: CallPlan, result: Any, after: list, seeds: list | None) -> str | None:
    """Which cotangent does not have the shape of the value it stands for, if one does not."""
    if not seeds:
        return None
    values = list(result) if isinstance(result, tuple) and len(plan.outputs) > 1 else [result]
    values += [after[k] for k in plan.written]
    for k, (seed, value) in enumerate(zip(seeds, values, strict=False)):
        if np.shape(seed) != np.shape(value):
            if k >= len(plan.outputs):
                what = f"the written argument `{plan.params[plan.written[k - len(plan.outputs)]]}`"
            else:
                what = "the result" if len(plan.outputs) == 1 else f"result {k}"
            return f"the cotangent of {what} has shape {np.shape(seed)}, but {what} has shape {np.shape(value)}"
    return None


def _user_frame(exc: BaseException) -> Location | None:
    """The innermost frame of the traceback in the user's files (not NumPy's or sourcead's)."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == __file__ or "/numpy/" in frame.filename or frame.lineno is None:
            continue
        found = frame
    if found is None:
        return None
    column = (found.colno or 0) if hasattr(found, "colno") else 0
    return Location(found.filename, found.lineno, column, linecache.getline(found.filename, found.lineno))  # type: ignore[arg-type]


def _generated_line(exc: BaseException, generated_file: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == generated_file]
    return f"{generated_file}, line {frames[-1].lineno}" if frames else ""
