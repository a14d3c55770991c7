"""Batches of directions at call time: k tangents (or cotangents) with one extra leading axis,
checked and run in one vector-mode sweep (`vector_cache.py`) where it applies, else in a loop
over the directions (`batch.py`: compiled when jit=True).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from ..build import callplan, rerun
from ..build.compile import Spec
from ..errors import SourceADError, numba_failure
from .batch import compiled_loop, python_loop
from .callargs import _plain, _with_defaults
from .prepared import _Prepared
from .protocol import _Variant
from .vector_cache import _vector_jvp


def _no_written_outputs(spec: Spec) -> None:
    """A batch of tangents returns the result's tangents with a leading axis, not those of the
    arrays the function writes: for such a function, one direction per call."""
    if spec.mutated:
        raise SourceADError(
            f"a batch of tangents: {spec.name} writes into {', '.join(spec.mutated)}, whose tangents a batch "
            "does not return",
            hint="Call jvp once per direction (it returns the written arrays' tangents too), or jacobian(f).",
        )


def _no_tuple_results(spec: Spec, what: str) -> None:
    if spec.output_is_tuple:
        raise SourceADError(
            f"{what} needs a float or an array result; {spec.name} returns a tuple",
            hint="Return one array (np.concatenate the parts in your own code), or call jvp/vjp.",
        )


def _directions(directions: Any, converted: list, variant: _Variant, single: bool) -> tuple[list, bool]:
    """Tangents, one per wrt argument, each shaped like its argument or with one extra leading axis
    of the same length k for all (a batch); float64 copies, never the caller's buffers."""
    spec = variant.spec
    items = (directions,) if single else directions
    if not isinstance(items, tuple) or len(items) != len(spec.wrt):
        raise SourceADError(f"tangents= must be a tuple of {len(spec.wrt)} values, one per wrt argument")
    dots: list = []
    batch: set[int | None] = set()
    for item, k, name in zip(items, variant.wrt_pos, spec.wrt, strict=True):
        shape = np.shape(converted[k])
        t = np.array(callplan.real_array(item, f"the tangent of `{name}`"), copy=True)  # ours; never the caller's
        if t.shape == shape:
            batch.add(None)
            dots.append(t if shape else float(t))
        elif t.ndim == len(shape) + 1 and t.shape[1:] == shape and t.shape[0] > 0:
            batch.add(t.shape[0])
            dots.append(t)
        else:
            raise SourceADError(
                f"the tangent of `{name}` has shape {t.shape}; `{name}` has shape {shape}",
                hint=f"Pass one tangent of shape {shape}, or k of them as an array of shape (k, *{shape}).",
            )
    if len(batch) > 1:
        raise SourceADError("tangents= mixes single tangents and batches (or batches of different lengths)")
    return dots, batch != {None}


def _run_batch(prepared: _Prepared, variant: _Variant, kind: str, args: list, dirs: list, extra: list) -> Any:
    """Call the derivative once per direction, in compiled code when jit=True (`batch.py`)."""
    dirs = [np.ascontiguousarray(d, dtype=np.float64) for d in dirs]
    try:
        if not prepared._jit:
            with np.errstate(all="ignore"):
                plain = [np.float64(a) if type(a) is float else a for a in args]
                return python_loop(variant, kind, plain, dirs, extra)
        return compiled_loop(variant, kind)(*args, *dirs, *extra)
    except callplan.RAW_ERRORS as exc:  # as `_Prepared._run`: positioned, the user's function run to tell whose
        rerun.reraise_interrupt(exc)
        raise callplan.explain(exc, prepared._func, tuple(args), str(variant.compiled.path), variant.plan) from None
    except (NumbaError, AssertionError) as exc:
        raise numba_failure(exc, f"the batch loop over {variant.compiled.path}") from None


def _tangent_batch(tangents: Any, converted: list, variant: _Variant, single: bool) -> bool:
    """Cheap test: is the first tangent an array with one more axis than its argument?"""
    first = tangents if single else (tangents[0] if isinstance(tangents, tuple) and tangents else None)
    return isinstance(first, np.ndarray) and first.ndim == np.ndim(converted[variant.wrt_pos[0]]) + 1


def _jvp_batch(jf: _Prepared, variant: _Variant, converted: list, tangents: Any, args: tuple) -> tuple:
    """k tangents: in one sweep carrying them all (vector mode) where the code allows, else one
    sweep per direction in a compiled loop."""
    dots, _ = _directions(tangents, converted, variant, jf._single)
    _no_tuple_results(variant.spec, "a batch of tangents")
    vector = _vector_jvp(jf, _with_defaults(jf._func, args))
    if vector is not None:
        prepared, lanes = vector  # its lanes are the last axis: contiguous for each element
        last = [np.ascontiguousarray(np.moveaxis(d, 0, -1)) for d in dots]
        value, lane_dots = prepared._run(lanes, converted + last)
        lane_dots = lane_dots[0] if variant.spec.mutated else lane_dots
        return _plain(value), np.ascontiguousarray(np.moveaxis(lane_dots, -1, 0))
    value, columns = _run_batch(jf, variant, "jvp", converted, dots, [])
    return _plain(value), columns


def _cotangent_batch(cotangent: Any, spec: Spec) -> bool:
    """A batch of cotangents for a float result (a 1-D array of k seeds). For array results, whose
    shape the call does not know in advance, batches go through `jacobian(mode="reverse")`."""
    if spec.output_is_tuple or spec.returns_array or spec.mutated:
        return False
    return isinstance(cotangent, np.ndarray) and cotangent.ndim == 1


def _vjp_batch(vf: _Prepared, variant: _Variant, converted: list, cotangent: np.ndarray) -> tuple:
    if cotangent.shape[0] == 0:
        raise SourceADError("cotangent= is an empty batch: give at least one cotangent")
    seeds = [np.array(callplan.real_array(cotangent, "cotangent="))]  # a copy: never the caller's buffer
    value, *flat = _run_batch(vf, variant, "vjp", converted, seeds, [])
    return _plain(value), (flat[0] if vf._single else tuple(flat))
