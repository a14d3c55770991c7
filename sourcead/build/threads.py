"""numba's threading layer: one that is safe when several Python threads run parallel code.

numba's `workqueue` layer aborts the whole process when two Python threads call parallel
compiled code at once; `omp` and `tbb` are safe. Unless the user chose a layer
(`NUMBA_THREADING_LAYER`), sourcead asks numba for its `threadsafe` choice, which picks one of
those two. OpenMP is not fork-safe: a child made by `fork` that runs a parallel loop dies, so use
the `spawn` start method of `multiprocessing` with sourcead's parallel derivatives.
"""

from __future__ import annotations

import os

import numba


def use_threadsafe_layer() -> None:
    # numba.config sets its attributes from the environment at import: its stubs do not declare them
    if "NUMBA_THREADING_LAYER" not in os.environ and numba.config.THREADING_LAYER == "default":  # type: ignore[attr-defined]
        numba.config.THREADING_LAYER = "threadsafe"  # type: ignore[attr-defined]
