"""Issue 40, item 2: NPBench's idioms, each written as the kernels write them (`*_numba_n.py`),
and the spellings around it (keyword or positional, in a loop, in `prange`, in a helper). The
comment above each says what went wrong before; `tests/test_idioms_npbench.py` checks each against
finite differences, by the dot-product test and to second order, with and without numba."""

from __future__ import annotations

import numpy as np
import scipy.linalg

# --- a NumPy function sourcead does not declare (refused at the user's call) --------------------
# np.tri is a plain Python function of NumPy's: sourcead inlined its source as if it were the
# user's and reported an error positioned in numpy/lib/_twodim_base_impl.py


def undeclared_numpy(x):
    return np.sum(np.tri(x.shape[0]) * x)  # refused


def undeclared_scipy(A, b):
    return np.sum(scipy.linalg.solve(A, b))  # refused
