"""Colourings of sparsity patterns and the decompression of compressed Jacobians and Hessians.

A sparse (m, n) Jacobian J with pattern P costs k passes instead of n (or m) when columns (rows)
that share no row (column) are seeded together: `column_colouring` for forward mode (J @ S),
`row_colouring` for reverse mode (S.T @ J), `star_colouring` for symmetric Hessians (H @ S, one
Hessian-vector product per colour), `bicolouring` for both sides at once (patterns like an
arrowhead, whose dense row and dense column defeat either side alone). `seed_matrix` builds S
from colours; the `decompress_*` functions read the sparse matrix back, straight into CSR.

Floor 1: imports nothing of sourcead but `errors`; numpy, scipy.sparse and numba only.
"""

from .colour import bicolouring, column_colouring, row_colouring, star_colouring
from .decompress import (
    decompress_bicolouring,
    decompress_columns,
    decompress_rows,
    decompress_star,
    seed_matrix,
)

__all__ = [
    "bicolouring",
    "column_colouring",
    "decompress_bicolouring",
    "decompress_columns",
    "decompress_rows",
    "decompress_star",
    "row_colouring",
    "seed_matrix",
    "star_colouring",
]
