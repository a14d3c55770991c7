"""The vector-mode twin of a prepared jvp, made once per (function, wrt, jit) and kept for the
process: one forward sweep carrying k tangents (`forward/vector.py`), or None where vector mode
does not apply (`prange` code, a construct the lane rewrite does not cover), remembered too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import SourceADError
from .prepared import _Prepared
from .protocol import Wrt, _Variant


class _VectorJVP(_Prepared):
    """Vector forward mode (`forward/vector.py`): `f_jvp(*args, *tangents with a leading axis of k)`."""

    __slots__ = ()
    TRANSFORM = "vector"

    def __init__(self, func: Callable, wrt: Wrt, jit: bool):
        super().__init__(func, wrt, "vector", jit)


_VECTOR_LOCK = threading.Lock()
_VECTOR: dict[tuple, _VectorJVP | None] = {}  # (function, wrt, jit) -> vector mode, or None where it does not apply


def _vector_jvp(jf: _Prepared, args: tuple) -> tuple[_VectorJVP, _Variant] | None:
    """The vector-mode twin of a prepared jvp and its variant for `args`, or None (prange code, or
    a construct the lane rewrite does not cover: then the caller loops over the directions)."""
    key = (jf._func, jf._wrt[0] if jf._single else jf._wrt, jf._jit)
    if key in _VECTOR and _VECTOR[key] is None:
        return None
    try:
        vector = _VECTOR.get(key)
        if vector is None:
            with _VECTOR_LOCK:
                vector = _VECTOR.get(key) or _VectorJVP(*key)
                _VECTOR[key] = vector
        return vector, vector._variant(args)
    except SourceADError:
        with _VECTOR_LOCK:
            _VECTOR[key] = None
        return None
