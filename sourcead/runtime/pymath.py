"""`math` for generated code run as plain Python (`jit=False`): NumPy's error model, as under numba.

numba compiles generated code with `error_model="numpy"`: 1.0 / 0.0 is inf and math.sqrt(-1.0)
is nan. Plain Python raises instead (ZeroDivisionError, ValueError). So that `jit=False` runs the
very same code with the same numbers, floats are NumPy floats there (division by zero gives inf),
and the generated module's `import math` gets this module: each function computes what math
computes (the C library numba calls too), and where math raises, what NumPy's twin computes (inf
or nan), returning a NumPy float; integer functions (floor, ceil, trunc) and the tests (isnan,
...) are math's own.
"""

from __future__ import annotations

import math as _math

import numpy as np

_TWINS = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "pow": "power",
}
_MATH_OWN = {"floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "isclose", "factorial", "comb", "perm", "gcd"}


def _numpy_twin(name: str):
    """math's own function (the C library's, as numba calls it: NumPy's own `power`, `sin`, ...
    may differ from it in the last bit), and where math raises, NumPy's twin: inf or nan."""
    own, twin = getattr(_math, name), getattr(np, _TWINS.get(name, name))

    def function(*args):
        try:
            result = own(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            return twin(*(np.float64(a) for a in args))
        return np.float64(result) if isinstance(result, float) else result

    function.__name__ = name
    return function


def _guarded(name: str):
    """A math function without a NumPy twin (lgamma, erf, gamma): nan where math raises."""
    own = getattr(_math, name)

    def function(*args):
        try:
            return np.float64(own(*args))
        except ValueError:
            return np.float64(np.nan)
        except OverflowError:
            return np.float64(np.inf)

    function.__name__ = name
    return function


def _build() -> dict:
    found = {}
    for name in dir(_math):
        if name.startswith("_"):
            continue
        value = getattr(_math, name)
        if not callable(value):
            found[name] = value  # pi, e, tau, inf, nan
        elif name in _MATH_OWN:
            found[name] = value
        elif hasattr(np, _TWINS.get(name, name)):
            found[name] = _numpy_twin(name)
        else:
            found[name] = _guarded(name)
    return found


globals().update(_build())
