"""Generated code run as plain Python (`jit=False`): the same text executed again with `math`
bound to `runtime/pymath.py` and `float` making NumPy floats, NumPy's error model as under numba.
"""

from __future__ import annotations

import types
from collections.abc import Callable

import numpy as np

from .modules import _LOCK


def _plain_python(module: types.ModuleType, entry: str) -> Callable:
    """The generated function as plain Python with NumPy's error model, as numba runs it: the same
    text, run again with `math` bound to `sourcead.pymath` and `float` making NumPy floats (the
    callers pass NumPy floats), so 1.0 / 0.0 is inf and math.sqrt(-1.0) nan, not an exception."""
    with _LOCK:
        namespace = getattr(module, "_sourcead_plain", None)
        if namespace is None:
            namespace = {"__name__": module.__name__, "__file__": module.__file__, "__builtins__": _PLAIN_BUILTINS}
            exec(compile(module.__sourcead_text__, module.__file__, "exec"), namespace)  # type: ignore[arg-type]
            module._sourcead_plain = namespace  # type: ignore[attr-defined]
    return namespace[entry]


def _plain_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
    if name == "math" and not fromlist:
        from ..runtime import pymath

        return pymath
    return __import__(name, globals, locals, fromlist, level)


_PLAIN_BUILTINS = {**vars(__import__("builtins")), "__import__": _plain_import, "float": np.float64}
