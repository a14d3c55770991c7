"""The shape contract: the argument shapes that keep every index of the generated code in range.

The generated code indexes the user's arrays where the user's code does, and their derivatives
(`x_bar`, `x_dot`: the shape of `x`) at the same indices, so one fact per element access of the
core form covers both. A fact is derived where the access is reached whenever its loops run:

    for i in range(x.shape[0]):        reads y[i + 1] for i in 0 .. x.shape[0] - 1, so
        s += x[i] * y[i + 1]           y.shape[0] >= x.shape[0] + 1 whenever x.shape[0] > 0

Index expressions are affine in loop variables, int arguments and argument sizes (`x.shape[k]`,
`len(x)`, their floor quotients by a constant, and locals assigned once from them, at the top level
or in a loop from its variables); the indexed array is an argument or a local made once with such a
shape (`np.zeros(n)`, `np.zeros_like(x)`), or bound once to a row of one (`cam = cams[obs[i, 0]]`:
the trailing axes of cams, whichever row; its index has a fact of its own). A fact that holds for
every call (`x[i]` for i in range(x.shape[0])) is dropped; the others are checked before each call (`callplan.py`).

A fact checked at the call must be exact: the call fails only where the user's code would index out
of range. Some accesses cannot give one: one under an `if` or a `while`, or in a loop with a
`break`, may never run; one in a triangular loop (`range(k + 1, n)`) or at an int local assigned
several values (`p = k`, later `p = i`: its *range*, the hull of every value assigned, 0 included
for a read before any; a ring index, `ip = i + 1; if ip == n: ip = 0` (`rings.py`), takes the
range of its loop's variable, which it stays in wherever it is read, and so does `e % n` in a loop
over range(n), as an index or a value assigned) reaches only some of its bound's values. Such an access is covered where
its fact always holds, or where a checked fact implies it (the same size, a bound at least as
large, guards among its own: whenever it runs, that fact was checked); else its fact (an index
`e % c`, c a constant, lies in 0 .. c - 1 whatever e is) is *sufficient*: a call that meets it runs
without bounds checks, one that does not runs the bounds-checked variant, which fails only where
the user's code indexes out of range. An array that swaps with
arrays of other shapes may hold any of them: a read needs a fact for each (`swapped_access`). An access nothing covers
(`x[idx[k] - 1]`, `w[i * i]`) gets a *probe* where its index can be computed before the call
(`contract_probe.py`: a sufficient fact the call tests by a pass over the index's values); where
not (`r[i]` of an array whose length only the call tells, an index from floats), it makes the
contract *incomplete*, and that variant is compiled with numba's bounds checks
(`compile.jit_module`), so no input reads or writes out of range.

The contract is JSON (stored in the key file with the module's spec) so a warm process has it
without running the pipeline. Affine expressions are lists of `[atom, coefficient]`, an atom being
"1", "n:K" (the int argument at position K), "s:K:A" (axis A of the argument at position K) or
"q:D:E" (the floor quotient of E, an affine expression as JSON, by the constant D > 0).
"""

from __future__ import annotations

import json
from collections import Counter

import libcst as cst

from ..frontend.parse import ParsedFunction
from ..ir.core import Assign, CoreFunction, For, Permute, walk_statements
from ..ir.exprs import unparen
from .affine import Affine
from .contract_terms import Scope, dump
from .contract_walk import Contract, Walker
from .kinds import Kinds


def derive(fn: CoreFunction, kinds: Kinds, parsed: ParsedFunction, mode: str) -> str:
    """The contract of one generated variant, as JSON text (see the module docstring). In reverse
    mode an array result's cotangent is indexed like the result, so its shape belongs to it."""
    assigned = _assignment_counts(fn, kinds)
    params = {p: k for k, p in enumerate(fn.params)}
    ints: dict[str, Affine] = {
        p: {f"n:{k}": 1} for p, k in params.items() if kinds[p].is_scalar and kinds[p].dtype == "int"
    }
    shapes: dict[str, tuple[Affine, ...]] = {
        p: tuple({f"s:{k}:{a}": 1} for a in range(kinds[p].ndim)) for p, k in params.items() if kinds[p].is_array
    }
    for p in params:
        if assigned[p]:  # rebound in the body: its value (or shape) is not the argument's
            ints.pop(p, None)
            shapes.pop(p, None)
    first = Walker(fn, kinds, parsed, assigned, Contract(), {})
    first.block(fn.body, Scope(dict(ints), dict(shapes)), top=True)
    out = Contract()
    walker = Walker(fn, kinds, parsed, assigned, out, first.ranges())
    walker.block(fn.body, Scope(ints, shapes), top=True)
    walker.settle()
    outputs = []
    for value in fn.ret.values:
        node = unparen(value)
        if isinstance(node, cst.Name) and kinds.is_array(node.value):
            shape = walker.final_shapes.get(node.value)
            outputs.append(
                {"ndim": kinds.ndim(node.value), "shape": None if shape is None else [dump(a) for a in shape]}
            )
            if shape is None and mode == "reverse":
                out.complete = False  # a cotangent too short for it is caught by the bounds checks
                out.uncovered.append(f"the shape of the result `{node.value}`")
        else:
            outputs.append({"ndim": 0, "shape": None})
    unique = {json.dumps(f, sort_keys=True): f for f in out.facts}
    return json.dumps(
        {
            "facts": list(unique.values()),
            "complete": out.complete,
            "uncovered": sorted(set(out.uncovered)),
            "sufficient": list({json.dumps(f, sort_keys=True): f for f in out.sufficient}.values()),
            "outputs": outputs,
            "file": parsed.filename,
        },
        sort_keys=True,
    )


def _assignment_counts(fn: CoreFunction, kinds: Kinds) -> Counter:
    """How many statements bind each name as a whole (element writes keep an array's shape; a swap
    of arrays is not counted: `contract_facts.swapped_groups` groups its names, each read needing a
    fact per shape the group has)."""
    counts: Counter = Counter()
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, Assign) and not stmt.writes_element:
            counts[stmt.var] += 1
        elif isinstance(stmt, For):
            counts[stmt.var] += 1
        elif isinstance(stmt, Permute):
            counts.update(t for t in stmt.targets if not kinds.is_array(t))
    return counts
