"""The post-passes on the parsed text of reverse mode's sweeps (`reverse/sweeps.py`), as the pipeline
runs them: dead code removed (`deadcode.py`), then two rank-1 updates of one matrix fused
(`outers.py`), first contributions assigned (`first_contributions.py`), strong-zero guards in
loops written as selects (`strong_zero.py`), a loop's records of one contiguous block copied as a
block (`block_records.py`) and indices made unsigned (`unsigned.py`) in the reverse sweep.
"""

from __future__ import annotations

from dataclasses import replace

from ..reverse.sweeps import REVERSE_SWEEP, Sweeps
from .block_records import block_records
from .deadcode import eliminate_dead_code
from .first_contributions import assign_first_contributions
from .marked import rewrite_after
from .outers import fuse_outers
from .strong_zero import eager_selects
from .unsigned import unsigned_statements


def remove_dead_code(sweeps: Sweeps) -> Sweeps:
    """The sweeps without the statements nothing returned depends on (their section comments kept)."""
    return replace(sweeps, tree=eliminate_dead_code(sweeps.tree, sweeps.sections))


def fused_outers(sweeps: Sweeps) -> Sweeps:
    """The reverse sweep with each pair of rank-1 updates of one matrix made one pass (the module's
    imports find `add_outers` in the text)."""

    def fuse(statements: list) -> list:
        return fuse_outers(statements, sweeps.adjoints)

    return replace(sweeps, tree=rewrite_after(sweeps.tree, REVERSE_SWEEP, fuse))


def first_contributions(sweeps: Sweeps) -> Sweeps:
    """The reverse sweep with each first contribution into a zero adjoint assigned, not added."""

    def assign(statements: list) -> list:
        return assign_first_contributions(statements, sweeps.adjoints)

    return replace(sweeps, tree=rewrite_after(sweeps.tree, REVERSE_SWEEP, assign))


def select_strong_zeros(sweeps: Sweeps) -> Sweeps:
    """The reverse sweep with its loops' strong-zero guards written as `strong_zero` selects, and
    its arrays' as the fused `strong_zero_each`."""
    tree, helpers = eager_selects(sweeps.tree, REVERSE_SWEEP)
    if not helpers:
        return sweeps
    return replace(sweeps, tree=tree, helpers=tuple(sorted({*sweeps.helpers, *helpers})))


def records_in_blocks(sweeps: Sweeps) -> Sweeps:
    """The sweeps with a loop's per-element records and restores of one contiguous block written
    as block copies (`block_records.py`)."""
    tree, changed = block_records(sweeps.tree, sweeps.adjoints)
    return replace(sweeps, tree=tree) if changed else sweeps


def unsigned_indices(sweeps: Sweeps) -> Sweeps:
    """The reverse sweep with the indices that are never negative made unsigned."""
    return replace(sweeps, tree=rewrite_after(sweeps.tree, REVERSE_SWEEP, unsigned_statements))
