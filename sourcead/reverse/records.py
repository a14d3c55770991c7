"""The plan's step `records`: which assignments record the value they overwrite, which prange loops
get a parallel adjoint, and which loop-body prefixes the reverse sweep computes again instead.

It reads each assignment's adjoint lines (`adjoint.py`: the primal names they read), the
candidate prefixes (`recompute.py`), the parallel plans of prange loops (`parallel.py`) and the
to-be-recorded analysis (`tbr.py`), iterated until no parallel loop overwrites a value an earlier
adjoint still needs (such a loop records those elements in its iterations' own slots of the tape,
or turns serial); then the element writes whose old value no later-reversed read can see
(`elements.py`) drop their records. A prefix is taken where it saves records (`choose_prefixes`).
Then the reads the reverse sweep may make just after an assignment, before its restore: an element
write's value read from its element (`held_elements`), an integer increment undone by its inverse
(`undone_increments`), each analysed again with that read and taken where the records allow it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import libcst as cst

from ..analysis.program import Program
from ..analysis.reads import value_reads
from ..ir.core import Assign, For, If, Permute, Stmt, While, assigned_names, walk_statements
from ..ir.counts import Count
from ..ir.emit import Line
from ..ir.exprs import code, is_number, names_in, paren, walk
from .adjoint import StatementAdjoints
from .elements import fixed_names, unneeded_element_records
from .parallel import ParallelLoop, plan_parallel
from .recompute import Prefix, recomputed_prefixes
from .tbr import record_in_iteration, to_be_recorded


@dataclass(frozen=True)
class Records:
    """What the reverse sweep reads (per assignment), and what the forward sweep records for it."""

    reads: dict[Assign, set[str]]
    parallel: dict[For, ParallelLoop]
    serial_reason: dict[For, str]
    slot_arrays: dict[For, set[str]]
    slots: dict[Assign, For]  # the element writes recorded in their iteration's slot
    sites: set[Assign]  # the assignments TBR chose, slots included
    at_entry: dict[Stmt, set[str]]  # the variables needed at each loop's entry
    held: frozenset[Assign] = frozenset()  # `x[e] = v` whose adjoint reads v's value from x[e] (`held.py`)
    undone: frozenset[Assign] = frozenset()  # integer increments undone by their inverse (`recording.Undone`)


def plan_records(
    prog: Program, statements: list[Stmt], adjoints: StatementAdjoints, primal: frozenset[str], returned: set[str]
) -> tuple[dict[For, tuple[Stmt, ...]], Records, set[Assign]]:
    """The prefixes recomputed (per loop, its statements), the records with them, and the
    assignments that record their old value (TBR's choice, less the recomputed statements)."""
    fn = prog.fn
    candidates = recomputed_prefixes(
        fn.body,
        fn.params,
        returned,
        lambda v: scalar_dtype(prog, v),
        lambda v: prog.kinds.is_array(v) and not prog.is_active(v),
        lambda v: prog.kinds.is_array(v) and prog.is_active(v),
    )
    chosen, records = choose_prefixes(prog, statements, adjoints, primal, candidates)
    records = held_elements(prog, statements, adjoints, primal, chosen, records)
    records = undone_increments(prog, statements, adjoints, primal, chosen, records)
    prefixes = {loop: p.statements for loop, p in chosen.items()}
    recomputed = {t for prefix in prefixes.values() for t in walk_statements(prefix)}
    sites = {s for s in records.sites if s not in recomputed}
    return prefixes, records, sites


def records_with(
    prog: Program,
    statements: list[Stmt],
    adjoints: StatementAdjoints,
    primal: frozenset[str],
    prefixes: Mapping[For, Prefix],
    held: frozenset[Assign] = frozenset(),
    undone: frozenset[Assign] = frozenset(),
) -> Records:
    """The records, where the reverse sweep computes `prefixes` again: it reads what their
    assignments read, and their variables' values inside their loops are its own; and where the
    adjoints of `held` read their element (`x[e]`) before its restore."""
    lines = _with_prefix_reads(adjoints.lines, prefixes.values())
    reads = {s: set().union(*(line.reads() for line in ls)) & primal for s, ls in lines.items()}
    shaped = shape_only_arrays(prog, adjoints)  # a read of their shape alone needs no record of them
    values = {s: set().union(*(_value_reads(line) for line in ls)) | (reads[s] - shaped) for s, ls in lines.items()}
    for loop, prefix in prefixes.items():
        own = assigned_names(prefix.statements)
        for t in walk_statements(loop.body):
            if isinstance(t, Assign) and t in reads:
                reads[t] = reads[t] - own
                values[t] = values[t] - own
    values = {s: names & reads[s] for s, names in values.items()}
    after = {s: s.target for s in held | undone}  # read in the state just after them
    after_names = {s: names_in(s.target) & primal for s in held | undone}
    parallel, serial_reason, slot_arrays, sites, at_entry = parallel_loops(
        prog, statements, values, primal, after_names
    )
    sites -= unneeded_element_records(prog.fn.body, sites, lines, prog.fn.params, set(), prog.kinds.ndim, after)
    # a name with one value wherever it is read (`stop = A.shape[0]` before each inner loop) is
    # assigned that value again: nothing to restore
    fixed = fixed_names(prog.fn.body, prog.fn.params)
    sites = {s for s in sites if s.writes_element or s.var not in fixed}
    slots = {
        t: loop
        for loop, names in slot_arrays.items()
        for t in walk_statements(loop.body)
        if isinstance(t, Assign) and t.writes_element and t.var in names
    }
    return Records(reads, parallel, serial_reason, slot_arrays, slots, sites | set(slots), at_entry, held, undone)


def resets_adjoint(prog: Program, s: Assign, lines) -> bool:
    """Do `s`'s adjoint lines start its whole array's adjoint again at zero (`x_bar = zeros_like(x_bar)`)?"""
    if not lines or s.writes_element or not prog.kinds.is_array(s.var):
        return False  # (no lines: no adjoint name to ask for, which would take the name)
    bar = prog.bar(s.var)
    return any(
        line.op == "=" and code(line.target) == bar and code(line.value) == f"zeros_like({bar})" for line in lines
    )


def shape_only_arrays(prog: Program, adjoints: StatementAdjoints) -> frozenset[str]:
    """The arrays whose reads of their shape alone (`analysis/reads.value_reads`: `zeros_like(g)`,
    `unbroadcast(t, g)`) need no record of their values: active float64 arrays, no argument nor a
    name with one value wherever it is read (`fixed_names`), never swapped, each of whose whole
    bindings outside prange loops starts its adjoint again at zero, so that where nothing records
    its old value the plan records its old shape (`plan._reshaped`) and the reverse sweep restores
    an empty array of that shape (or the binding keeps the shape: `u = u * 0.95`)."""
    fn = prog.fn
    statements = list(walk_statements(fn.body))
    swapped = {n for s in statements if isinstance(s, Permute) for n in (*s.targets, *s.sources)}
    in_prange = {t for s in statements if isinstance(s, For) and s.parallel for t in walk_statements(s.body)}
    bindings: dict[str, list[Assign]] = {}
    for s in statements:
        if isinstance(s, Assign) and not s.writes_element:
            bindings.setdefault(s.var, []).append(s)
    fixed = fixed_names(fn.body, fn.params)
    return frozenset(
        v
        for v, bound in bindings.items()
        if v not in fn.params
        and v not in fixed
        and v not in swapped
        and prog.is_active(v)
        and prog.kinds.is_array(v)
        and prog.kinds.of[v].dtype == "float"
        and not prog.kinds.of[v].single
        and all(s not in in_prange and resets_adjoint(prog, s, adjoints.lines.get(s)) for s in bound)
    )


def _value_reads(line: Line) -> set[str]:
    """The names whose values a line reads (`Line.reads`, less those read only for a shape)."""
    return line.reads(value_reads)


def choose_prefixes(
    prog: Program,
    statements: list[Stmt],
    adjoints: StatementAdjoints,
    primal: frozenset[str],
    candidates: Mapping[For, Prefix],
) -> tuple[dict[For, Prefix], Records]:
    """The prefixes recomputed, and the records with them. A prefix is recomputed where it saves a
    record (and then whole: its statements build on each other). Where it reads names the
    function changes outside its loop (the reverse sweep reads them again, in the state of the
    loop: their overwrites after the loop are now recorded), or its variables are mentioned
    outside the loop (the reversed loop leaves them as its first iteration computed them), the
    records are analysed again with it: it is taken where none of its variables is needed at
    the loop's entry, every parallel adjoint stays as it was, and every record it adds sits in fewer
    loops than each it saves (`_fewer_records`; n-body: three records per body per step, not five
    per pair); else its part that reads only names that never change, if any (`Prefix.fallback`)."""
    records = records_with(prog, statements, adjoints, primal, {})
    loops = _enclosing_loops(prog.fn.body)
    chosen: dict[For, Prefix] = {}
    for loop, candidate in candidates.items():
        prefix: Prefix | None = candidate
        while prefix is not None:
            saved = records.sites & set(walk_statements(prefix.statements))
            if not saved:
                break
            if not (prefix.changed or prefix.outside):
                chosen[loop] = prefix  # it drops only its own records
                break
            trial_prefixes = {**chosen, loop: prefix}
            trial = records_with(prog, statements, adjoints, primal, trial_prefixes)
            recomputed = {t for p in trial_prefixes.values() for t in walk_statements(p.statements)}
            added = trial.sites - records.sites - recomputed
            if (
                not any(p.outside & trial.at_entry.get(q, set()) for q, p in trial_prefixes.items())
                and (trial.parallel.keys(), trial.slot_arrays) == (records.parallel.keys(), records.slot_arrays)
                and _fewer_records(added, saved, loops)
            ):
                chosen[loop], records = prefix, trial
                break
            prefix = prefix.fallback  # its part that reads only names that never change
    return chosen, records


_HELD_TRIALS = 8  # the candidates tried one at a time where taking all of them adds a record


def held_elements(
    prog: Program,
    statements: list[Stmt],
    adjoints: StatementAdjoints,
    primal: frozenset[str],
    prefixes: Mapping[For, Prefix],
    records: Records,
) -> Records:
    """The records where the element writes `x[e] = v` whose adjoint needs v's value (a quotient's,
    an exp's: `StatementAdjoints.root_value`) read it from `x[e]`, in the state just after the
    write (before its restore), rather than compute it again (trisolv's dot product): each taken
    where that read adds no record (`x[e]` holds that value there anyway: the later writes of the
    element are restored first, or write it again after a read that needs no restore) and changes
    no parallel adjoint nor prefix. The to-be-recorded analysis and `elements.py` see the read
    (`records_with`), so what they keep is what makes it right. Not in a prange loop, whose
    iterations replay their bodies."""
    loops = [loop for loop in statements if isinstance(loop, For) and loop.parallel]
    in_prange = {t for loop in loops for t in walk_statements(loop.body)}
    candidates = [
        s
        for s in statements
        if isinstance(s, Assign) and s.writes_element and s in adjoints.root_value and s not in in_prange
    ]
    held: frozenset[Assign] = frozenset()
    # all at once, then (where that adds a record) one at a time, a few: each trial is an analysis
    singles = [[s] for s in candidates[:_HELD_TRIALS]] if len(candidates) > 1 else []
    for trial_set in [candidates, *singles]:
        if set(trial_set) <= held:
            continue
        trial_held = held | frozenset(trial_set)
        trial = records_with(prog, statements, adjoints, primal, prefixes, trial_held, records.undone)
        if (
            trial.sites == records.sites
            and (trial.parallel.keys(), trial.slot_arrays) == (records.parallel.keys(), records.slot_arrays)
            and not any(p.outside & trial.at_entry.get(q, set()) for q, p in prefixes.items())
        ):
            held, records = trial_held, trial
            if len(held) == len(candidates):
                break
    return records


def undone_increments(
    prog: Program,
    statements: list[Stmt],
    adjoints: StatementAdjoints,
    primal: frozenset[str],
    prefixes: Mapping[For, Prefix],
    records: Records,
) -> Records:
    """The records where the recorded integer increments by a value that never changes (`idx += 1`,
    `recording.Undone`) are undone by their inverse instead: the inverse reads the variable just
    after the increment, so the analyses see that read (`records_with`: the reset `idx = 0` before
    them then records the value it overwrites). Taken where every record that adds sits in fewer
    loops than each increment it saves (`_fewer_records`: a counter reset per pair and counted up
    per element, one record per pair, not one per element), no parallel adjoint changes and no
    prefix's variable is needed at its loop's entry. Not in a prange loop."""
    loops = [loop for loop in statements if isinstance(loop, For) and loop.parallel]
    in_prange = {t for loop in loops for t in walk_statements(loop.body)}
    fixed = fixed_names(prog.fn.body, prog.fn.params)
    candidates = frozenset(
        s
        for s in records.sites
        if isinstance(s, Assign) and s not in in_prange and undone_by_inverse(prog, s, fixed) is not None
    )
    if not candidates:
        return records
    trial = records_with(prog, statements, adjoints, primal, prefixes, records.held, candidates)
    added = trial.sites - records.sites
    if (
        (trial.parallel.keys(), trial.slot_arrays) == (records.parallel.keys(), records.slot_arrays)
        and not any(p.outside & trial.at_entry.get(q, set()) for q, p in prefixes.items())
        and candidates <= trial.sites
        and _fewer_records(added, set(candidates), _enclosing_loops(prog.fn.body))
    ):
        return trial
    return records


def undone_by_inverse(prog: Program, s: Assign, fixed: AbstractSet[str]) -> str | None:
    """The statement that undoes an integer increment `x += v` (`-=`, of a name or an element of an
    integer array) by a `v` of integer literals, arithmetic and names with one value wherever they
    are read (`elements.fixed_names`): `x -= v`, exact in integers; else None."""
    target = prog.kinds.type_of(s.target)
    if s.accumulate is None or target.dtype != "int" or target.is_array:
        return None
    if prog.kinds.type_of(s.value).dtype != "int" or not names_in(s.value) <= fixed:
        return None
    if any(isinstance(n, (cst.Call, cst.Subscript, cst.Attribute)) for n in walk(s.value)):
        return None  # only names, literals and arithmetic
    return f"{code(s.target)} {'-' if s.accumulate == '+' else '+'}= {code(paren(s.value))}"


def _with_prefix_reads(lines: Mapping[Assign, list[Line]], prefixes: Iterable[Prefix]) -> dict[Assign, list[Line]]:
    """The adjoint lines, with each recomputed assignment as a line of its own: the reverse sweep
    runs it again."""
    extended = dict(lines)
    for prefix in prefixes:
        for a in prefix.assignments():
            extended[a] = [*lines.get(a, []), Line(a.target, "=", a.value)]
    return extended


def _enclosing_loops(
    body: tuple[Stmt, ...], around: tuple[Stmt, ...] = (), out: dict[Stmt, tuple[Stmt, ...]] | None = None
) -> dict[Stmt, tuple[Stmt, ...]]:
    """The loops that hold each statement, outermost first."""
    out = {} if out is None else out
    for s in body:
        out[s] = around
        if isinstance(s, (For, While)):
            _enclosing_loops(s.body, (*around, s), out)
        elif isinstance(s, If):
            _enclosing_loops(s.body, around, out)
            _enclosing_loops(s.orelse, around, out)
    return out


def _fewer_records(added: set[Assign], saved: set[Assign], loops: Mapping[Stmt, tuple[Stmt, ...]]) -> bool:
    """Does every record in `added` sit in fewer loops than each in `saved` (so runs less often,
    whatever the trip counts)? As many records in the same loops is no gain: gray_scott's re-read
    `uc = u[i, j]` would record the step's writes into `un` instead, an element's load and store in
    each sweep for a scalar's (measured 22% slower)."""
    return all(len(loops[a]) < min(len(loops[t]) for t in saved) for a in added)


def parallel_loops(
    prog: Program,
    statements: list[Stmt],
    reads: dict[Assign, set[str]],
    primal: frozenset[str],
    after: Mapping[Assign, set[str]] | None = None,
) -> tuple[dict[For, ParallelLoop], dict[For, str], dict[For, set[str]], set[Assign], dict[Stmt, set[str]]]:
    """Which prange loops get a parallel adjoint, which a serial one (and why), the arrays each
    records in its iterations' slots, the to-be-recorded assignments, and the variables needed at
    each loop's entry."""
    parallel: dict[For, ParallelLoop] = {}
    serial_reason: dict[For, str] = {}
    nested = {t for s in statements if isinstance(s, For) and s.parallel for t in walk_statements(s.body)}
    for loop in statements:
        if isinstance(loop, For) and loop.parallel and loop not in nested:
            loop_plan, why = plan_parallel(loop, lambda a: reads.get(a, set()))
            if loop_plan is None:
                serial_reason[loop] = why
            else:
                parallel[loop] = loop_plan
    slot_arrays: dict[For, set[str]] = {}
    while True:
        opaque = {
            loop: (loop_plan.reads, loop_plan.writes - slot_arrays.get(loop, set()))
            for loop, loop_plan in parallel.items()
        }
        at_entry: dict[Stmt, set[str]] = {}
        sites, conflicts = to_be_recorded(prog.fn.body, reads, primal, opaque, at_entry, after)
        if not conflicts:
            break
        for loop, names in conflicts.items():
            if names <= parallel[loop].written_arrays and slot_count(prog, loop, names) is not None:
                slot_arrays.setdefault(loop, set()).update(names)
                continue
            del parallel[loop]
            slot_arrays.pop(loop, None)
            serial_reason[loop] = "a value it overwrites is still needed by the adjoint of an earlier statement"
    for loop in parallel:
        sites |= record_in_iteration(loop.body, reads, primal, at_entry)
    return parallel, serial_reason, slot_arrays, set(sites), at_entry


def slot_count(prog: Program, loop: For, names: AbstractSet[str]) -> Count | None:
    """Records per iteration of writes into `names`, the same for every iteration (so each
    iteration owns a slot of the tape at a computable offset), or None."""
    if not is_number(loop.step):
        return None
    inside = assigned_names(loop.body) | {loop.var}

    def count(body: tuple[Stmt, ...]) -> Count | None:
        total = Count()
        for t in body:
            writes = {a.var for a in walk_statements((t,)) if isinstance(a, Assign) and a.writes_element} & names
            if isinstance(t, Assign) and t.writes_element and t.var in names and records_array(prog, t):
                return None  # a row or slice: its record's size is known only when it runs
            if isinstance(t, Assign):
                total = total + Count.of(1 if t.writes_element and t.var in names else 0)
            elif isinstance(t, (If, While)) and writes:
                return None  # how many depends on the data
            elif isinstance(t, For) and writes:
                inner = count(t.body)
                if inner is None or any(names_in(b) & inside for b in (t.start, t.stop, t.step)):
                    return None
                total = total + Count.trips(t) * inner
        return total

    return count(loop.body)


def records_array(prog: Program, s: Assign) -> bool:
    """Does recording `s` save an array (a whole array rebound, a slice or a row overwritten)?"""
    return prog.kinds.type_of(s.target).is_array


def scalar_dtype(prog: Program, var: str) -> str | None:
    """ "int", "float" or "bool" for a scalar variable, None for an array or a tuple."""
    kind = prog.kinds.of.get(var)
    if kind is None or kind.is_array or getattr(kind, "is_tuple", False):
        return None
    return kind.dtype
