"""Which `prange` loops get a parallel adjoint, and what each one shares (used by `reverse/sweeps.py`).

A `prange` loop's iterations are independent, so its adjoint runs them in any order, in
parallel, when this holds (else the adjoint loop is serial, and the generated code says why):

- every variable the body assigns is private to the iteration, or a reduction `s += ...`
  that the body does not otherwise read;
- every shared array the body writes is written at the loop index (first index exactly `i`)
  and not read by the body, so iterations write disjoint elements and read none of them; an
  array the body makes itself (`row = np.empty(d)`, first thing it does with that name) is the
  iteration's own scratch, written and read anywhere;
- nothing the loop writes is still needed by the adjoint of an earlier statement.

Then each adjoint iteration replays its own forward body (recording on its own small tape,
never a shared one), and runs its adjoint: accumulations at the loop index are plain stores,
into shared scalars go to per-chunk partial sums, and into shared arrays at other indices (the adjoint
of a gather is a scatter) go to the rows of the iteration's chunk, summed after the loop in chunk
order (`reverse/sweeps.py`, `runtime.add_chunk_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis.activity import value_sources
from ..analysis.reads import values_read
from ..ir.core import Assign, For, Stmt, walk_statements
from ..ir.exprs import has_slice, subscript_indices, walk
from ..runtime import ADJOINT_CHUNKS  # noqa: F401  (the fixed chunks of a parallel adjoint)


@dataclass(frozen=True, eq=False)
class ParallelLoop:
    loop: For
    private: frozenset[str]  # assigned in the body: one copy per iteration
    reductions: frozenset[str]  # shared scalars the body only accumulates into
    written_arrays: frozenset[str]  # shared arrays written at the loop index
    reads: frozenset[str]  # what its replay and adjoint read from outside the body

    @property
    def writes(self) -> frozenset[str]:
        return self.private | self.reductions | self.written_arrays

    def at_loop_index(self, target: cst.BaseExpression) -> bool:
        """Is `target` an element whose first index is exactly the loop variable?"""
        if not isinstance(target, cst.Subscript):
            return False
        first = subscript_indices(target)[0]
        return isinstance(first, cst.Name) and first.value == self.loop.var


def plan_parallel(loop: For, reads_of, index_anywhere: bool = False) -> tuple[ParallelLoop | None, str]:
    """The plan of a parallel adjoint for `loop`, or None and the reason it must be serial.

    `reads_of(stmt)` gives the primal names the adjoint of an assignment reads. Shared arrays are
    written at the loop variable as their first index (the parallel adjoint's chunks own rows), or
    with `index_anywhere` (iterations that must only write distinct elements) at one position,
    the same in all writes of an array.
    """
    body = list(walk_statements(loop.body))
    assigns = [s for s in body if isinstance(s, Assign)]
    for s in assigns:
        if any(isinstance(n, cst.Subscript) and has_slice(n) for root in (s.target, s.value) for n in walk(root)):
            return None, "its body reads or writes slices of arrays"
    private = {loop.var} | {s.var for s in assigns if not s.writes_element and s.accumulate is None}
    private |= {s.var for s in body if isinstance(s, For)}
    accumulated = {s.var for s in assigns if not s.writes_element and s.accumulate is not None} - private
    read_in_body = set().union(*(values_read(s) for s in body))
    if accumulated & read_in_body:
        name = sorted(accumulated & read_in_body)[0]
        return None, f"`{name}` is accumulated and also read in the loop body"
    scratch = {v for v in private if _made_first(loop.body, v)}
    written_arrays = {s.var for s in assigns if s.writes_element} - scratch
    # each shared array has an axis the loop variable owns: every write indexes it with exactly
    # the loop variable (the first axis, or with `index_anywhere` any one axis, the same for all
    # of the array's writes: `B[j, k]` and `B[k, j]` together would let two iterations write one
    # element)
    owned: dict[str, set[int]] = {}
    for s in assigns:
        if not s.writes_element or s.var in scratch:
            continue
        indices = subscript_indices(s.target)  # type: ignore[arg-type]
        axes = {k for k, e in enumerate(indices) if isinstance(e, cst.Name) and e.value == loop.var}
        owned[s.var] = owned.get(s.var, axes) & axes & (set(range(len(indices))) if index_anywhere else {0})
        if not owned[s.var]:
            return None, f"`{s.var}` is written at an index other than the loop variable `{loop.var}`"
    if written_arrays & read_in_body:
        name = sorted(written_arrays & read_in_body)[0]
        return None, f"the array `{name}` is both written and read in the loop body"
    reads = set().union(*(reads_of(s) for s in assigns)) | set().union(*(_names(s) for s in body))
    plan = ParallelLoop(
        loop,
        frozenset(private),
        frozenset(accumulated),
        frozenset(written_arrays),
        frozenset(reads - private),
    )
    return plan, ""


def _made_first(body: tuple[Stmt, ...], var: str) -> bool:
    """Is the first top-level statement of `body` that mentions `var` an assignment of all of it
    that does not read it (so every iteration makes its own before any use)?"""
    for s in body:
        inside = list(walk_statements((s,)))
        if not any(var in _names(t) or (isinstance(t, Assign) and t.var == var) for t in inside):
            continue
        return isinstance(s, Assign) and not s.writes_element and s.var == var and var not in _names(s)
    return False


def _names(stmt: Stmt) -> set[str]:
    return values_read(stmt) | (value_sources(stmt.value) if isinstance(stmt, Assign) else set())
