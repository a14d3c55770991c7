"""Helpers that generated code calls, one module a job: tapes and ranges (`tapes`), the shapes of
whole-array adjoints (`broadcasting`), order statistics over an axis (`extrema`), cumulative sums
and products (`scans`), matrix products (`matmul`), an adjoint's first contribution as a new
array (`fresh`), the Cholesky factor (`linalg`), special functions (`special`), vector norms
(`norms`), flips, rolls and joins along an axis (`arrangements`), allocation and sums lowered to
LLVM IR (`lowered`), flat records (`flat_records`), checkpointing schedules (`checkpoint`) and
dependency sets for the pattern sweep (`deps`).

Generated modules import every helper from here (`from sourcead.runtime import reserve, ...`).
Each module declares the helpers it exports in its `__all__`; `HELPERS`, the names generated code
may import (the namer keeps user variables off them, `emit` writes the import line from them), is
their union, so a new helper is declared once, in its own module.

They are `register_jitable` (or a Python function with a numba `overload`): plain Python when the
generated code runs with `jit=False`, compiled into the caller when it runs under numba.
"""

from __future__ import annotations

from . import (
    arrangements,
    broadcasting,
    checkpoint,
    deps,
    extrema,
    flat_records,
    fresh,
    linalg,
    lowered,
    matmul,
    norms,
    scans,
    special,
    tapes,
)
from .arrangements import *  # noqa: F403
from .broadcasting import *  # noqa: F403
from .checkpoint import *  # noqa: F403
from .deps import *  # noqa: F403
from .extrema import *  # noqa: F403
from .flat_records import *  # noqa: F403
from .fresh import *  # noqa: F403
from .linalg import *  # noqa: F403
from .lowered import *  # noqa: F403
from .lowered import ADJOINT_CHUNKS  # noqa: F401  (the fixed chunks of a parallel adjoint: reverse/parallel.py)
from .matmul import *  # noqa: F403
from .norms import *  # noqa: F403
from .scans import *  # noqa: F403
from .special import *  # noqa: F403
from .tapes import *  # noqa: F403

_MODULES = (
    tapes,
    flat_records,
    lowered,
    broadcasting,
    arrangements,
    extrema,
    scans,
    matmul,
    fresh,
    linalg,
    special,
    norms,
    checkpoint,
    deps,
)

# every helper generated code may import: the union of the modules' declarations
HELPERS: tuple[str, ...] = tuple(name for module in _MODULES for name in module.__all__)
