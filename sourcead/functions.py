"""What a user hands us as a function, unwrapped (no libcst here: the warm start avoids it)."""

from __future__ import annotations

from collections.abc import Callable


def unwrap(func: Callable) -> Callable:
    """The plain Python function behind a numba dispatcher or a sourcead decorator."""
    while True:
        inner = getattr(func, "py_func", None) or getattr(func, "__sourcead_func__", None)
        if inner is None:
            return func
        func = inner
