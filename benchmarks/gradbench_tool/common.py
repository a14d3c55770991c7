"""What every eval module of the tool provides: its functions, each a decode, a timed run and an
encode, so that decoding GradBench's JSON into NumPy arrays and encoding the result back stay
outside the timed runs.

An eval module defines ``define(jit) -> dict[str, Function]`` (compiles nothing itself: sourcead
and numba compile at the first call per argument types) and ``TINY``, a small input in
GradBench's format with the same kinds of values (dtypes, ranks) as the real ones, which
``protocol`` runs every function on once inside ``define`` so that compilation happens there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np


@dataclass(frozen=True)
class Function:
    decode: Callable[[Any], tuple]  # GradBench input -> the arguments of run (once per evaluate)
    run: Callable[..., Any]  # the timed call
    encode: Callable[[Any], Any]  # run's result -> GradBench output


def primal(func: Callable, jit: bool) -> Callable:
    """The primal as numba compiles it (``jit=False``: the plain Python function, for tests); a
    function with a ``prange`` loop is compiled parallel, as sourcead compiles its derivative."""
    if not jit:
        return func
    return numba.njit(parallel="prange" in func.__code__.co_names)(func)


def vector(values: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64))


def number(value: Any) -> float:
    return float(value)


def as_list(value: Any) -> Any:
    return np.asarray(value, dtype=np.float64).tolist()
